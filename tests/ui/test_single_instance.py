"""One app per user and home: later launches hand their request over (real sockets, a real second process)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from desktop.kernel.paths import home
from desktop.ui import single_instance
from desktop.ui.single_instance import InstanceServer, InstanceUnresponsive, send_to_running, server_name
from tests.ui.conftest import until

CLIENT = ("import json, sys\n"
          "from desktop.ui.single_instance import send_to_running\n"
          "print(json.dumps(send_to_running(sys.argv[1], json.loads(sys.argv[2]))))\n")


@pytest.fixture
def runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


async def _launch(name: str, message: dict[str, object]) -> object:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", CLIENT, name, json.dumps(message),
                                                stdout=asyncio.subprocess.PIPE, cwd=str(Path(__file__).parents[2]))
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0
    return json.loads(out)


async def test_a_second_launch_hands_its_request_to_the_running_app(home_dir: Path, runtime_dir: Path) -> None:
    server = InstanceServer(server_name(home()))
    assert server.listen()
    received: list[dict[str, object]] = []
    server.received.connect(received.append)
    try:
        assert await _launch(server.name, {"action": "quick", "text": "what's 2+2?"}) == {"ok": True}
        await until(lambda: received)
        assert received == [{"action": "quick", "text": "what's 2+2?"}]

        server.status = lambda: {"pid": 4242, "hotkey": "Ctrl+Alt+Space via X11 key grab"}
        reply = await _launch(server.name, {"action": "status"})
        assert reply == {"ok": True, "pid": 4242, "hotkey": "Ctrl+Alt+Space via X11 key grab"}
    finally:
        server.close()


async def test_nothing_running_means_this_launch_starts_the_app(home_dir: Path, runtime_dir: Path) -> None:
    assert await _launch(server_name(home()), {"action": "show"}) is None


async def test_only_one_instance_can_listen(home_dir: Path, runtime_dir: Path) -> None:
    first, second = InstanceServer(server_name(home())), InstanceServer(server_name(home()))
    assert first.listen()
    try:
        assert not second.listen()
    finally:
        first.close()


@pytest.mark.skipif(sys.platform == "win32", reason="stale socket files are a Unix matter")
async def test_a_crashed_instance_leaves_no_obstacle(home_dir: Path, runtime_dir: Path) -> None:
    name = server_name(home())
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(name)  # a socket file nobody listens on, as after a crash
    stale.close()
    assert os.path.exists(name)
    server = InstanceServer(name)
    try:
        assert server.listen()
        assert await _launch(name, {"action": "show"}) == {"ok": True}
    finally:
        server.close()


def test_names_are_per_home_and_private(tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NANOBOT_TRAY_HOME", str(tmp_path / "a"))
    a = server_name(home())
    assert server_name(home()) == a
    monkeypatch.setenv("NANOBOT_TRAY_HOME", str(tmp_path / "b"))
    b = server_name(home())
    assert a != b
    if sys.platform.startswith("linux"):
        assert Path(a).parent == runtime_dir


@pytest.mark.skipif(sys.platform == "win32", reason="uses a Unix socket to play a hung instance")
def test_a_hung_instance_gives_a_clear_message(home_dir: Path, runtime_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(single_instance, "REPLY_MS", 300)
    name = server_name(home())
    hung = socket.socket(socket.AF_UNIX)
    hung.bind(name)
    hung.listen(1)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(hung.accept()[0]), daemon=True).start()
    try:
        with pytest.raises(InstanceUnresponsive, match="already running but did not answer"):
            send_to_running(name, {"action": "show"})
    finally:
        for conn in accepted:
            conn.close()
        hung.close()
