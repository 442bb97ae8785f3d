"""What every app window does alike: it opens centred on the screen the pointer is on, fitted to that
screen (a 1366x768 laptop included), and where it was left the next time; Ctrl+, opens Settings from
any of them, and Esc closes the secondary ones (Settings and the features' windows). Positions are kept in the
shell state (desktop/shell_state.py), written when a window is hidden."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QCursor, QGuiApplication, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

from desktop.shell_state import ShellState

SETTINGS_SHORTCUT = "Ctrl+,"
MARGIN = 24  # pixels kept free around a window fitted to a small screen


class WindowManners(QObject):
    settings_requested = Signal()

    def __init__(self, state: Callable[[], ShellState], save: Callable[[], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._save = save
        self._kinds: dict[QWidget, str] = {}
        self._closed_by_esc: set[QWidget] = set()
        self._placed: set[QWidget] = set()

    def manage(self, kind: str, widget: QWidget, *, closes_on_esc: bool) -> None:
        """Place and remember `widget` under `kind`; `closes_on_esc` for a secondary window (the chat hides
        itself on Esc, its own way)."""
        self._kinds[widget] = kind
        if closes_on_esc:
            self._closed_by_esc.add(widget)
        widget.installEventFilter(self)
        QShortcut(QKeySequence(SETTINGS_SHORTCUT), widget, self.settings_requested.emit)
        widget.destroyed.connect(lambda: self._forget(widget))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        kind = self._kinds.get(watched)  # type: ignore[call-overload]
        if kind is None or not isinstance(watched, QWidget):
            return False
        if event.type() == QEvent.Type.Show and watched not in self._placed:
            self._placed.add(watched)
            self.place(kind, watched)
        elif event.type() == QEvent.Type.Hide and watched in self._placed:
            self.remember(kind, watched)
        elif (event.type() == QEvent.Type.KeyPress and watched in self._closed_by_esc and isinstance(event, QKeyEvent)
              and event.key() == Qt.Key.Key_Escape and event.modifiers() == Qt.KeyboardModifier.NoModifier):
            watched.close()
            return True
        return False

    def place(self, kind: str, widget: QWidget) -> None:
        """Where it was left if that is still on a screen, else centred on the pointer's screen; fitted."""
        saved = self._state().windows.get(kind)
        if saved:
            rect = QRect(*saved)
            screen = QGuiApplication.screenAt(rect.center())
            if screen is not None:
                widget.setGeometry(_fit(rect, screen.availableGeometry()))
                return
        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        area = screen.availableGeometry()
        rect = QRect(QPoint(0, 0), widget.size())
        rect.moveCenter(area.center())
        widget.setGeometry(_fit(rect, area))

    def remember(self, kind: str, widget: QWidget) -> None:
        g = widget.geometry()
        place = [g.x(), g.y(), g.width(), g.height()]
        state = self._state()
        if state.windows.get(kind) != place:
            state.windows[kind] = place
            self._save()

    def _forget(self, widget: QWidget) -> None:
        self._kinds.pop(widget, None)
        self._placed.discard(widget)
        self._closed_by_esc.discard(widget)


def _fit(rect: QRect, area: QRect) -> QRect:
    """`rect` shrunk about its centre to fit `area` with a margin, then moved inside it."""
    room = area.adjusted(MARGIN, MARGIN, -MARGIN, -MARGIN)
    size = rect.size().boundedTo(QSize(max(room.width(), 200), max(room.height(), 150)))
    fitted = QRect(QPoint(0, 0), size)
    fitted.moveCenter(rect.center())
    fitted.moveLeft(min(max(fitted.left(), area.left()), area.right() - size.width() + 1))
    fitted.moveTop(min(max(fitted.top(), area.top()), area.bottom() - size.height() + 1))
    return fitted
