"""`nanobot-tray agent -m`, `dream`, `heartbeat`, `cron`, `mcp` and `--quick` as thin clients of the running app: a
real app (offscreen shell), a real client process and the scripted model over HTTP; the client must load neither
Qt nor litellm."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from desktop.cli import remote
from desktop.kernel.paths import home
from desktop.mcp import McpServers
from desktop.mcp.settings import McpConfig, McpServerConfig
from desktop.memory import Memory
from desktop.reminders import Reminders
from desktop.reminders.jobs import Job, JobStore, render
from desktop.scheduler.schedules import Cron
from desktop.ui.app import Shell
from desktop.ui.single_instance import InstanceServer, server_name
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import RemoteServer
from tests.ui.conftest import until

ROOT = Path(__file__).parents[2]


@asynccontextmanager
async def _running_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Shell]:
    """The tray app, started on this home and its config, with no desktop around it."""
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS"):
        monkeypatch.delenv(var, raising=False)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    server = InstanceServer(server_name(home()))
    assert server.listen()
    made = Shell(app, home(), server, {"action": "show"}, time.perf_counter())
    task = asyncio.ensure_future(made.run())
    await until(lambda: made.core is not None and made.core.running, timeout=60, message="the shell to start")
    yield made
    made.quit()
    assert await asyncio.wait_for(task, 30) == 0
    for widget in QApplication.topLevelWidgets():
        widget.close()


@pytest.fixture
async def shell(model_config: dict[str, Any], memory_keyring: object, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Shell]:
    async with _running_shell(tmp_path, monkeypatch) as made:
        yield made


async def _cli(*argv: str, cwd: Path = ROOT) -> tuple[int, str, str]:
    """The real command in its own process, with -X importtime listing every module it loads on stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-X", "importtime", "-m", "desktop", *argv,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                cwd=str(cwd), env=env)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def _said(stderr: str) -> str:
    return "".join(line + "\n" for line in stderr.splitlines() if not line.startswith("import time:"))


def _heavy(stderr: str) -> set[str]:
    """What the client must never import: the GUI, the model library, the app's core."""
    return {name for name in _imported(stderr)
            if name.split(".")[0] in ("litellm", "PySide6") or name.startswith(("desktop.core", "desktop.agent"))}


async def test_agent_m_is_answered_by_the_running_app_in_its_session(shell: Shell, fake: FakeOpenAI) -> None:
    fake.add({"content": "Hello from the app."})
    code, out, err = await _cli("agent", "-m", "hi from the terminal")
    assert (code, out, _said(err)) == (0, "Hello from the app.\n", "")
    loaded = _imported(err)
    assert "desktop.cli.remote" in loaded
    assert not {name for name in loaded if name.split(".")[0] in ("litellm", "PySide6")}
    assert not any(name.startswith(("desktop.core", "desktop.agent", "desktop.ui")) for name in loaded)

    fake.add({"content": "You said hi."})  # the same session as before: the app remembers the first turn
    code, out, _ = await _cli("agent", "-m", "what did I say?")
    assert (code, out) == (0, "You said hi.\n")
    texts = json.dumps(fake.requests[-1]["messages"])
    assert "hi from the terminal" in texts and "Hello from the app." in texts


async def test_agent_a_attaches_a_file_named_from_the_terminals_folder(shell: Shell, fake: FakeOpenAI,
                                                                        tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "list.txt").write_text("eggs\nflour\n")
    fake.add({"content": "Pancakes."})
    code, out, err = await _cli("agent", "-m", "what can I bake?", "-a", "list.txt", cwd=elsewhere)
    assert (code, out, _said(err)) == (0, "Pancakes.\n", "")
    assert not _heavy(err)  # answered by the app, not in the terminal's process
    said = json.dumps(fake.requests[-1]["messages"][-1])
    assert "eggs\\nflour" in said and "attachments/cli_direct/list.txt" in said
    code, out, err = await _cli("agent", "-m", "and now?", "-a", "nothing.txt", cwd=elsewhere)
    assert code == 2 and "nothing.txt was not found" in _said(err)


async def test_a_failed_turn_in_the_app_fails_the_command(shell: Shell, fake: FakeOpenAI) -> None:
    fake.add({"status": 400, "body": {"error": {"message": "model not found"}}})
    code, out, err = await _cli("agent", "-m", "hi")
    assert code == 1 and out == ""
    assert "error:" in _said(err)


async def test_a_long_turn_keeps_the_client_waiting_and_a_silent_app_is_called_stuck(
        shell: Shell, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("desktop.ui.single_instance.ALIVE_EVERY", 0.2)
    monkeypatch.setattr(remote, "SILENT_LIMIT", 1.0)
    fake.add({"content": "Worth the wait.", "delay": 2.5})  # longer than the client waits for a silent app
    assert await asyncio.to_thread(remote.forward, ["agent", "-m", "slow one"], shell.server.name) == 0
    assert "Worth the wait." in capfd.readouterr().out

    path = Path(shell.server.name).with_name("stuck.sock")  # accepts the command, then never says a word
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    held: list[socket.socket] = []

    def accept_and_go_quiet() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(json.dumps({"protocol": remote.PROTOCOL, "ok": True}).encode() + b"\n")
        held.append(conn)

    threading.Thread(target=accept_and_go_quiet, daemon=True).start()
    with listener:
        assert await asyncio.to_thread(remote.forward, ["agent", "-m", "hello?"], str(path)) == 1
    for conn in held:
        conn.close()
    assert "the running app stopped answering (nothing for 1 s)" in capfd.readouterr().err


async def test_what_needs_this_terminal_stays_in_the_client(shell: Shell) -> None:
    name = shell.server.name
    for argv in (["agent"], ["agent", "--yes", "-m", "x"], ["keys", "list"], ["agent", "-m", "x", "--standalone"]):
        assert await asyncio.to_thread(remote.forward, argv, name) is None, argv


def test_the_socket_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home_dir: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    name = remote.socket_name(home())
    assert name == server_name(home()) and Path(name).parent == runtime
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert remote.socket_path(remote.socket_name(home())) == str(tmp_path / remote.socket_name(home()))


def _one_reply_server(path: Path, reply: dict[str, Any], got: list[bytes]) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            got.append(conn.recv(65536))
            conn.sendall(json.dumps(reply).encode() + b"\n")

    threading.Thread(target=serve, daemon=True).start()
    return listener


@pytest.mark.parametrize("reply", [{"ok": True}, {"protocol": remote.PROTOCOL + 1, "ok": False, "error": "v2"}])
def test_an_app_speaking_another_version_means_running_here(reply: dict[str, Any], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "app.sock"
    got: list[bytes] = []
    with _one_reply_server(path, reply, got):
        assert remote.forward(["agent", "-m", "hi"], str(path)) is None
    assert json.loads(got[0]) == {"action": "run", "protocol": remote.PROTOCOL, "argv": ["agent", "-m", "hi"],
                                  "cwd": os.getcwd()}
    assert "another protocol" in capsys.readouterr().err


def test_a_quick_prompt_refused_for_its_version_is_asked_the_old_way(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "app.sock"
    got: list[bytes] = []
    with _one_reply_server(path, {"protocol": remote.PROTOCOL + 1, "ok": False, "error": "v2"}, got):
        assert not remote.open_quick(["--quick", "hi"], str(path))  # the launch goes on through Qt's socket
    assert json.loads(got[0]) == {"action": "quick", "protocol": remote.PROTOCOL, "text": "hi"}
    assert "another protocol" in capsys.readouterr().err


@pytest.mark.parametrize("reply", [{"ok": True}, {"ok": True, "protocol": remote.PROTOCOL}])
def test_a_quick_prompt_shown_by_an_app_of_either_age_is_done(reply: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "app.sock"
    with _one_reply_server(path, reply, []):
        assert remote.open_quick(["--quick"], str(path))


async def test_quick_shows_the_apps_prompt_and_the_app_refuses_another_version(shell: Shell) -> None:
    code, out, err = await _cli("--quick", "what's 2+2?")
    assert (code, out, _said(err)) == (0, "", "")
    assert not _heavy(err)
    quick = shell.window("quick")
    assert quick is not None
    await until(lambda: quick.isVisible(), message="the quick prompt to show")
    assert quick.input.text() == "what's 2+2?"  # type: ignore[attr-defined]
    quick.hide()

    opened = await asyncio.to_thread(remote._request, shell.server.name,
                                     {"action": "quick", "protocol": remote.PROTOCOL + 1, "text": "x"})
    assert opened is not None
    sock, lines = opened
    with sock:
        reply = await asyncio.to_thread(next, lines, {})
    assert reply["ok"] is False and reply["protocol"] == remote.PROTOCOL
    await asyncio.sleep(0.2)
    assert not quick.isVisible()


async def test_dream_runs_in_the_app_on_its_memory(shell: Shell, fake: FakeOpenAI) -> None:
    assert shell.core is not None
    shell.core.get(Memory).store.append_history("desktop:abc", "Sam said their name.")
    fake.add({"content": "[USER] Name is Sam"},
             {"tool_calls": [{"name": "edit_file", "arguments": {"path": "USER.md", "old_text": "- Name:",
                                                                 "new_text": "- Name: Sam"}}]},
             {"content": "Updated USER.md."})
    code, out, err = await _cli("dream")
    assert _said(err) == "" and code == 0
    assert out.startswith("Dream: reviewed 1 history entries and updated USER.md (change ")
    assert out.endswith("\n  [USER] Name is Sam\n")
    assert not _heavy(err)
    assert "- Name: Sam" in (shell.core.workspace / "USER.md").read_text()
    assert not shell.core.get(Memory).store.has_unprocessed()  # the app's own cursor moved: its timer won't redo it


async def test_heartbeat_runs_in_the_app_in_its_heartbeat_chat(shell: Shell, fake: FakeOpenAI) -> None:
    assert shell.core is not None
    (shell.core.workspace / "HEARTBEAT.md").write_text("## Active Tasks\n- Check the build\n", encoding="utf-8")
    fake.add({"content": "The build is red."})
    code, out, err = await _cli("heartbeat")
    assert (code, out, _said(err)) == (0, "The build is red.\n", "")
    assert not _heavy(err)
    assert len(fake.requests) == 1 and "Check the build" in json.dumps(fake.requests[0]["messages"])


async def test_cron_remove_deletes_the_job_from_the_apps_own_list(
        model_config: dict[str, Any], home_dir: Path, memory_keyring: object, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    store = JobStore(home_dir / "data" / "state")
    store.write(render([Job("a1b2c3", "desktop:plans", "Remind me to call Sam", "Call Sam", Cron("0 9 * * *", "UTC"),
                            now, now + timedelta(days=1)),
                        Job("d4e5f6", "quick:news", "Summarise the news", "News", Cron("30 8 * * 1", "UTC"), now,
                            now + timedelta(days=2))]))
    async with _running_shell(tmp_path, monkeypatch) as running:
        assert running.core is not None
        assert [job.id for job in running.core.get(Reminders).jobs] == ["a1b2c3", "d4e5f6"]
        code, out, err = await _cli("cron", "remove", "d4e5f6")
        assert (code, out, _said(err)) == (0, "Removed d4e5f6 “News”.\n", "")
        assert not _heavy(err)
        assert [job.id for job in running.core.get(Reminders).jobs] == ["a1b2c3"]  # the app's timer won't run it
        assert [job.id for job in store.load()] == ["a1b2c3"]
        code, _, err = await _cli("cron", "remove", "d4e5f6")
        assert code == 1 and "no scheduled job with id 'd4e5f6' (ids: a1b2c3)" in _said(err)


def test_nothing_running_means_running_here(tmp_path: Path) -> None:
    assert remote.forward(["agent", "-m", "hi"], str(tmp_path / "nobody.sock")) is None


async def test_mcp_list_and_import_use_the_apps_own_servers(shell: Shell, tmp_path: Path) -> None:
    server = str(ROOT / "tests" / "mcp" / "server.py")
    claude = tmp_path / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": {"ours": {"command": sys.executable, "args": [server]}}}))
    code, out, err = await _cli("mcp", "import", str(claude))
    assert (code, out, _said(err)) == (0, f"added ours: {sys.executable} {server}\n", "")
    assert shell.core is not None
    await until(lambda: "connected" in shell.core.get(McpServers).states().get("ours", ""), timeout=60,
                message="the app connected the imported server")  # its settings writer told its servers
    code, out, err = await _cli("mcp", "list")
    assert code == 0 and out.startswith("ours: connected, ")
    assert not {name for name in _imported(err) if name.split(".")[0] in ("litellm", "PySide6", "mcp")}


async def test_mcp_login_and_logout_run_in_the_app_whose_connection_takes_them_at_once(
        shell: Shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    oauth = RemoteServer("--http", None, ("--oauth", "60")).start()
    try:
        # the app's browser: curl, following the consent page's redirects back to the app's loopback page
        monkeypatch.setenv("BROWSER", f"{shutil.which('curl')} -sSL -o /dev/null %s")
        assert shell.core is not None
        servers = shell.core.get(McpServers)
        await shell.core.settings.update(lambda c: c.section(McpConfig).servers.update(
            remote=McpServerConfig(url=oauth.url, timeout=10)))
        await until(lambda: "needs sign-in" in servers.states().get("remote", ""), timeout=60,
                    message="the server to want a sign-in")
        code, out, err = await _cli("mcp", "login", "remote")
        assert code == 0, _said(err)
        assert out.startswith("Sign in to remote in your browser.") and out.endswith("Signed in to remote.\n")
        await until(lambda: servers.states()["remote"].startswith("connected"), timeout=60,
                    message="the app's connection to use the sign-in")
        code, out, err = await _cli("mcp", "logout", "remote")
        assert (code, out) == (0, "Signed out of remote.\n")
        await until(lambda: "needs sign-in" in servers.states()["remote"], timeout=60, message="signed out")
    finally:
        oauth.stop()
