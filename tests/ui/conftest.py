"""Qt tests: every `async def` test here runs on a qasync loop, which is the Qt event loop.

Never call qtbot.wait/waitUntil/waitSignal inside an async test (a nested Qt loop stalls the awaited
task and then hangs teardown); poll with `await until(...)` instead."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytestqt.plugin
import qasync
from PySide6 import QtGui
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QHelpEvent, QTextDocument, QWheelEvent
from PySide6.QtWidgets import QApplication, QToolTip, QWidget

from desktop.core import Core, build_core
from desktop.ui.bridge import CoreBridge

if TYPE_CHECKING:
    from desktop.ui.app import Shell


class _TestLoop(qasync.QEventLoop):
    """The app runs one loop until it quits; a test runs its loop once per fixture and phase, and each run
    ends with qasync processing Qt events once more after it has unset the running loop. Tasks stepped then
    find no running loop, and any of them that asks for it (a thread hop, a subprocess) fails for good.
    Keep this loop the running one for that last pass."""

    def run_forever(self) -> None:
        try:
            super().run_forever()
        finally:
            asyncio.events._set_running_loop(self)

    def run_until_complete(self, future):  # type: ignore[no-untyped-def]
        try:
            return super().run_until_complete(future)
        finally:
            asyncio.events._set_running_loop(None)


def pytest_asyncio_loop_factories(config, item):  # type: ignore[no-untyped-def]
    return {"qasync": lambda: _TestLoop(QApplication.instance() or QApplication([]))}


def _process_events_in_the_loop(process: Callable[[], None] = pytestqt.plugin._process_events) -> None:
    """pytest-qt processes Qt events between a test's phases, outside the loop's run: the qasync loop's
    pending callbacks then step our tasks with no running loop, and any of them that asks for it (a thread
    hop, a subprocess) fails for good. The app never processes events outside its one loop; make the tests
    match that."""
    try:
        loop = asyncio.get_event_loop_policy().get_event_loop()  # pytest-asyncio sets the test's loop there
    except RuntimeError:
        loop = None
    if loop is None or loop.is_closed() or asyncio._get_running_loop() is not None:
        process()
        return
    asyncio.events._set_running_loop(loop)
    try:
        process()
    finally:
        asyncio.events._set_running_loop(None)


pytestqt.plugin._process_events = _process_events_in_the_loop


# A scripted answer that a test stops stalls after its first words for STALL seconds, far longer than a stop may
# take: a stop goes through the chat's queue and saves the partial answer, seconds on a loaded machine (a 4 s bound
# under a 5 s stall failed the stop tests whenever it took longer); STOPPED_WITHIN stays below STALL, so a stop
# that never worked still fails as a stop, not as an answer that came in whole.
STALL = 30.0
STOPPED_WITHIN = 20.0


async def until(predicate: Callable[[], object], timeout: float = 30.0, message: str = "") -> None:
    """Await (on the Qt loop) until predicate() is truthy. The bound is for a hang, not a speed target: a busy CI
    machine runs a test several times slower for stretches (one that takes 15 s here took 61 s there), and a
    model call's first turn starts the model helper, whose litellm import alone takes 3-4 s on a quiet machine."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting: {message or predicate}")
        await asyncio.sleep(0.01)


async def open_chat(bridge: CoreBridge, qtbot: Any, key: str, panels: list[Callable[[], QWidget]]) -> Any:
    """The chat window as the app builds it with `panels` in its header, shown at a usual size on chat `key`,
    once that chat's messages are in."""
    from desktop.ui.chat.window import ChatWindow

    made = ChatWindow(bridge, panels)
    qtbot.addWidget(made)
    made.resize(900, 640)
    made.show()
    made.show_session(key)
    await until(lambda: made.models[key].loaded, message=f"chat {key} loaded")
    return made


def hover_tip(widget: QWidget, at: QPoint | None = None) -> str:
    """Rest the pointer on `widget` (at `at`, its middle by default) as the person would: Qt shows the tooltip,
    laid out as on screen; the words it shows, as the person reads them."""
    at = widget.rect().center() if at is None else at
    QApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, at, widget.mapToGlobal(at)))
    tip = tip_words()
    QToolTip.hideText()
    return tip


def tip_words() -> str:
    """The words of the tooltip shown now, as the person reads them."""
    tip = QToolTip.text()
    words = QTextDocument()
    if QtGui.Qt.mightBeRichText(tip):  # as the tooltip reads it
        words.setHtml(tip)
    else:
        words.setPlainText(tip)
    return words.toPlainText()


def wheel(widget: QWidget, notches: int = -1) -> None:
    """`notches` of the mouse wheel with the pointer over `widget` (negative: down the page)."""
    centre = widget.rect().center()
    QApplication.sendEvent(widget, QWheelEvent(QPointF(centre), QPointF(widget.mapToGlobal(centre)), QPoint(),
                                               QPoint(0, 120 * notches), Qt.MouseButton.NoButton,
                                               Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False))


class Opener(QObject):
    """Stands in for the desktop's opener: what the app hands to QDesktopServices.openUrl arrives here, by Qt's own
    routing (setUrlHandler), for every scheme a test uses, so nothing is opened for real."""

    SCHEMES = ("http", "https", "mailto", "file", "ssh", "vscode", "smb", "javascript", "steam")

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def handle(self, url: QUrl) -> None:
        self.opened.append(url.toString())


@pytest.fixture
def opener() -> Any:
    catcher = Opener()
    for scheme in Opener.SCHEMES:
        QDesktopServices.setUrlHandler(scheme, catcher, "handle")
    yield catcher
    for scheme in Opener.SCHEMES:
        QDesktopServices.unsetUrlHandler(scheme)


@pytest.fixture
async def qt_core(model_config, memory_keyring) -> AsyncIterator[Core]:  # type: ignore[no-untyped-def]
    """A running agent core on the Qt loop, talking to the scripted model server."""
    built = build_core()
    await built.start()
    yield built
    await built.close()


@pytest.fixture
async def bridge(qt_core: Core) -> AsyncIterator[CoreBridge]:
    made = CoreBridge(qt_core)
    yield made
    made.close()


def new_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Shell:
    """A shell with no display, hotkey grab or session bus of the developer's desktop."""
    from desktop.kernel.paths import home
    from desktop.ui.app import Shell
    from desktop.ui.single_instance import InstanceServer, server_name

    for var in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS"):
        monkeypatch.delenv(var, raising=False)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    return Shell(app, home(), InstanceServer(server_name(home())), {"action": "show"}, time.perf_counter())


@pytest.fixture
async def shell(model_config: dict[str, Any], memory_keyring: object, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Shell]:
    """The app running in this process (offscreen, so without a tray host), its core started."""
    made = new_shell(tmp_path, monkeypatch)
    task = asyncio.ensure_future(made.run())
    await until(lambda: made.core is not None and made.core.running, timeout=60, message="the shell to finish starting")
    yield made
    made.quit()
    assert await asyncio.wait_for(task, 30) == 0
    for widget in QApplication.topLevelWidgets():
        widget.close()
