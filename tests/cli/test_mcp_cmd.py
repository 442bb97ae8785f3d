"""`nanobot-tray mcp` and doctor's MCP line, run as real subprocesses against real MCP servers."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from tests.cli.in_process import run_main
from tests.cli.test_cli import run_cli
from tests.conftest import write_config
from tests.mcp.conftest import SERVER, RemoteServer
from tests.memkeyring import MemoryKeyring


def side_by_side(home: Path, *commands: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
    """`run_cli` for each command, all at once: each is its own process and none changes the config, so the
    test waits for the slowest instead of the sum (these wait on servers, not on the CPU)."""
    with ThreadPoolExecutor(len(commands)) as pool:
        return list(pool.map(lambda args: run_cli(home, *args), commands))


def servers(home: Path) -> dict[str, dict[str, object]]:
    return yaml.safe_load((home / "config.yaml").read_text())["mcp"]["servers"]


def test_list_test_and_doctor_show_each_servers_state(tmp_path: Path) -> None:
    write_config(tmp_path, mcp={"servers": {
        "ours": {"command": sys.executable, "args": [SERVER], "timeout": 10},
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"], "tools": ["get_current_time"]},
        "ghost": {"command": "/nonexistent/mcp-ghost"},
        "off": {"url": "http://127.0.0.1:9/mcp", "enabled": False}}})
    listed = run_cli(tmp_path, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == ["ghost: failed: command not found: /nonexistent/mcp-ghost",
                                          "off: disabled", "ours: connected, 11 tools, 2 prompts, 3 resources",
                                          "time: connected, 1 tool, 0 prompts, 0 resources"]
    tested = run_cli(tmp_path, "mcp", "test", "time")
    assert tested.returncode == 0, tested.stderr
    assert tested.stdout.startswith("time: connected, 1 tool, 0 prompts, 0 resources\n  get_current_time — ")
    ours = run_cli(tmp_path, "mcp", "test", "ours").stdout.splitlines()
    assert ours[0] == "ours: connected, 11 tools, 2 prompts, 3 resources"
    assert ["  prompt /ours:greet name — Greet someone.",
            "  prompt /ours:review topic audience [tone] — Review a topic for an audience.", "  resource notes://readme — The server's notes, written by a stranger.",
            "  resource notes://big — A long text.", "  resource images://dot.png — A tiny picture.",
            "  resource notes://day/{day} — The notes of one day."] == ours[-6:]
    failed = run_cli(tmp_path, "mcp", "test", "ghost")
    assert failed.returncode == 1
    assert "ghost: failed: command not found" in failed.stdout and "mcp-ghost.log" in failed.stdout
    assert run_cli(tmp_path, "mcp", "test", "nobody").returncode == 1
    doctor = run_cli(tmp_path, "doctor", "--offline")
    assert "mcp:        ghost: enabled; off: disabled; ours: enabled; time: enabled\n" in doctor.stdout
    doctor = run_cli(tmp_path, "doctor")
    assert ("mcp:        ghost: failed: command not found: /nonexistent/mcp-ghost; off: disabled; "
            "ours: connected, 11 tools, 2 prompts, 3 resources; time: connected, 1 tool, 0 prompts, 0 resources\n"
            ) in doctor.stdout


def test_import_adds_claude_desktop_servers_and_says_what_it_skipped(tmp_path: Path) -> None:
    write_config(tmp_path, mcp={"servers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}})
    claude = tmp_path / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": {
        "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                       "env": {"DEBUG": "1"}},
        "time": {"command": "uvx", "args": ["mcp-server-time", "--other"]},
        "remote": {"url": "https://mcp.example.invalid/sse", "headers": {"Authorization": "keyring:remote"}},
        "odd": {"args": ["x"]},
        "paused": {"command": "srv", "disabled": True}}}))
    result = run_cli(tmp_path, "mcp", "import", str(claude))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "added filesystem: npx -y @modelcontextprotocol/server-filesystem /tmp",
        "added remote: https://mcp.example.invalid/sse",
        "added paused: srv (disabled, as in the file)",
        "skipped time: a server of that name is already configured",
        "skipped odd: needs either 'command' (a program run over stdio) or 'url' (a remote server)"]
    saved = servers(tmp_path)
    assert saved["time"]["args"] == ["mcp-server-time"]  # never overwritten
    assert saved["filesystem"]["env"] == {"DEBUG": "1"} and saved["paused"]["enabled"] is False
    assert saved["remote"]["headers"] == {"Authorization": "keyring:remote"}
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcp_servers": {}}')
    refused = run_cli(tmp_path, "mcp", "import", str(bad))
    assert refused.returncode == 1 and '"mcpServers"' in refused.stderr and '"extensions"' in refused.stderr


def test_import_dry_run_says_what_it_would_add_and_writes_nothing(tmp_path: Path) -> None:
    write_config(tmp_path, mcp={"servers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}})
    before = servers(tmp_path)
    vscode = tmp_path / "mcp.json"
    vscode.write_text('{\n  // VS Code writes comments\n  "servers": {\n    "fetch": {"type": "stdio", "command": "uvx", '
                      '"args": ["mcp-server-fetch"]},\n    "time": {"command": "uvx"},\n  },\n}\n')
    result = run_cli(tmp_path, "mcp", "import", "--dry-run", str(vscode))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["will add fetch: uvx mcp-server-fetch",
                                          "will skip time: a server of that name is already configured"]
    assert servers(tmp_path) == before
    assert run_cli(tmp_path, "mcp", "import", str(vscode)).stdout.splitlines()[0] == "added fetch: uvx mcp-server-fetch"
    assert servers(tmp_path)["fetch"]["args"] == ["mcp-server-fetch"]


def test_import_keeps_tokens_in_the_keyring(tmp_path: Path) -> None:
    write_config(tmp_path)
    claude = tmp_path / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": {
        "github": {"command": "npx", "args": ["-y", "github-mcp"], "env": {"GITHUB_TOKEN": "ghp_secret", "DEBUG": "1"}}}}))
    result = run_main(tmp_path, "mcp", "import", str(claude))
    assert result.returncode == 0, result.stderr
    assert servers(tmp_path)["github"]["env"] == {"GITHUB_TOKEN": "keyring:mcp.github.GITHUB_TOKEN", "DEBUG": "1"}
    assert "ghp_secret" not in (tmp_path / "config.yaml").read_text()


def test_test_of_a_server_that_never_answers_says_so_and_fails(tmp_path: Path) -> None:
    """A URL that accepts the connection and says nothing (the kernel accepts for a socket that only listens),
    and a command that never answers: each is named, with the time it was given."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/sse"
        mute = [sys.executable, "-c", "import time; time.sleep(120)"]
        write_config(tmp_path, mcp={"servers": {"far": {"url": url, "timeout": 1},
                                                "near": {"command": mute[0], "args": mute[1:], "timeout": 1}}})
        far, near = side_by_side(tmp_path, ("mcp", "test", "far"), ("mcp", "test", "near"))
    assert far.returncode == 1
    assert far.stdout.startswith(f"far: failed: no answer from {url} within 5 s\n"), far.stdout
    assert near.returncode == 1
    assert near.stdout.startswith(f"near: failed: no answer from {shlex.join(mute)} within 5 s\n"), near.stdout


class _SignInFirst(BaseHTTPRequestHandler):
    """A remote MCP server that wants OAuth: every request is answered 401 with where to sign in."""

    def _refuse(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer resource_metadata="http://127.0.0.1/.well-known/x"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_DELETE = _refuse

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def sign_in_first() -> Iterator[int]:
    """The port of a server that answers 401 to everything, on 127.0.0.1."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SignInFirst)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_list_says_which_servers_refused_and_which_need_a_sign_in(tmp_path: Path, sign_in_first: int) -> None:
    with socket.socket() as closed:  # bound, never listening: connections to it are refused
        closed.bind(("127.0.0.1", 0))
        shut = f"http://127.0.0.1:{closed.getsockname()[1]}"
        locked = f"http://127.0.0.1:{sign_in_first}"
        write_config(tmp_path, mcp={"servers": {
            "shut": {"url": f"{shut}/mcp"}, "shut-sse": {"url": f"{shut}/sse"},
            "locked": {"url": f"{locked}/mcp"}, "locked-sse": {"url": f"{locked}/sse"}}})
        listed = run_cli(tmp_path, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    def sign_in(name: str) -> str:
        return (f"answered 401 Unauthorized (sign in from Settings → MCP servers or with `nanobot-tray mcp login "
                f"{name}`, or give it a token in 'headers', e.g. Authorization: keyring:NAME)")
    assert listed.stdout.splitlines() == [
        f"locked: failed: needs sign-in: {locked}/mcp {sign_in('locked')}",
        f"locked-sse: failed: needs sign-in: {locked}/sse {sign_in('locked-sse')}",
        f"shut: failed: connection refused by {shut}/mcp (is the server running?)",
        f"shut-sse: failed: connection refused by {shut}/sse (is the server running?)"]


def test_login_signs_in_through_the_browser_and_logout_forgets_it(tmp_path: Path) -> None:
    # the SDK's own authorization server in front of our test server; the "browser" is curl following the
    # redirects of the consent page (given at once) back to the command's loopback page
    server = RemoteServer("--http", None, ("--oauth", "60")).start()
    try:
        write_config(tmp_path, mcp={"servers": {"remote": server.config(timeout=10),
                                                "local": {"command": sys.executable, "args": [SERVER]}}})
        keys = MemoryKeyring()
        browser = {"BROWSER": f"{shutil.which('curl')} -sSL -o /dev/null %s"}
        ran = run_main(tmp_path, "mcp", "login", "remote", env_extra=browser, keys=keys)
        assert ran.returncode == 0, ran.stderr
        lines = ran.stdout.splitlines()
        assert lines[0] == "Sign in to remote in your browser. If none opened, open this address on this computer:"
        assert lines[1].startswith(f"  http://127.0.0.1:{server.port}/authorize?") and lines[-1] == "Signed in to remote."
        assert json.loads(keys.store[("nanobot-tray", "mcp.remote.oauth")])["tokens"]["access_token"]
        tested = run_main(tmp_path, "mcp", "test", "remote", keys=keys)  # the stored sign-in is used
        assert tested.stdout.startswith("remote: connected"), tested.stdout

        ran = run_main(tmp_path, "mcp", "logout", "remote", keys=keys)
        assert ran.returncode == 0 and ran.stdout == "Signed out of remote.\n"
        assert ("nanobot-tray", "mcp.remote.oauth") not in keys.store
        assert "needs sign-in" in run_main(tmp_path, "mcp", "test", "remote", keys=keys).stdout

        for name, why in (("local", "has no sign-in"), ("nobody", "no MCP server named 'nobody'")):
            ran = run_main(tmp_path, "mcp", "login", name, keys=keys)
            assert ran.returncode == 1 and why in ran.stderr, ran.stderr
    finally:
        server.stop()


def test_login_to_a_server_nothing_listens_for_says_so(tmp_path: Path) -> None:
    """It said "not signed in to remote: unhandled errors in a TaskGroup (1 sub-exception)", which tells nobody
    that the server is not running or its address is wrong."""
    with socket.socket() as taken:  # a port nothing listens on
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    write_config(tmp_path, mcp={"servers": {"remote": {"url": url, "timeout": 10}}})
    ran = run_main(tmp_path, "mcp", "login", "remote", keys=MemoryKeyring())
    assert (ran.returncode, ran.stdout) == (1, "")
    assert ran.stderr == f"error: not signed in to remote: connection refused by {url} (is the server running?)\n"


def test_import_of_a_pipe_or_a_huge_file_is_refused_at_once(tmp_path: Path) -> None:
    """A named pipe made `mcp import` wait forever for a writer (Ctrl+C could not end it), and /dev/zero or a
    huge file was read whole until memory ran out."""
    fifo = tmp_path / "servers.json"
    os.mkfifo(fifo)
    result = run_cli(tmp_path / "home", "mcp", "import", str(fifo))
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"error: {fifo} is not a regular file; give the server list's file\n"
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(20_000_000)
    result = run_main(tmp_path / "home", "mcp", "import", str(huge))
    assert result.returncode == 1
    assert result.stderr == f"error: {huge} is 20 MB; a server list is a small text file (at most 10 MB)\n"
    assert yaml.safe_load((tmp_path / "home" / "config.yaml").read_text())["mcp"]["servers"] == {}


def test_a_server_that_exits_at_once_is_said_with_its_last_words(tmp_path: Path) -> None:
    """A program that prints why to stderr and exits (a missing token, a bad argument) fails with what it said,
    not with the SDK's bare "Connection closed"."""
    write_config(tmp_path, mcp={"servers": {"early": {"command": "sh", "args": [
        "-c", "echo starting >&2; echo 'error: GITHUB_TOKEN is not set' >&2; exit 3"]}}})
    failed = run_cli(tmp_path, "mcp", "test", "early")
    assert failed.returncode == 1
    assert "early: failed:" in failed.stdout and "error: GITHUB_TOKEN is not set" in failed.stdout, failed.stdout


def test_testing_a_program_that_is_no_mcp_server_says_so_without_a_wall_of_tracebacks(tmp_path: Path) -> None:
    """`yes garbage` set up as a server: `mcp test` says it does not look like an MCP server. Before that line the
    terminal got the SDK's traceback for every line it could not read (574 lines for 51 of them), and the app's
    log the same at every try; the app counts those lines and says what they were itself."""
    write_config(tmp_path, mcp={"servers": {"wrong": {"command": "yes", "args": ["garbage"], "timeout": 30}}})
    tested = run_cli(tmp_path, "mcp", "test", "wrong")
    assert tested.returncode == 1
    assert "wrong: failed: it does not look like an MCP server" in tested.stdout, tested.stdout
    assert "Traceback" not in tested.stderr and "JSONRPC" not in tested.stderr, tested.stderr[:2000]
