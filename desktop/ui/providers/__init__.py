"""The model helper started when the person turns to the app: one of its windows taking the keyboard focus (the
quick prompt the hotkey opens, the chat window, Settings) means a question may be seconds away, and the helper
loads the model library (seconds) while it is typed (desktop/providers/helper.py). Windows of other programs
and the tray menu do not count."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:
    from PySide6.QtGui import QWindow


def attach_ui(host: UiHost) -> None:
    host.on_ready(lambda: _follow_focus(host))


def _follow_focus(host: UiHost) -> None:
    from PySide6.QtGui import QGuiApplication

    from desktop.providers.helper import warm

    config = host.bridge.settings.config

    def focused(window: QWindow | None) -> None:
        if window is not None:
            warm(config.provider.model_idle_exit)

    app = QGuiApplication.instance()
    assert isinstance(app, QGuiApplication)
    app.focusWindowChanged.connect(focused)
    if app.focusWindow() is not None:  # the chat, opened at a first start before the core was ready
        focused(app.focusWindow())


UI_FEATURE = UiFeature("model helper", attach_ui)
