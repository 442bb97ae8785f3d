"""Desktop context: what the person has selected, copied or on screen, brought into a question by a hotkey or
the `+` menu — never without one of those actions, and always shown as a chip before it is sent.

This half is Qt-free: the `hotkeys` settings, how text is quoted under the question (quoting.py), whether the
chat's model reads images (vision.py), which window is in front on X11 (x11.py), a screenshot on Wayland
through the desktop portal's dialog (portal.py) and where screenshots are kept (captures.py). Reading the
selection and grabbing the screen need Qt: desktop/ui/context/."""

from __future__ import annotations

from desktop.context.settings import SECTION, HotkeysConfig
from desktop.kernel.host import Feature, Host


class DesktopContext:
    """The feature's service: its settings in force."""

    def __init__(self, host: Host) -> None:
        self._host = host

    @property
    def hotkeys(self) -> HotkeysConfig:
        return self._host.config.section(HotkeysConfig)


FEATURE = Feature("context", DesktopContext, DesktopContext, settings=SECTION)
