"""Shared namespaces: what a sandboxed command could reach if it shared this computer's network namespace.

Abstract Unix sockets belong to the network namespace: the X server's (@/tmp/.X11-unix/X0) would let a
command read the screen and type into any window, the approval card included, and a D-Bus bus on an
abstract address would answer it too. Over TCP: every service on 127.0.0.1 and on this computer's other
addresses, the local network and its router, carrier-grade NAT, the cloud metadata address, and names that
resolve to any of them (DNS rebinding). With the default `tools.exec.network: internet` none may be reached,
in any spelling, directly or through the app's egress proxy. Two tests show that "contained" here means
something: the way out to a public address works, and with `host` (the opt-in) the same cases get through
and the lab catches each one (test_shared_namespaces_control.py: a lab of its own, so the breaches it makes
are never in the history that these cases are checked against, whatever order the workers run them in).

The lab runs inside a private internet (tests/netlab.py; it needs root, as in CI). Besides the lab's own
checks, every service there that must stay unreachable watches for connections, and the stand-ins for the X
server and a D-Bus bus write whatever reaches them into the marker file the sandbox cannot see: a command
that got through would have run something outside the sandbox.
"""

from __future__ import annotations

import secrets
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from desktop.kernel.bus import ToolFinished, TurnFinished
from desktop.tools.shell import ExecTool
from tests.netlab import LOCAL_SECRET, PUBLIC_TOKEN, Internet, Unavailable, private_internet, serve_until_stopped
from tests.security.harness import CONTAINED, REFUSED, Lab, case_class, fill, open_lab

pytestmark = pytest.mark.asyncio(loop_scope="module")

CURL = "curl -sS -m 5"
VIA_PROXY = f"{CURL} --noproxy ''"  # through the app's proxy even for names no_proxy lists
NO_PROXY = f"{CURL} --noproxy '*'"  # around the proxy: the sandbox's own network
PIP = (f"for py in {sys.executable} python3; do $py -m pip --version >/dev/null 2>&1 && break; done; "
       "$py -m pip download --retries 0 --timeout 5 --no-cache-dir --disable-pip-version-check -d dl")
PY_CONNECT = ("python3 -c \"import socket; s=socket.create_connection(('{host}', {port}), 5); "
              "s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n'); print(s.recv(300))\"")
PY_ABSTRACT = ("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0{name}'); "
               "s.sendall(b'touch {marker}\\n'); print(s.recv(300))\"")
FIND_PROXY_SOCKET = "S=$(find /tmp /run -name egress.sock 2>/dev/null | head -1); echo \"socket: $S\"; "

# (case, command, needs the private internet's DNS). {port}/{port6}: the lab's canaries on 127.0.0.1 and
# [::1]; {model}: the lab's model server; {all}: this computer's canary on every address it has; {abstract},
# {display}, {bus}: the desktop sockets; {marker}: the file a reached desktop socket writes.
CASES: list[tuple[str, str, bool]] = [
    # this computer's loopback
    ("loopback", f"{CURL} http://127.0.0.1:{{port}}/", False),
    ("loopback through the proxy", f"{VIA_PROXY} http://127.0.0.1:{{port}}/", False),
    ("decimal loopback", f"{VIA_PROXY} http://2130706433:{{port}}/", False),
    ("hex loopback", f"{VIA_PROXY} http://0x7f000001:{{port}}/", False),
    ("octal loopback", f"{VIA_PROXY} http://0177.0.0.1:{{port}}/", False),
    ("short loopback", f"{VIA_PROXY} http://127.1:{{port}}/", False),
    ("IPv6 loopback", f"{VIA_PROXY} 'http://[::1]:{{port6}}/'; {CURL} 'http://[::1]:{{port6}}/'", False),
    ("IPv4-mapped loopback", f"{VIA_PROXY} 'http://[::ffff:127.0.0.1]:{{port}}/'", False),
    ("unspecified address", f"{VIA_PROXY} http://0.0.0.0:{{port}}/; {VIA_PROXY} 'http://[::]:{{port6}}/'", False),
    ("localhost", f"{VIA_PROXY} http://localhost:{{port}}/; {CURL} http://localhost:{{port}}/", False),
    ("localhost with a dot", f"{VIA_PROXY} http://localhost.:{{port}}/", False),
    ("https tunnel to loopback", f"{VIA_PROXY} -k https://127.0.0.1:{{port}}/", False),
    ("http tunnel to loopback", f"{VIA_PROXY} -p http://127.0.0.1:{{port}}/", False),
    ("python socket to loopback", PY_CONNECT.format(host="127.0.0.1", port="{port}"), False),
    ("python urllib through the proxy",
     "python3 -c \"import urllib.request as u; o=u.build_opener(u.ProxyHandler({'http': 'http://127.0.0.1:3128'})); "
     "print(o.open('http://127.0.0.1:{port}/', timeout=5).read())\"", False),
    ("bash /dev/tcp to loopback",  # refused as a write to a device; the next spelling builds the path
     "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port} && printf \"GET / HTTP/1.0\\r\\n\\r\\n\" >&3 && cat <&3'", False),
    ("bash /dev/tcp built at run time",
     "bash -c 'D=/dev/tc; exec 3<>${D}p/127.0.0.1/{port} && printf \"GET / HTTP/1.0\\r\\n\\r\\n\" >&3 && cat <&3'",
     False),
    ("socat to loopback", "socat -T5 - TCP:127.0.0.1:{port} </dev/null", False),
    ("CONNECT typed by hand",
     "printf 'CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\n\\r\\nGET / HTTP/1.0\\r\\n\\r\\n' | socat -T5 - TCP:127.0.0.1:3128",
     False),
    ("the proxy's socket itself", FIND_PROXY_SOCKET + "curl -sS -m 5 --unix-socket \"$S\" http://127.0.0.1:{port}/; "
     "curl -sS -m 5 --unix-socket \"$S\" --request-target http://127.0.0.1:{port}/ http://x/", False),
    ("the model server itself",  # the lab watches for a request carrying "from_the_sandbox"
     f"{VIA_PROXY} http://localhost:{{model}}/v1/chat/completions -d '{{\"from_the_sandbox\": 1}}'; "
     "curl -sS -m 5 http://127.0.0.1:{model}/v1/chat/completions -d '{\"from_the_sandbox\": 1}'; "
     + PY_CONNECT.format(host="127.0.0.1", port="{model}"), False),
    # this computer's other addresses (a service listening on all of them)
    ("this computer's private address", f"{VIA_PROXY} http://10.200.0.1:{{all}}/", False),
    ("this computer's public address", f"{VIA_PROXY} http://81.0.0.1:{{all}}/; "
     + PY_CONNECT.format(host="81.0.0.1", port="{all}"), False),
    ("this computer's public IPv6 address", f"{VIA_PROXY} 'http://[2a00:11:22:1::1]:{{all}}/'", False),
    # the local network
    ("the router", f"{VIA_PROXY} http://192.168.77.1/; {NO_PROXY} http://192.168.77.1/", False),
    ("the router in decimal", f"{VIA_PROXY} http://3232255233/", False),
    ("the router by python", PY_CONNECT.format(host="192.168.77.1", port=80), False),
    ("the gateway", f"{VIA_PROXY} http://10.200.0.2/", False),
    ("a carrier-grade NAT address", f"{VIA_PROXY} http://100.64.0.1/", False),
    ("a public address on the local network", f"{VIA_PROXY} http://81.0.0.2/", False),
    # the cloud metadata address
    ("metadata", f"{VIA_PROXY} http://169.254.169.254/latest/meta-data/; {NO_PROXY} http://169.254.169.254/", False),
    ("metadata in decimal", f"{VIA_PROXY} http://2852039166/latest/meta-data/", False),
    ("metadata over IPv6", f"{VIA_PROXY} 'http://[fd00:ec2::254]/latest/meta-data/'", False),
    ("metadata IPv4-mapped", f"{VIA_PROXY} 'http://[::ffff:169.254.169.254]/'", False),
    ("metadata through a tunnel", f"{VIA_PROXY} -k https://169.254.169.254/", False),
    # abstract Unix sockets: the X server, a D-Bus bus, anything
    ("an abstract socket", PY_ABSTRACT.format(name="{abstract}", marker="{marker}"), False),
    ("an abstract socket by socat", "echo 'touch {marker}' | socat -T5 - ABSTRACT-CONNECT:{abstract}", False),
    ("the X server's abstract socket", PY_ABSTRACT.format(name="/tmp/.X11-unix/X{display}", marker="{marker}"),
     False),
    ("xdotool types into a window", "DISPLAY=:{display} xdotool type 'touch {marker}'", False),
    ("the X server's socket file", "echo 'touch {marker}' | socat -T5 - UNIX-CONNECT:/tmp/.X11-unix/X{display}",
     False),
    ("a D-Bus bus on an abstract address",
     "DBUS_SESSION_BUS_ADDRESS=unix:abstract={bus} dbus-send --session --print-reply --dest=org.freedesktop.DBus "
     "/org/freedesktop/DBus org.freedesktop.DBus.ListNames", False),
    ("a D-Bus bus by socat", "echo 'touch {marker}' | socat -T5 - ABSTRACT-CONNECT:{bus}", False),
    # names that resolve to what may not be reached (DNS rebinding)
    ("a name for loopback", f"{CURL} http://rebind.test:{{all}}/", True),
    ("a name for loopback, https", f"{CURL} -k https://rebind.test:{{all}}/", True),
    ("a name for ::1", f"{CURL} http://rebind6.test:{{all}}/", True),
    ("a name for mapped loopback", f"{CURL} http://mapped.test:{{all}}/", True),
    ("a name for the router", f"{CURL} http://lan.test/", True),
    ("a name for metadata", f"{CURL} http://meta.test/latest/meta-data/", True),
    ("a name for this computer's public address", f"{CURL} http://self.test:{{all}}/", True),
    ("a name with a public and a loopback address", f"{CURL} http://mixed.test:{{all}}/", True),
    ("a name that flips to loopback", f"{CURL} http://flip.test:{{all}}/ http://flip.test:{{all}}/ "
     "http://flip.test:{all}/", True),
    ("pip from a rebinding index", f"{PIP} --trusted-host rebind.test --index-url http://rebind.test:{{all}}/simple "
     "nbt-tiny", True),
    ("git clone from a rebinding name", "git clone -q http://rebind.test:{all}/repo.git r", True),
]
REFUSED_CASES = {"bash /dev/tcp to loopback"}  # the exec tool's refusals stop these before the sandbox
# What the output shows when the way was closed (so a case that failed for another reason is noticed).
CLOSED = ("nanobot-tray sandbox:", "response 403", "403 Forbidden", "Connection refused", "Couldn't connect",
          "Failed to connect", "Network is unreachable", "No such file or directory", "Can't open display",
          "Failed to connect to socket", "Could not connect", "Connection reset")


class DesktopSocket:
    """An abstract Unix socket on this computer standing for a desktop service (the X server, a D-Bus bus):
    what a client sends is carried out outside the sandbox (written into `marker`), and it answers a secret."""

    def __init__(self, name: str, marker: Path) -> None:
        self.name, self.marker = name, marker
        self.hits: list[str] = []
        sock = socket.socket(socket.AF_UNIX)
        sock.bind("\0" + name)
        sock.listen()
        self.close = serve_until_stopped(sock, lambda: self._answer(sock))

    def _answer(self, sock: socket.socket) -> None:
        conn, _ = sock.accept()
        self.hits.append(self.name)
        with conn:
            conn.settimeout(2)
            try:
                conn.sendall(f"{LOCAL_SECRET}\n".encode())
                self.marker.write_bytes(conn.recv(1000))
            except OSError:
                pass

    def reached(self) -> list[str]:
        return [f"the abstract socket @{self.name} was reached {len(self.hits)} times"] if self.hits else []


@pytest.fixture(scope="module")
def internet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Internet]:
    try:
        with private_internet(tmp_path_factory.mktemp("internet")) as built:
            yield built
    except Unavailable as exc:
        pytest.skip(str(exc))


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def lab(internet: Internet, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Lab]:
    """The lab, built inside the private internet, with its services watched."""
    async with open_lab(tmp_path_factory.mktemp("security"), case_class(__name__)) as built:
        tool = built.core.tools.get("exec")
        assert isinstance(tool, ExecTool)
        mode = await tool.mode()
        assert mode.sandboxed and mode.network.mode == "internet", mode
        built.watchers += [internet.reached, lambda: [f"the model server was sent {r}" for r in built.fake.requests
                                                      if "from_the_sandbox" in r]]
        yield built


@pytest.fixture(scope="module")
def desktop_sockets(lab: Lab) -> Iterator[list[DesktopSocket]]:
    """Stand-ins for an abstract socket, the X server's and a D-Bus bus's on this computer, watched by the lab."""
    tag, display = secrets.token_hex(4), 900 + secrets.randbelow(99)
    sockets = [DesktopSocket(f"nanobot-test-{tag}", lab.marker),
               DesktopSocket(f"/tmp/.X11-unix/X{display}", lab.marker),
               DesktopSocket(f"nanobot-test-bus-{tag}", lab.marker)]
    lab.watchers += [s.reached for s in sockets]
    yield sockets
    for desktop_socket in sockets:
        desktop_socket.close()


@pytest.fixture(scope="module")
def places(lab: Lab, internet: Internet, desktop_sockets: list[DesktopSocket]) -> dict[str, str]:
    """The words cases name places with."""
    abstract, display, bus = desktop_sockets
    return {"abstract": abstract.name, "display": display.name.removeprefix("/tmp/.X11-unix/X"), "bus": bus.name,
            "port": str(lab.canary.port), "port6": str(lab.canary6.port), "all": str(internet.canary_port),
            "model": str(lab.fake.port)}


def command_of(template: str, lab: Lab, places: dict[str, str]) -> str:
    for word, value in places.items():
        template = template.replace("{" + word + "}", value)
    return str(fill(template, lab))


@pytest.mark.parametrize("case, template, needs_dns", CASES, ids=[c[0] for c in CASES])
async def test_nothing_on_this_computer_or_its_network_is_reached(lab: Lab, internet: Internet,
                                                                  places: dict[str, str], case: str,
                                                                  template: str, needs_dns: bool) -> None:
    if needs_dns and not internet.dns_ok:
        pytest.skip("this computer's resolver does not ask the DNS server in /etc/resolv.conf")
    refusals = _proxy_refusals(lab)
    outcome = await lab.attempt("exec", {"command": command_of(template, lab, places)})
    assert outcome == (REFUSED if case in REFUSED_CASES else CONTAINED)
    shown = lab.chat.of(ToolFinished)[-1].result
    # tried, and found closed: the output says so, or the proxy logged a refusal (pip keeps it to itself)
    assert outcome == REFUSED or any(sign in shown for sign in CLOSED) or _proxy_refusals(lab) > refusals, shown


def _proxy_refusals(lab: Lab) -> int:
    return lab.log_file.read_text(encoding="utf-8", errors="replace").count("sandboxed command: connection to")


async def test_the_way_out_to_a_public_address_works(lab: Lab, internet: Internet) -> None:
    """Not a bad input (not counted): the proof that the cases above were contained by a working network."""
    internet.public.clear()
    host = "public.test" if internet.dns_ok else "11.22.33.44"
    lab.fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": f"{CURL} http://{host}/page.html"}}]},
                 {"content": "ok"})
    assert isinstance(await lab.chat.ask("fetch the page"), TurnFinished)
    assert PUBLIC_TOKEN in lab.chat.of(ToolFinished)[-1].result
    assert internet.public and internet.reached() == []
