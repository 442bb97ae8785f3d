"""Memory in the app: a tray entry opening the memory & history viewer (desktop/ui/memory/window.py, one tab
each in this folder), which reads the files, their changes and the archive through the Memory service; a
notification about a Dream change opens the viewer on it; Settings → Personalisation, which edits USER.md and
SOUL.md as custom instructions (desktop/ui/memory/personalisation.py); and the chat header's context gauge, how
full the chat shown is and what fills it (desktop/ui/memory/context_gauge.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.kernel.notices import OpenMemoryChange
from desktop.ui.host import UiFeature, UiHost, bring_to_front

if TYPE_CHECKING:  # the window, the page, the gauge and the service load when they are first opened
    from desktop.ui.memory.context_gauge import ContextGaugePanel
    from desktop.ui.memory.personalisation import PersonalisationPage
    from desktop.ui.memory.window import MemoryWindow

CAPTION = ("Custom instructions: the assistant reads both files with every message you send. Dream may add "
           "to them from your chats; every change, yours and its, is kept in Memory & history → Changes, where it "
           "can be undone.")


def attach_ui(host: UiHost) -> None:
    def build() -> MemoryWindow:
        from desktop.memory import Memory
        from desktop.ui.memory.window import MemoryWindow

        window = MemoryWindow(host.get(Memory), host.bridge)
        window.open_session.connect(lambda key: host.show_chat(key or None))
        return window

    def open_change(target: OpenMemoryChange) -> None:
        from desktop.ui.memory.window import MemoryWindow

        window = host.window("memory")
        if isinstance(window, MemoryWindow):
            window.show_commit(target.rev)
            bring_to_front(window)

    def build_page() -> PersonalisationPage:
        from desktop.memory import Memory
        from desktop.ui.memory.personalisation import PersonalisationPage

        return PersonalisationPage(host.get(Memory), host.bridge)

    def gauge() -> ContextGaugePanel:
        from desktop.memory import Memory
        from desktop.ui.memory.context_gauge import ContextGaugePanel

        return ContextGaugePanel(host.get(Memory), host.bridge)

    host.add_window("memory", build, tray_label="Memory && history")
    host.add_chat_panel(gauge)
    host.add_settings_page("Personalisation", CAPTION, build_page)
    host.on_target(OpenMemoryChange, open_change)


UI_FEATURE = UiFeature("memory", attach_ui)
