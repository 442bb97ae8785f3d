"""A private internet for network tests: no real network exists here, so the test builds one.

`private_internet()` moves the calling thread (the test's event loop) into a fresh network namespace,
"this computer", joined by a virtual cable to a second one, "the world". The world holds:
- a public web server on 11.22.33.44 and 2a00:11:22:ff::44 (http on 80, https on 443 with a certificate
  the test makes), serving a page, a pip index with one tiny package and a git repository over dumb http;
- services that must stay unreachable from the sandbox: a router's admin page on 192.168.77.1, the gateway
  10.200.0.2, a carrier-grade NAT address 100.64.0.1, the cloud metadata addresses 169.254.169.254 and
  fd00:ec2::254, and 81.0.0.2, a public address on this computer's own local network;
- the DNS server /etc/resolv.conf names, answering the test's names (public.test, dual.test whose IPv6
  address never answers, and names that rebind to loopback, private and metadata addresses).
This computer has 127.0.0.1, the private address 10.200.0.1 and the public addresses 81.0.0.1 and
2a00:11:22:1::1 (a desktop's own global IPv6 address), and a canary listening on all of them.

A namespace is a thread's own: threads started afterwards by the calling thread follow it, and the app's
one long-lived thread that reaches the network, the model-calls thread (desktop/providers/model_thread.py),
is moved in and out with it, and the model helper it starts is closed at both moves so the next one starts
there: the whole app runs on "this computer".

Needs root (CAP_SYS_ADMIN to make namespaces, as in CI) and `ip` (iproute2); `Unavailable` says why not.
Every server binds its own socket in its namespace and is closed with the context.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import hashlib
import os
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from desktop.providers import helper, model_thread

PUBLIC, PUBLIC6 = "11.22.33.44", "2a00:11:22:ff::44"
OWN_PRIVATE, OWN_PUBLIC, OWN_PUBLIC6 = "10.200.0.1", "81.0.0.1", "2a00:11:22:1::1"
GATEWAY, NEIGHBOUR, GATEWAY6 = "10.200.0.2", "81.0.0.2", "2a00:11:22:1::2"
ROUTER, CGNAT, METADATA, METADATA6 = "192.168.77.1", "100.64.0.1", "169.254.169.254", "fd00:ec2::254"
SILENT6 = "2a00:11:22:dead::1"  # public, routed to a neighbour that never answers: IPv6 that drops packets
PUBLIC_TOKEN = "public-page-7c1e94"  # what the public page says: reaching it proves the way out works
LOCAL_SECRET = "sk-netPLANTED-5e6f7a8b9c0d1e2f3a4"  # what every service that must stay unreachable answers
PACKAGE = "nbt-tiny"  # the pip index's one package
NAMES: dict[str, list[str]] = {
    "public.test": [PUBLIC, PUBLIC6],
    "rebind.test": ["127.0.0.1"],
    "rebind6.test": ["::1"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "lan.test": [ROUTER],
    "meta.test": [METADATA],
    "self.test": [OWN_PUBLIC],
    "mixed.test": [PUBLIC, "127.0.0.1"],
    "dual.test": [SILENT6, PUBLIC],  # a site whose IPv6 address is unreachable on this network
}
FLIP = "flip.test"  # public on odd-numbered A queries, loopback on even ones (TTL 0): DNS rebinding itself
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


class Unavailable(Exception):
    """This machine cannot build the private internet (not root, no `ip`)."""


def _setns(fd: int) -> None:
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


def _unshare() -> int:
    if _libc.unshare(_CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise Unavailable(f"cannot make a network namespace ({os.strerror(errno)}): the test needs root")
    return os.open("/proc/thread-self/ns/net", os.O_RDONLY)


class _Recording(ThreadingHTTPServer):
    """Remembers every connection, before a byte is read (a raw TCP connect counts too)."""

    daemon_threads = True
    connections: list[str]

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.connections.append(str(client_address[0]))
        return True


class _Recording6(_Recording):
    address_family = socket.AF_INET6

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # [::] takes IPv4 too
        super().server_bind()


class _Secretive(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        body = f"{LOCAL_SECRET}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET  # noqa: N815

    def log_message(self, *args: Any) -> None:
        pass


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@dataclass
class Internet:
    root: Path
    ca_file: Path  # the public server's certificate, for curl --cacert, pip --cert, GIT_SSL_CAINFO
    canary_port: int  # this computer's canary, on every address it has
    public: list[str] = field(default_factory=list)  # connections the public servers accepted
    forbidden: dict[str, list[str]] = field(default_factory=dict)  # service -> connections it accepted
    dns_ok: bool = False  # this computer's resolver asks the world's DNS server (no systemd-resolved in the way)

    def reached(self) -> list[str]:
        """Every service that must stay unreachable and was reached, with who reached it."""
        return [f"{name} from {who}" for name, hits in self.forbidden.items() for who in hits]


@contextlib.contextmanager
def private_internet(root: Path) -> Iterator[Internet]:
    """Run the block with the calling thread in "this computer" (see the module docstring)."""
    if shutil.which("ip") is None:
        raise Unavailable("`ip` (iproute2) is not installed")
    original = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    servers: list[ThreadingHTTPServer] = []
    closers: list[Callable[[], None]] = []
    home = world = -1
    model_calls = model_thread.model_loop()
    try:
        home = _unshare()
        world = _unshare()
        _setns(home)
        _move(model_calls, home)
        _restart_model_helper(model_calls)
        _ip(home, "link set lo up",
            f"link add nbt0 type veth peer name nbt1 netns /proc/{os.getpid()}/fd/{world}",
            f"addr add {OWN_PRIVATE}/24 dev nbt0", f"addr add {OWN_PUBLIC}/24 dev nbt0",
            f"addr add {OWN_PUBLIC6}/64 dev nbt0 nodad", "link set nbt0 up",
            f"route add default via {GATEWAY}", f"route add default via {GATEWAY6}",
            f"route add {SILENT6}/128 via 2a00:11:22:1::99")
        servers_dns = _nameservers()
        world_lo = [PUBLIC, PUBLIC6, ROUTER, CGNAT, METADATA, METADATA6,
                    *[a for a in servers_dns if not _loopback(a)]]
        _ip(world, "link set lo up", f"addr add {GATEWAY}/24 dev nbt1", f"addr add {NEIGHBOUR}/24 dev nbt1",
            f"addr add {GATEWAY6}/64 dev nbt1 nodad", "link set nbt1 up",
            *[f"addr add {a}/128 dev lo nodad" if ":" in a else f"addr add {a}/32 dev lo" for a in world_lo])
        ca_file, key_file = _certificate(root)
        site = _site(root)
        internet = Internet(root, ca_file, 0)
        with _entered(world, home):
            for address in (PUBLIC, PUBLIC6):
                plain = _server(address, 80, lambda *a: _Quiet(*a, directory=str(site)), internet.public)
                tls = _server(address, 443, lambda *a: _Quiet(*a, directory=str(site)), internet.public)
                context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
                context.load_cert_chain(ca_file, key_file)
                tls.socket = context.wrap_socket(tls.socket, server_side=True)
                servers += [plain, tls]
            for name, address in (("the router", ROUTER), ("the gateway", GATEWAY), ("a CGNAT address", CGNAT),
                                  ("the metadata address", METADATA), ("the IPv6 metadata address", METADATA6),
                                  ("a public neighbour", NEIGHBOUR)):
                internet.forbidden[name] = []
                servers.append(_server(address, 80, _Secretive, internet.forbidden[name]))
            closers += [_dns(a) for a in servers_dns if not _loopback(a)]
        closers += [_dns(a) for a in servers_dns if _loopback(a)]
        internet.forbidden["this computer's canary"] = []
        canary = _server("::", 0, _Secretive, internet.forbidden["this computer's canary"])
        internet.canary_port = canary.server_address[1]
        servers.append(canary)
        for server in servers:
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        internet.dns_ok = _resolves("public.test", PUBLIC)
        # IPv6 neighbour discovery on the new link takes a second the first time: not the tests' to pay for
        socket.create_connection((PUBLIC6, 80), 10).close()
        # the kernel completes that handshake before the server's thread accepts it: on a loaded machine the
        # accept (and its record) came after the clear, inside the first test's list
        deadline = time.monotonic() + 10
        while not internet.public and time.monotonic() < deadline:
            time.sleep(0.01)
        internet.public.clear()
        yield internet
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
        for close in closers:
            close()
        _move(model_calls, original)
        _restart_model_helper(model_calls)
        _setns(original)
        for fd in (original, home, world):
            if fd >= 0:
                os.close(fd)


@contextlib.contextmanager
def _entered(world: int, home: int) -> Iterator[None]:
    """The calling thread in the world for the block (sockets made here belong to it), then home again."""
    _setns(world)
    try:
        yield
    finally:
        _setns(home)


def _move(loop: asyncio.AbstractEventLoop, namespace: int) -> None:
    """Move the thread running `loop` into `namespace`."""
    async def move() -> None:
        _setns(namespace)

    asyncio.run_coroutine_threadsafe(move(), loop).result(10)


def _restart_model_helper(loop: asyncio.AbstractEventLoop) -> None:
    """Close the model helper: the next call starts one from the model-calls thread, in its namespace now."""
    asyncio.run_coroutine_threadsafe(helper.model_helper().close(), loop).result(15)


def _ip(namespace: int, *commands: str) -> None:
    """`ip -batch` in `namespace` (the child inherits the calling thread's namespace)."""
    here = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        _setns(namespace)
        subprocess.run(["ip", "-batch", "-"], input="\n".join(commands) + "\n", text=True, check=True,
                       capture_output=True, timeout=30)
    except subprocess.CalledProcessError as exc:
        raise Unavailable(f"ip could not build the test network: {exc.stderr.strip()}") from None
    finally:
        _setns(here)
        os.close(here)


def _server(address: str, port: int, handler: Any, hits: list[str]) -> ThreadingHTTPServer:
    server_class = _Recording6 if ":" in address else _Recording
    server_class = type("Server", (server_class,), {"connections": hits})
    return server_class((address, port), handler)


def _nameservers() -> list[str]:
    found = []
    for line in Path("/etc/resolv.conf").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "nameserver":
            found.append(parts[1].split("%")[0])
    return found[:3] or ["127.0.0.53"]


def _loopback(address: str) -> bool:
    return address.startswith("127.") or address == "::1"


def _resolves(name: str, expected: str) -> bool:
    try:
        return expected in {info[4][0] for info in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)}
    except OSError:
        return False


# --- the world's DNS server ----------------------------------------------------------------------------

def serve_until_stopped(sock: socket.socket, once: Callable[[], None]) -> Callable[[], None]:
    """Call `once` (one accept or receive on `sock`) in a thread until the returned function is called, which
    stops the thread and lets it close `sock` itself: closing a socket another thread is waiting on would
    leave that thread to retry its wait on whatever socket gets the descriptor next (another test's)."""
    stop = threading.Event()
    sock.settimeout(0.05)

    def loop() -> None:
        try:
            while not stop.is_set():
                with contextlib.suppress(OSError):  # a wait that timed out, a client that hung up
                    once()
        finally:
            sock.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()

    def close() -> None:
        stop.set()
        thread.join(10)

    return close


def _dns(address: str) -> Callable[[], None]:
    """A UDP DNS server on `address`:53 answering NAMES (and FLIP); everything else does not exist."""
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((address, 53))
    flips = [0]

    def once() -> None:
        query, peer = sock.recvfrom(2048)
        answer = _answer(query, flips)
        if answer:
            sock.sendto(answer, peer)

    return serve_until_stopped(sock, once)


def _answer(query: bytes, flips: list[int]) -> bytes | None:
    if len(query) < 17:
        return None
    labels, at = [], 12
    while at < len(query) and query[at]:
        labels.append(query[at + 1:at + 1 + query[at]].decode("ascii", "replace").lower())
        at += 1 + query[at]
    qtype = struct.unpack("!H", query[at + 1:at + 3])[0]
    question = query[12:at + 5]
    name = ".".join(labels)
    if name == FLIP:
        flips[0] += qtype == 1
        addresses = [PUBLIC if flips[0] % 2 else "127.0.0.1"]
    else:
        addresses = NAMES.get(name, [])
    wanted = [a for a in addresses if (qtype == 28) == (":" in a) and qtype in (1, 28)]
    records = b"".join(struct.pack("!HHHIH", 0xC00C, qtype, 1, 0, 16 if qtype == 28 else 4)
                       + socket.inet_pton(socket.AF_INET6 if qtype == 28 else socket.AF_INET, a) for a in wanted)
    rcode = 0 if addresses else 3  # NXDOMAIN for names it does not know
    header = struct.pack("!HHHHHH", struct.unpack("!H", query[:2])[0], 0x8180 | rcode, 1, len(wanted), 0, 0)
    return header + question + records


# --- what the public server serves ---------------------------------------------------------------------

def _certificate(root: Path) -> tuple[Path, Path]:
    cert, key = root / "public-ca.pem", root / "public-key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=public.test",
                    "-addext", f"subjectAltName=DNS:public.test,IP:{PUBLIC},IP:{PUBLIC6}"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def _site(root: Path) -> Path:
    """A page, a pip "simple" index with one tiny wheel, and a git repository served over dumb http."""
    site = root / "site"
    site.mkdir()
    (site / "page.html").write_text(f"<html><body><p>{PUBLIC_TOKEN}</p></body></html>\n")
    wheel = site / "files" / "nbt_tiny-1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    _tiny_wheel(wheel)
    index = site / "simple" / PACKAGE
    index.mkdir(parents=True)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (index / "index.html").write_text(f'<html><body><a href="/files/{wheel.name}#sha256={digest}">'
                                      f"{wheel.name}</a></body></html>\n")
    work = root / "repo-work"
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}
    work.mkdir()
    (work / "README").write_text(f"{PUBLIC_TOKEN} in a repository\n")
    for args in (["init", "-q", "-b", "main", str(work)], ["-C", str(work), "add", "README"],
                 ["-C", str(work), "commit", "-q", "-m", "first"],
                 ["clone", "-q", "--bare", str(work), str(site / "repo.git")],
                 ["-C", str(site / "repo.git"), "update-server-info"]):
        subprocess.run(["git", *args], check=True, capture_output=True, env=env, timeout=60)
    return site


def _tiny_wheel(path: Path) -> None:
    files = {"nbt_tiny/__init__.py": "VALUE = 1\n",
             "nbt_tiny-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: nbt-tiny\nVersion: 1.0\n",
             "nbt_tiny-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                            "Tag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + "nbt_tiny-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in {**files, "nbt_tiny-1.0.dist-info/RECORD": record}.items():
            archive.writestr(name, text)
