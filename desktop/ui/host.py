"""What a feature's Qt half receives: the shell's extension surface on one page.

A feature's UI is a package `desktop/ui/<feature>/` with one `UI_FEATURE = UiFeature(name, attach_ui)`; the
shell (desktop/ui/app.py) walks its UI_FEATURES list when it starts, before the core exists, so the tray menu
is complete from the first moment. `attach_ui(host)` only registers: windows are built (and their modules
imported) the first time they are shown, and they find their feature's service then, with `host.get`.
Conversation things (send, chats, settings, questions) go through `host.bridge`; a feature's own things go
to its own service. Whatever the person should hear about goes through `host.notify`, one way for all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from desktop.kernel.notices import Notice, Target
    from desktop.ui.bridge import CoreBridge
    from desktop.ui.chat.panel import ChatPanel

S = TypeVar("S")
T = TypeVar("T", bound="Target")


class UiHost(Protocol):
    @property
    def bridge(self) -> CoreBridge: ...  # the conversation door; usable once the core is built

    def get(self, service: type[S]) -> S: ...  # a feature's service (only once the core is built)

    def add_window(self, kind: str, build: Callable[[], QWidget], tray_label: str | None = None) -> None:
        """A secondary window (placed, remembered, closed by Esc), built on first use; `tray_label` adds a tray
        menu entry that opens it."""

    def add_settings_page(self, title: str, caption: str, build: Callable[[], QWidget]) -> None:
        """A page of the Settings window (named in its list on the left), built with it."""

    def add_chat_panel(self, build: Callable[[], ChatPanel]) -> None:
        """A strip in the chat window above the composer, built with the window."""

    def on_target(self, target: type[T], open_target: Callable[[T], None]) -> None:
        """What a click on a notification aimed at `target` opens."""

    def on_ready(self, ready: Callable[[], None]) -> None:
        """Call `ready()` once the core is built (`bridge` and `get` work from then on)."""

    def notify(self, note: Notice) -> None:
        """Tell the person: a desktop notification, held by Do not disturb, grouped with others that come at
        once, its click opening `note.target`."""

    def in_front(self, session_key: str) -> bool: ...  # that chat is what the person is looking at now

    def window(self, kind: str) -> QWidget | None: ...  # the window of this kind, built on first use

    def show_chat(self, session: str | None = None, text: str = "") -> None: ...  # bring the chat up


@dataclass(frozen=True)
class UiFeature:
    """A feature's Qt half as the shell sees it."""

    name: str
    attach_ui: Callable[[UiHost], None]


def bring_to_front(widget: QWidget) -> None:
    """Show `widget` raised and focused, un-minimised."""
    if widget.isMinimized():
        widget.showNormal()
    widget.show()
    widget.raise_()
    widget.activateWindow()
