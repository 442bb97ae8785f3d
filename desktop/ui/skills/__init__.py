"""Skills in the app: a tray entry opening the skills manager (desktop/ui/skills/window.py and its parts in
this folder), which finds the skills through the Skills service."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:  # the window loads when it is first opened
    from desktop.ui.skills.window import SkillsWindow


def attach_ui(host: UiHost) -> None:
    def build() -> SkillsWindow:
        from desktop.skills import Skills
        from desktop.ui.skills.window import SkillsWindow

        return SkillsWindow(host.get(Skills), host.bridge)

    host.add_window("skills", build, tray_label="Skills")


UI_FEATURE = UiFeature("skills", attach_ui)
