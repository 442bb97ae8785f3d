"""Settings' MCP servers page on a running core with real MCP servers (our FastMCP test server over stdio):
live states, add, edit, switch off, trust, remove, Test, View log and the import from Claude Desktop."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QFileDialog, QLabel, QLineEdit, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from desktop.mcp import McpServers
from desktop.mcp.manage import status_of
from desktop.mcp.settings import McpConfig, McpServerConfig
from desktop.ui.bridge import CoreBridge
from desktop.ui.mcp import CAPTION
from desktop.ui.mcp.page import LogDialog, McpServersPage, ServerDialog
from desktop.ui.settings import SettingsWindow
from tests.conftest import write_config
from tests.mcp.conftest import FAST, SERVER, RemoteServer, http_server, remote_servers, stdio_server
from tests.mcp.test_oauth import Browser
from tests.memkeyring import MemoryKeyring
from tests.pipes import watched_pipe
from tests.ui.conftest import until

__all__ = ["http_server", "remote_servers"]  # the fixtures, used here too
CONNECT = 60  # seconds: the first connect imports the MCP SDK, slow on a loaded machine


@pytest.fixture
def model_config(model_config: dict[str, Any], home_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The scripted model plus four servers: ours, one whose program does not exist, one whose program is in the
    workspace (refused), and one switched off."""
    monkeypatch.setattr("desktop.mcp.connection.BACKOFF", FAST)
    planted = home_dir / "workspace" / "server.sh"
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    planted.chmod(0o755)
    write_config(home_dir, **model_config, mcp={"servers": {
        "test": stdio_server(), "broken": {"command": "/nonexistent/mcp-server"},
        "planted": {"command": str(planted)}, "spare": stdio_server(enabled=False)}})
    return model_config


async def opened(qtbot: QtBot, bridge: CoreBridge) -> McpServersPage:
    window = SettingsWindow(bridge, [("MCP servers", CAPTION, lambda: McpServersPage(bridge.core.get(McpServers), bridge))])
    qtbot.addWidget(window)
    window.resize(700, 640)
    window.show()
    page = window.findChild(McpServersPage)
    assert page is not None
    window.tabs.setCurrentIndex(window.tabs.indexOf(page.parentWidget()))
    await until(lambda: len(page.rows) == 4, message="servers listed")
    return page


def saved_servers(home_dir: Path) -> dict[str, Any]:
    return yaml.safe_load((home_dir / "config.yaml").read_text(encoding="utf-8"))["mcp"]["servers"]


def saved_config(home_dir: Path, name: str) -> McpServerConfig:
    return McpServerConfig(**saved_servers(home_dir)[name])


def shown(parent: QWidget, kind: type) -> Any:
    found = [w for w in parent.findChildren(kind) if w.isVisible()]
    return found[0] if found else None


async def answer(page: McpServersPage, button: str) -> None:
    await until(lambda: shown(page, QMessageBox), message="the question is asked")
    box = shown(page, QMessageBox)
    next(b for b in box.buttons() if b.text() == button).click()


async def test_servers_show_their_live_state_and_test_and_log_work(qtbot: QtBot, bridge: CoreBridge) -> None:
    page = await opened(qtbot, bridge)
    assert list(page.rows) == ["broken", "planted", "spare", "test"]  # in the file's order
    test, broken, spare = page.rows["test"], page.rows["broken"], page.rows["spare"]
    await until(lambda: test.state.text().startswith("Connected"), timeout=CONNECT, message="test connected")
    assert test.state.text() == "Connected · 11 tools" and not test.error.isVisible()
    assert "#2f9e55" in test.dot.styleSheet()
    await until(lambda: broken.error.isVisible(), timeout=CONNECT, message="broken failed")
    assert "command not found: /nonexistent/mcp-server" in broken.error.text()
    assert "#d9463e" in broken.dot.styleSheet() or "#d19a00" in broken.dot.styleSheet()  # failed, or retrying
    assert spare.state.text() == "Off" and not spare.enabled.isChecked()
    assert SERVER in test.command.text()
    planted = page.rows["planted"]
    await until(lambda: planted.state.text() == "Refused", timeout=CONNECT, message="planted refused")
    assert "#d9463e" in planted.dot.styleSheet()
    assert planted.error.text().startswith("Not started: the program") and "in the workspace" in planted.error.text()

    spare.test_button.click()  # a server that is off can be tried
    await until(lambda: spare.result.text().startswith("Works"), timeout=CONNECT, message="spare tested")
    assert "11 tools: echo, fail, slow" in spare.result.text()
    assert status_of(bridge.core.get(McpServers), "spare").state == "disabled"  # the test did not switch it on
    broken.test_button.click()
    await until(lambda: broken.result.text().startswith("Does not work"), timeout=CONNECT)
    assert "command not found" in broken.result.text()

    test.log_button.click()
    await until(lambda: shown(test, LogDialog), message="log shown")
    log = shown(test, LogDialog)
    assert "testserver: started" in log.text.toPlainText()
    log.reject()


async def test_add_edit_switch_off_trust_and_remove(qtbot: QtBot, bridge: CoreBridge, home_dir: Path,
                                                   http_server: str) -> None:
    page = await opened(qtbot, bridge)
    core = bridge.core
    await until(lambda: status_of(bridge.core.get(McpServers), "test").state == "connected", timeout=CONNECT, message="test connects")
    running = core.get(McpServers).servers["test"]

    page.add_button.click()
    await until(lambda: shown(page, ServerDialog), message="form open")
    form = shown(page, ServerDialog)
    form.name.setText("test")
    form.command.setText(shlex.join([sys.executable, SERVER]))
    form.save_button.click()
    await until(lambda: form.problem.isVisible())
    assert "already" in form.problem.text()  # names are unique
    form.name.setText("second")
    form.save_button.click()
    await until(lambda: "second" in page.rows, message="added server listed")
    assert saved_servers(home_dir)["second"]["command"] == sys.executable
    assert saved_servers(home_dir)["second"]["args"] == [SERVER]
    second = page.rows["second"]
    await until(lambda: second.state.text() == "Connected · 11 tools", timeout=CONNECT, message="second connects")
    assert "mcp_second_echo" in core.tools.names
    assert core.get(McpServers).servers["test"] is running  # the others were left alone

    second.edit_button.click()
    await until(lambda: shown(page, ServerDialog), message="edit form open")
    form = shown(page, ServerDialog)
    assert form.name.text() == "second" and SERVER in form.command.text()
    form.address.setChecked(True)
    form.url.setText(http_server)  # the same server over streamable HTTP
    form.save_button.click()
    await until(lambda: saved_servers(home_dir)["second"]["url"] == http_server)
    assert saved_servers(home_dir)["second"]["command"] is None
    await until(lambda: getattr(core.get(McpServers).servers.get("second"), "config", None) == saved_config(home_dir, "second"),
                message="second restarted")
    await until(lambda: second.state.text() == "Connected · 11 tools", timeout=CONNECT,
                message="second connects by its address")
    # the row's address comes from config.yaml read again after the save, a path of its own beside the status
    await until(lambda: second.command.text() == http_server, message="the row shows its address")

    test = page.rows["test"]
    test.enabled.click()
    await until(lambda: test.state.text() == "Off", message="switched off")
    assert saved_servers(home_dir)["test"]["enabled"] is False
    assert "test" not in core.get(McpServers).servers and "mcp_test_echo" not in core.tools.names
    test.trusted.click()
    await until(lambda: core.config.section(McpConfig).servers["test"].trusted, message="trusted")
    assert saved_servers(home_dir)["test"]["trusted"] is True

    second.remove_button.click()
    await answer(page, "Cancel")
    assert "second" in saved_servers(home_dir)
    second.remove_button.click()
    await answer(page, "Remove")
    await until(lambda: "second" not in page.rows, message="removed from the list")
    assert "second" not in saved_servers(home_dir) and "second" not in core.get(McpServers).servers


async def test_import_from_claude_desktop(qtbot: QtBot, bridge: CoreBridge, home_dir: Path) -> None:
    claude = Path.home() / ".config" / "Claude" / "claude_desktop_config.json"  # HOME is the test's own
    page = await opened(qtbot, bridge)
    assert not page.import_button.isVisible()  # Claude Desktop is not installed
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps({"mcpServers": {
        "imported": {"command": sys.executable, "args": [SERVER]},
        "test": {"command": "something-else"},
        "odd": {"args": ["x"]}}}), encoding="utf-8")
    await page.reload()
    assert page.import_button.isVisible()
    page.import_button.click()
    await until(lambda: shown(page, QMessageBox), message="the preview is shown")
    preview = shown(page, QMessageBox).text()
    assert preview.startswith("From Claude Desktop / Cursor's claude_desktop_config.json:\n\n"
                              f"will add imported: {shlex.join([sys.executable, SERVER])}\n"
                              "will skip test: a server of that name is already configured\n")
    await answer(page, "Add 1 server")
    await until(lambda: page.message.isVisible(), message="import reported")
    said = page.message.text()
    assert said.startswith("Added imported.") and "test (a server of that name is already configured)" in said
    assert "odd (needs either 'command'" in said
    assert saved_servers(home_dir)["test"]["command"] == sys.executable  # never overwritten
    await until(lambda: "imported" in page.rows, message="imported server listed")
    await until(lambda: page.rows["imported"].state.text().startswith("Connected"), timeout=CONNECT)


async def test_import_from_any_file_and_add_with_environment_and_headers_keeps_secrets_in_the_keyring(
        qtbot: QtBot, bridge: CoreBridge, home_dir: Path, memory_keyring: MemoryKeyring, tmp_path: Path) -> None:
    page = await opened(qtbot, bridge)
    assert page.import_file_button.isVisible() and not page.import_button.isVisible()  # no Claude Desktop here
    Path.home().mkdir(exist_ok=True)  # HOME is the test's own
    listed = tmp_path / "cursor-mcp.json"
    listed.write_text(json.dumps({"mcpServers": {"gh": {"command": sys.executable, "args": [SERVER],
                                                        "env": {"GITHUB_TOKEN": "ghp_imported", "LOG": "info"}}}}),
                      encoding="utf-8")
    page.import_file_button.click()
    await until(lambda: shown(page, QFileDialog), message="file dialog open")
    chooser = shown(page, QFileDialog)
    assert Path(chooser.directory().absolutePath()) == Path.home()
    name_field = chooser.findChild(QLineEdit, "fileNameEdit")
    name_field.setText(str(listed))  # what a person types or picks
    chooser.accept()
    await answer(page, "Add 1 server")
    await until(lambda: page.message.isVisible(), message="import reported")
    assert page.message.text() == "Added gh."
    await until(lambda: "gh" in page.rows, message="imported server listed")
    assert saved_servers(home_dir)["gh"]["env"] == {"GITHUB_TOKEN": "keyring:mcp.gh.GITHUB_TOKEN", "LOG": "info"}
    assert memory_keyring.store[("nanobot-tray", "mcp.gh.GITHUB_TOKEN")] == "ghp_imported"
    await until(lambda: page.rows["gh"].state.text().startswith("Connected"), timeout=CONNECT)  # the key was found

    page.add_button.click()
    await until(lambda: shown(page, ServerDialog), message="form open")
    form = shown(page, ServerDialog)
    form.name.setText("remote")
    form.address.setChecked(True)
    form.url.setText("https://mcp.example.com/mcp")
    form.headers.setPlainText("Authorization Bearer oops")
    form.save_button.click()
    await until(lambda: form.problem.isVisible())
    assert "Line 1 of the headers" in form.problem.text()
    form.headers.setPlainText("Authorization: Bearer sk-remote-1\nX-Region: eu")
    form.grab().save(str(tmp_path / "mcp-add-dialog.png"))
    form.save_button.click()
    await until(lambda: "remote" in page.rows, message="added server listed")
    saved = saved_servers(home_dir)["remote"]
    assert saved["headers"] == {"Authorization": "keyring:mcp.remote.Authorization", "X-Region": "eu"}
    assert memory_keyring.store[("nanobot-tray", "mcp.remote.Authorization")] == "Bearer sk-remote-1"
    assert "sk-remote-1" not in (home_dir / "config.yaml").read_text(encoding="utf-8")


async def test_esc_in_a_server_form_with_something_typed_asks_before_dropping_it(qtbot: QtBot,
                                                                                 bridge: CoreBridge) -> None:
    """A command and a token typed into Add server, then Esc (or Cancel): asked first, and Cancel there keeps the
    form as typed; an untouched form closes at once."""
    page = await opened(qtbot, bridge)
    page.add_button.click()
    await until(lambda: shown(page, ServerDialog), message="form open")
    form = shown(page, ServerDialog)
    form.name.setText("github")
    form.command.setText("npx -y @modelcontextprotocol/server-github")
    form.env.setPlainText("GITHUB_TOKEN=ghp_typed_here")
    qtbot.keyClick(form.name, Qt.Key.Key_Escape)
    await answer(page, "Cancel")
    await until(lambda: not form.findChildren(QMessageBox), message="the question gone")
    assert form.isVisible() and form.env.toPlainText() == "GITHUB_TOKEN=ghp_typed_here"
    qtbot.keyClick(form.name, Qt.Key.Key_Escape)
    await answer(page, "Discard")
    await until(lambda: shown(page, ServerDialog) is None, message="the form closed")

    page.add_button.click()
    await until(lambda: shown(page, ServerDialog), message="form open again")
    untouched = shown(page, ServerDialog)
    qtbot.keyClick(untouched.name, Qt.Key.Key_Escape)
    await until(lambda: shown(page, ServerDialog) is None, message="an untouched form closes at once")
    assert shown(page, QMessageBox) is None


async def test_the_startup_wait_is_set_here_and_saved_at_once(qtbot: QtBot, bridge: CoreBridge, home_dir: Path) -> None:
    page = await opened(qtbot, bridge)
    box = page.startup_wait.widget
    assert isinstance(box, QDoubleSpinBox) and box.isVisible()
    await until(lambda: box.value() == 10.0, message="the default shown")
    assert box.toolTip().startswith("Seconds a turn waits for servers still connecting")
    assert any(label.text() == box.toolTip() and label.isVisible() for label in page.findChildren(QLabel))  # its help
    box.setValue(3.5)
    await until(lambda: bridge.settings.config.section(McpConfig).startup_wait == 3.5, message="saved")
    assert yaml.safe_load((home_dir / "config.yaml").read_text(encoding="utf-8"))["mcp"]["startup_wait"] == 3.5
    box.setValue(0)
    assert box.text() == "No wait"
    await until(lambda: bridge.settings.config.section(McpConfig).startup_wait == 0, message="no wait saved")
    await bridge.settings.update(lambda config: setattr(config.section(McpConfig), "startup_wait", 42.0))
    await until(lambda: box.value() == 42.0, message="a change made elsewhere shown")


async def test_import_of_vscode_and_goose_files_shows_what_it_adds_before_writing(
        qtbot: QtBot, bridge: CoreBridge, home_dir: Path, tmp_path: Path) -> None:
    page = await opened(qtbot, bridge)
    before = (home_dir / "config.yaml").read_text(encoding="utf-8")
    vscode = tmp_path / "mcp.json"
    vscode.write_text('{\n  // from VS Code\n  "servers": {\n'
                      f'    "code": {{"type": "stdio", "command": {json.dumps(sys.executable)}, "args": [{json.dumps(SERVER)}]}},\n'
                      '    "gh": {"command": "docker", "env": {"GITHUB_TOKEN": "${input:gh}"}},\n  },\n}\n', encoding="utf-8")
    spawned = asyncio.ensure_future(page.import_from(vscode))
    await until(lambda: shown(page, QMessageBox), message="the preview is shown")
    assert shown(page, QMessageBox).text() == (
        f"From VS Code's mcp.json:\n\nwill add code: {shlex.join([sys.executable, SERVER])}\n"
        "will skip gh: uses ${input:gh}, which VS Code fills in itself; add it with Add server… and type the value "
        "there\n\nAdded servers connect at once.")
    await answer(page, "Cancel")
    await spawned
    assert (home_dir / "config.yaml").read_text(encoding="utf-8") == before and "code" not in page.rows

    goose = tmp_path / "config.yaml"
    goose.write_text(f"extensions:\n  developer: {{type: builtin, enabled: true}}\n"
                     f"  goosed:\n    type: stdio\n    cmd: {json.dumps(sys.executable)}\n    args: [{json.dumps(SERVER)}]\n"
                     "    env_keys: [API_KEY]\n", encoding="utf-8")
    spawned = asyncio.ensure_future(page.import_from(goose))
    await answer(page, "Add 1 server")
    await spawned
    assert page.message.text() == ("Added goosed (needs API_KEY, which Goose keeps in its own secret store: add the "
                                   "value with Edit…). Skipped developer (built into Goose, not a server of its own).")
    await until(lambda: "goosed" in page.rows, message="imported server listed")
    await until(lambda: page.rows["goosed"].state.text().startswith("Connected"), timeout=CONNECT)

    nothing = tmp_path / "only-builtins.yaml"
    nothing.write_text("extensions:\n  developer: {type: builtin}\n", encoding="utf-8")
    await page.import_from(nothing)
    assert page.message.text() == "Nothing to import. Skipped developer (built into Goose, not a server of its own)."


async def test_sign_in_and_out_of_a_server_that_wants_oauth(qtbot: QtBot, bridge: CoreBridge,
                                                            memory_keyring: MemoryKeyring,
                                                            remote_servers: Callable[..., RemoteServer]) -> None:
    oauth = remote_servers("--http", None, "--oauth", "60")
    page = await opened(qtbot, bridge)
    browser = Browser()
    page.open_browser = browser.open  # type: ignore[method-assign]  # the person's browser, following redirects
    await bridge.settings.update(lambda config: config.section(McpConfig).servers.__setitem__(
        "remote", McpServerConfig(url=oauth.url, timeout=10)))
    await until(lambda: "remote" in page.rows, message="listed")
    row = page.rows["remote"]
    await until(lambda: row.sign_in_button.isVisible(), timeout=CONNECT, message="sign-in offered")
    assert row.sign_in_state.text() == "Not signed in" and row.sign_in_button.text() == "Sign in…"
    assert not page.rows["test"].sign_in_button.isVisible()  # a program, nothing to sign in to
    row.sign_in_button.click()
    await until(lambda: row.state.text().startswith("Connected"), timeout=CONNECT, message="connected once signed in")
    await until(lambda: row.sign_in_state.text() == "Signed in", message="signed in shown")
    assert row.sign_in_button.text() == "Sign out" and row.result.text() == "Signed in."
    assert len(browser.opened) == 1
    row.sign_in_button.click()
    await until(lambda: row.sign_in_state.text() == "Not signed in", message="signed out shown")
    await until(lambda: "needs sign-in" in row.error.text(), timeout=CONNECT, message="wants a sign-in again")


async def test_a_tool_name_a_server_gives_that_spells_markup_shows_as_words_and_loads_no_file(
        qtbot: QtBot, bridge: CoreBridge, tmp_path: Path) -> None:
    """An MCP server names its own tools: one named <img src="/a/pipe"> was read as markup where Test lists the
    tools, and Qt read the file it named as the list was shown; a named pipe froze the app for good."""
    page = await opened(qtbot, bridge)
    pipe = tmp_path / "pipe"
    raw = str(Path(__file__).parents[2] / "mcp" / "raw_server.py")
    for name, tool in (("lower", f'<img src="{pipe}">'), ("upper", f"<IMG SRC='{pipe}'>")):
        script = tmp_path / f"{name}.py"  # the server's command line stays the person's own plain words
        script.write_text(f"import runpy, sys\nsys.argv[1:] = [{tool!r}]\nrunpy.run_path({raw!r}, run_name='__main__')\n")
        server = McpServerConfig(command=sys.executable, args=[str(script)], enabled=False, timeout=30)
        await bridge.core.settings.update(
            lambda config, n=name, s=server: config.section(McpConfig).servers.__setitem__(n, s))
    await until(lambda: {"lower", "upper"} <= set(page.rows), message="the servers listed")
    with watched_pipe(pipe) as reads:
        for name in ("lower", "upper"):
            row = page.rows[name]
            row.test_button.click()
            await until(lambda r=row: r.result.text().startswith("Works"), timeout=CONNECT, message=f"{name} tested")
            page.window().grab()  # laid out and painted, as on screen
    assert page.rows["lower"].result.text() == f'Works. 1 tools: <img src="{pipe}">'
    assert page.rows["upper"].result.text() == f"Works. 1 tools: <IMG SRC='{pipe}'>"
    assert reads == [], "the page read the pipe a tool's name pointed at"


async def test_a_servers_error_that_spells_markup_shows_as_words_and_loads_no_file(
        qtbot: QtBot, bridge: CoreBridge, tmp_path: Path) -> None:
    """A server that will not start says why in its own words, shown as the row's last error: words spelling
    <img src="/a/pipe"> were read as markup there, and Qt read the file they named as the line was shown (a named
    pipe froze the app for good). The line shows the words."""
    page = await opened(qtbot, bridge)
    pipe = tmp_path / "pipe"
    said = {"lower": f'cannot start: <img src="{pipe}">', "upper": f"cannot start: <IMG SRC='{pipe}'>"}
    with watched_pipe(pipe) as reads:
        for name, why in said.items():
            script = tmp_path / f"{name}.py"  # a server that answers the first request with an error, then waits
            script.write_text("import json, sys\nask = json.loads(sys.stdin.readline())\n"
                              "print(json.dumps({'jsonrpc': '2.0', 'id': ask['id'], "
                              f"'error': {{'code': -32603, 'message': {why!r}}}}}), flush=True)\nsys.stdin.read()\n")
            server = McpServerConfig(command=sys.executable, args=[str(script)], timeout=30)
            await bridge.core.settings.update(
                lambda config, n=name, s=server: config.section(McpConfig).servers.__setitem__(n, s))
        await until(lambda: {"lower", "upper"} <= set(page.rows), message="the servers listed")
        for name, why in said.items():
            row = page.rows[name]
            await until(lambda r=row, w=why: w in r.error.text(), timeout=CONNECT, message=f"{name} failed")
        page.window().grab()  # laid out and painted, as on screen
        errors = {name: page.rows[name].error.text() for name in said}
        for name in said:
            page.rows[name].error.hide()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert errors == {name: f"Last error: {why}" for name, why in said.items()}
    assert reads == [], "the page read the pipe a server's error named"



async def test_removing_a_server_named_as_markup_asks_in_words_and_loads_no_file(
        qtbot: QtBot, bridge: CoreBridge, tmp_path: Path) -> None:
    """Remove asks first, naming the server as it is named, and names come from files of other programs (an
    import): one spelling <img src="/a/pipe"> was read as markup by the question, and Qt read the file it named."""
    page = await opened(qtbot, bridge)
    pipe = tmp_path / "pipe"
    names = [f'<img src="{pipe}">', f"<IMG SRC='{pipe}'>"]
    for name in names:
        await bridge.core.settings.update(lambda config, n=name: config.section(McpConfig).servers.__setitem__(
            n, McpServerConfig(command="true", enabled=False)))
    await until(lambda: set(names) <= set(page.rows), message="the servers listed")
    asked = []
    with watched_pipe(pipe) as reads:
        for name in names:
            spawned = asyncio.ensure_future(page.remove(name))
            await until(lambda: shown(page, QMessageBox), message="the question is shown")
            question = shown(page, QMessageBox)
            question.grab()  # laid out and painted, as on screen
            asked.append(question.text())
            await answer(page, "Cancel")
            await spawned
    assert [words.split("?")[0] for words in asked] == [f"Remove the MCP server “{name}”" for name in names]
    assert reads == [], "the question read the pipe a server's name pointed at"
