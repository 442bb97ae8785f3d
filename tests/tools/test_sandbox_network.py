"""The sandbox's network (tools.exec.network) with real bwrap, socat and the app's egress proxy.

Without a real internet here, the tests that need one build a private one (tests/netlab.py): a "public"
web server on 11.22.33.44 beside services that must stay out of reach (this computer's 127.0.0.1 and its
other addresses, the LAN, carrier-grade NAT, the cloud metadata addresses) and a DNS server that answers
rebinding names. Those need root (as in CI) and skip with the reason elsewhere.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.config import Config
from desktop.kernel.paths import home
from desktop.tools import sandbox_network
from desktop.tools.base import ToolContext
from desktop.tools.egress import egress_proxy
from desktop.tools.registry import ToolRegistry
from desktop.tools.sandbox import exec_sandbox
from desktop.tools.sandbox_network import HOST, INTERNET, OFF
from desktop.tools.shell import ExecTool
from desktop.workspace.layout import ensure_workspace
from tests.netlab import (
    CGNAT,
    GATEWAY,
    LOCAL_SECRET,
    METADATA,
    METADATA6,
    NEIGHBOUR,
    OWN_PRIVATE,
    OWN_PUBLIC,
    OWN_PUBLIC6,
    PACKAGE,
    PUBLIC,
    PUBLIC6,
    PUBLIC_TOKEN,
    ROUTER,
    Internet,
    Unavailable,
    private_internet,
    serve_until_stopped,
)

CTX = ToolContext("cli:test")


def tools(workspace: Path, network: str) -> ToolRegistry:
    config = Config()
    config.tools.exec.network = network
    sandbox = exec_sandbox(config, home(), workspace)
    assert sandbox is not None
    return ToolRegistry([ExecTool(workspace, 60, restrict=True, sandbox=sandbox)])


async def run(registry: ToolRegistry, command: str) -> str:
    outcome = await registry.run("exec", {"command": command}, CTX)
    return str(outcome.output)


@pytest.fixture
def workspace(home_dir: Path) -> Path:
    folder = home_dir / "workspace"
    ensure_workspace(folder)
    return folder


class Listener:
    """A TCP listener on this computer's 127.0.0.1 and an abstract Unix socket; both count connections."""

    def __init__(self) -> None:
        tcp = socket.socket()
        tcp.bind(("127.0.0.1", 0))
        tcp.listen()
        self.port = tcp.getsockname()[1]
        self.abstract_name = f"nanobot-test-{secrets.token_hex(6)}"
        unix = socket.socket(socket.AF_UNIX)
        unix.bind("\0" + self.abstract_name)
        unix.listen()
        self.hits: list[str] = []
        self.stops = [serve_until_stopped(tcp, lambda: self._answer(tcp, "tcp")),
                      serve_until_stopped(unix, lambda: self._answer(unix, "abstract"))]

    def _answer(self, server: socket.socket, kind: str) -> None:
        conn, _ = server.accept()
        self.hits.append(kind)
        with conn:
            conn.settimeout(2)
            conn.sendall(f"HTTP/1.0 200 OK\r\n\r\n{LOCAL_SECRET}\n".encode())

    def close(self) -> None:
        for stop in self.stops:
            stop()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


def reach(listener: Listener) -> str:
    """Commands that try the listener over TCP (direct, through the proxy) and its abstract socket."""
    port = listener.port
    return (f"curl -sS -m 5 http://127.0.0.1:{port}/; "
            f"curl -sS -m 5 --noproxy '' http://127.0.0.1:{port}/; "
            f"python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0{listener.abstract_name}');"
            f" print(s.recv(100))\"; echo done")


# --- modes, without an internet ------------------------------------------------------------------------

@pytest.mark.parametrize("network", [INTERNET, OFF])
async def test_the_computers_loopback_and_abstract_sockets_are_out_of_reach(workspace: Path, listener: Listener,
                                                                          network: str) -> None:
    text = await run(tools(workspace, network), reach(listener))
    assert "done" in text and LOCAL_SECRET not in text, text
    assert "Connection refused" in text or "Couldn't connect" in text, text
    assert listener.hits == []


async def test_host_mode_shares_the_computers_network_as_before(workspace: Path, listener: Listener) -> None:
    text = await run(tools(workspace, HOST), reach(listener))
    assert text.count(LOCAL_SECRET) == 3, text  # the explicit opt-in: why Settings and doctor warn about it
    assert sorted(listener.hits) == ["abstract", "tcp", "tcp"]


async def test_each_mode_says_what_it_lets_through(workspace: Path) -> None:
    modes = {}
    for network in (INTERNET, OFF, HOST):
        tool = tools(workspace, network).get("exec")
        assert isinstance(tool, ExecTool)
        modes[network] = (await tool.mode()).network
    assert modes[INTERNET].mode == INTERNET and not modes[INTERNET].warning
    assert "public internet addresses only" in modes[INTERNET].description
    assert "local network" in modes[INTERNET].description and "refused" in modes[INTERNET].description
    assert modes[OFF].mode == OFF and "no network" in modes[OFF].description
    assert modes[HOST].mode == HOST and modes[HOST].warning
    assert "services on 127.0.0.1" in modes[HOST].description


async def test_without_socat_internet_falls_back_to_no_network_and_says_so(
        workspace: Path, monkeypatch: pytest.MonkeyPatch, listener: Listener) -> None:
    monkeypatch.setattr(sandbox_network, "RELAY", "socat-not-installed-here")
    registry = tools(workspace, INTERNET)
    tool = registry.get("exec")
    assert isinstance(tool, ExecTool)
    network = (await tool.mode()).network
    assert network.mode == OFF and network.warning
    assert "socat is not installed" in network.description and "no network" in network.description
    text = await run(registry, reach(listener))
    assert "done" in text and LOCAL_SECRET not in text and listener.hits == []
    monkeypatch.undo()  # socat installed while the app runs: the next command has the internet
    assert (await tool.mode()).network.mode == INTERNET


async def test_a_server_the_command_starts_itself_is_reached_directly(workspace: Path) -> None:
    """The sandbox's own loopback is not the computer's: a dev server started in the same command answers,
    without a detour through the proxy (no_proxy names localhost)."""
    (workspace / "hello.txt").write_text("hello from inside\n")
    text = await run(tools(workspace, INTERNET),
                     "python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & "
                     "for i in $(seq 100); do curl -s http://localhost:8765/hello.txt && break; sleep 0.05; done")
    assert "hello from inside" in text, text


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short XDG_RUNTIME_DIR (a socket's path is short; tmp_path is long)."""
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder)


async def test_the_proxy_and_its_folder_live_only_as_long_as_the_call(workspace: Path, runtime_dir: Path) -> None:
    text = await run(tools(workspace, INTERNET), f"ls {runtime_dir}/*; echo $https_proxy")
    assert "egress.sock" in text and "http://127.0.0.1:3128" in text, text
    assert list(runtime_dir.iterdir()) == []  # made for the call, gone with it


async def test_a_runtime_folder_too_long_for_a_socket_is_passed_over(workspace: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / ("long-folder-name-" * 4)
    deep.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    text = await run(tools(workspace, INTERNET), f"curl -sS -m 5 --noproxy '' http://127.0.0.1:1/; ls {deep}")
    assert "nanobot-tray sandbox: 127.0.0.1 is a loopback address" in text and list(deep.iterdir()) == []


async def test_the_proxy_refuses_what_is_not_public_in_every_spelling(listener: Listener) -> None:
    """Straight at the proxy's socket (no sandbox): each refusal names the address and why."""
    port = listener.port
    async with egress_proxy() as path:
        for target in (f"127.0.0.1:{port}", f"localhost:{port}", f"2130706433:{port}",
                       f"0x7f000001:{port}", f"0177.0.0.1:{port}", f"127.1:{port}", f"[::1]:{port}",
                       f"[::ffff:127.0.0.1]:{port}", f"0.0.0.0:{port}", f"[::]:{port}", "169.254.169.254:80",
                       "[fd00:ec2::254]:80", "[::ffff:169.254.169.254]:80", "10.1.2.3:80", "192.168.1.1:80",
                       "172.16.0.1:80", "100.64.0.1:80", "224.0.0.1:80", "[ff02::1]:80", "[fe80::1]:80",
                       "[64:ff9b::7f00:1]:80", "[2002:7f00:1::]:80", "255.255.255.255:80"):
            for request in (f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n",
                            f"GET http://{target}/ HTTP/1.1\r\nHost: {target}\r\n\r\n"):
                answer = await _ask(path, request)
                assert answer.startswith("HTTP/1.1 403 Forbidden (") and "public internet addresses only" in answer, \
                    (target, answer)
        for bad in ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", "CONNECT nowhere HTTP/1.1\r\n\r\n",
                    "CONNECT [::1 HTTP/1.1\r\n\r\n", "hello\r\n\r\n", f"GET ftp://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n"):
            assert (await _ask(path, bad)).startswith("HTTP/1.1 400 Bad Request"), bad
        for unknown in ("no-such-name.invalid:443", "a\x00b:443"):
            assert (await _ask(path, f"CONNECT {unknown} HTTP/1.1\r\n\r\n")).startswith("HTTP/1.1 502 Bad Gateway")
    assert listener.hits == []
    assert not path.exists()


async def _ask(path: Path, request: str) -> str:
    reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), 5)
    writer.write(request.encode())
    answer = await asyncio.wait_for(reader.read(), 20)
    writer.close()
    return answer.decode("latin-1")


# --- with a private internet ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def internet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Internet]:
    try:
        with private_internet(tmp_path_factory.mktemp("internet")) as built:
            yield built
    except Unavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def fresh(internet: Internet) -> Internet:
    internet.public.clear()
    for hits in internet.forbidden.values():
        hits.clear()
    return internet


async def test_internet_mode_reaches_public_addresses_and_nothing_local(workspace: Path, fresh: Internet) -> None:
    port = fresh.canary_port
    forbidden = [f"http://127.0.0.1:{port}/", f"http://{OWN_PRIVATE}:{port}/", f"http://{OWN_PUBLIC}:{port}/",
                 f"http://[{OWN_PUBLIC6}]:{port}/", f"http://{ROUTER}/", f"http://{GATEWAY}/", f"http://{CGNAT}/",
                 f"http://{METADATA}/latest/meta-data/", f"http://[{METADATA6}]/", f"http://{NEIGHBOUR}/"]
    command = "; ".join([f"curl -sS -m 5 http://{PUBLIC}/page.html", f"curl -sS -m 5 'http://[{PUBLIC6}]/page.html'",
                         *(f"curl -sS -m 5 --noproxy '' {url}" for url in forbidden),
                         *(f"curl -sS -m 5 --noproxy '*' {url}" for url in forbidden[1:]),
                         f"curl -sS -m 5 --noproxy '*' http://{PUBLIC}/page.html", "echo done"])
    text = await run(tools(workspace, INTERNET), command)
    assert text.count(PUBLIC_TOKEN) == 2, text  # through the proxy; not without it
    assert text.count("nanobot-tray sandbox:") == len(forbidden) and "done" in text, text
    assert LOCAL_SECRET not in text and fresh.reached() == [], fresh.reached()
    assert fresh.public == ["10.200.0.1", "2a00:11:22:1::1"]  # the app's proxy connected, from this computer


async def test_names_are_resolved_by_the_proxy_and_rebinding_gains_nothing(workspace: Path, fresh: Internet) -> None:
    if not fresh.dns_ok:
        pytest.skip("this computer's resolver does not ask the DNS server in /etc/resolv.conf")
    port = fresh.canary_port
    names = ["rebind.test", "rebind6.test", "mapped.test", "lan.test", "meta.test", "self.test", "mixed.test"]
    command = "; ".join(["curl -sS -m 5 http://public.test/page.html",
                         *(f"curl -sS -m 5 http://{name}:{port}/" for name in names),
                         *(f"curl -sS -m 5 https://{name}:{port}/" for name in names),
                         f"curl -sS -m 5 http://flip.test/page.html http://flip.test:{port}/",
                         "getent hosts public.test || echo 'no DNS inside'"])
    text = await run(tools(workspace, INTERNET), command)
    assert text.count(PUBLIC_TOKEN) == 2, text  # public.test, and flip.test while it answered the public address
    assert text.count("nanobot-tray sandbox:") + text.count("response 403") == 2 * len(names) + 1, text
    assert "mixed.test is 127.0.0.1" in text and "rebind.test is 127.0.0.1, which is a loopback address" in text
    assert "no DNS inside" in text
    assert LOCAL_SECRET not in text and fresh.reached() == []


async def test_curl_pip_and_git_clone_over_https_work_in_internet_mode(workspace: Path, fresh: Internet) -> None:
    if not fresh.dns_ok:
        pytest.skip("this computer's resolver does not ask the DNS server in /etc/resolv.conf")
    ca = workspace / "public-ca.pem"
    ca.write_bytes(fresh.ca_file.read_bytes())
    # the tests' own pip, or the system's when the tests' interpreter lives in a folder the sandbox hides
    command = (f"for py in {sys.executable} python3; do $py -m pip --version >/dev/null 2>&1 && break; done; "
               f"curl -sS -m 10 --cacert public-ca.pem https://public.test/page.html && "
               f"$py -m pip download --no-cache-dir --disable-pip-version-check -q -d wheels "
               f"--cert public-ca.pem --index-url https://public.test/simple {PACKAGE} && ls wheels && "
               f"GIT_SSL_CAINFO=public-ca.pem git clone -q https://public.test/repo.git clone && cat clone/README")
    text = await run(tools(workspace, INTERNET), command)
    assert text.count(PUBLIC_TOKEN) == 2 and "nbt_tiny-1.0-py3-none-any.whl" in text, text
    assert (workspace / "wheels" / "nbt_tiny-1.0-py3-none-any.whl").is_file()
    assert fresh.reached() == []


async def test_a_site_whose_ipv6_address_never_answers_is_reached_over_ipv4(workspace: Path, fresh: Internet) -> None:
    if not fresh.dns_ok:
        pytest.skip("this computer's resolver does not ask the DNS server in /etc/resolv.conf")
    text = await run(tools(workspace, INTERNET), "curl -sS -m 30 http://dual.test/page.html")
    assert PUBLIC_TOKEN in text and fresh.public == ["10.200.0.1"], text


async def test_off_mode_reaches_not_even_the_public_address(workspace: Path, fresh: Internet) -> None:
    text = await run(tools(workspace, OFF), f"curl -sS -m 5 http://{PUBLIC}/page.html; "
                                            f"curl -sS -m 5 -x http://127.0.0.1:3128 http://{PUBLIC}/page.html; "
                                            "echo done")
    assert PUBLIC_TOKEN not in text and "done" in text and fresh.public == []


async def test_host_mode_reaches_the_local_network_too(workspace: Path, fresh: Internet) -> None:
    text = await run(tools(workspace, HOST), f"curl -sS -m 5 http://{PUBLIC}/page.html; "
                                             f"curl -sS -m 5 http://{ROUTER}/")
    assert PUBLIC_TOKEN in text and LOCAL_SECRET in text  # what the warning in Settings and doctor is about
    assert fresh.forbidden["the router"] == ["10.200.0.1"]


async def test_a_tunnel_still_open_when_the_call_ends_is_closed(fresh: Internet) -> None:
    async with egress_proxy() as path:
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(f"CONNECT {PUBLIC}:80 HTTP/1.1\r\n\r\n".encode())
        assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).startswith(b"HTTP/1.1 200")
    assert await asyncio.wait_for(reader.read(), 10) == b""  # the proxy hung up when its call was over
    writer.close()
