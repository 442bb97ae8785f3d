"""The sandbox's one way out in `internet` mode: an HTTP proxy in the app's process that connects to public
internet addresses and nothing else.

Why a proxy, and not a user-mode network stack (slirp4netns, pasta) handing the sandbox a network interface:
such a stack reaches everything this computer reaches — the local network, the router, this computer's own
non-loopback addresses — and filtering that takes firewall rules inside a namespace the app would have to
enter, which Ubuntu's AppArmor refuses to unprivileged programs other than bwrap. With the proxy the
sandbox's network namespace holds loopback only; its one way out is this proxy's Unix socket, bound into the
sandbox (a socket file is reached by path, whatever the namespace) and relayed to a port on the sandbox's
own loopback (desktop/tools/sandbox_network.py). A command that ignores the proxy settings and opens its own
sockets finds no route at all.

The proxy resolves every name itself and judges every address before it connects, per connection:
`blocked_reason` refuses loopback, private, link-local (the cloud metadata address 169.254.169.254 among
them), carrier-grade NAT, multicast, reserved and unique-local (fd00:ec2::254) addresses, and IPv4 carried
inside IPv6; `refusal` adds every address of this computer's interfaces and the networks they sit on, so a
public address of this computer (a global IPv6 address, say) cannot reach a service listening on all
addresses, and a public address on the local network cannot reach the printer or the router. It then
connects to the address it checked, never to the name again, so a name that answers differently the second
time (DNS rebinding) gains nothing. A name with any non-public address is refused whole.

One proxy serves one `exec` call: it starts with the call and closes with it, with every connection it relays.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, urlsplit, urlunsplit

from desktop.tools.web import IPAddress, IPNetwork, blocked_reason

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 64  # open at once per command: a command cannot make the app hold sockets without bound
_HEAD_TIMEOUT = 30.0
_CONNECT_TIMEOUT = 10.0
_NEXT_TRY = 0.25  # seconds an address has before the next one is tried too
_CHUNK = 65536
_DIR_ROOM = 60  # bytes of folder path before "/nanobot-tray-egress-XXXXXXXX/egress.sock"
_HOP_BY_HOP = ("proxy-", "connection:", "keep-alive:")
_WHERE = "commands in the sandbox reach public internet addresses only (tools.exec.network: internet)"


class Refused(Exception):
    """A destination the sandbox may not reach; the message says why, for the command's output."""


class _BadRequest(Exception):
    """Not a request this proxy serves."""


_Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


@dataclass(frozen=True)
class _Request:
    host: str
    port: int
    forward: bytes | None  # the request as sent on to the server (plain http); None for a CONNECT tunnel


@contextlib.asynccontextmanager
async def egress_proxy() -> AsyncIterator[Path]:
    """A proxy on a fresh Unix socket in a folder only this user can enter; yields the socket's path and
    closes everything it relays when the block ends."""
    folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="nanobot-tray-egress-", dir=_short_dir()))
    proxy = EgressProxy()
    path = folder / "egress.sock"
    try:
        server = await asyncio.start_unix_server(proxy.serve, path=str(path))
        try:
            yield path
        finally:
            server.close()
            await proxy.close()
            await server.wait_closed()
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)


def _short_dir() -> str:
    """The user's private runtime folder, else the temp folder, else /tmp: the first whose path leaves room
    for the socket's (a Unix socket's path has at most 107 bytes)."""
    for candidate in (os.environ.get("XDG_RUNTIME_DIR"), tempfile.gettempdir()):
        if candidate and len(os.fsencode(candidate)) <= _DIR_ROOM and os.path.isdir(candidate):
            return candidate
    return "/tmp"


class EgressProxy:
    """HTTP proxy requests in (CONNECT host:port for https and anything else over TLS, absolute http:// URLs
    for plain http); public internet connections out."""

    def __init__(self) -> None:
        self._handlers: set[asyncio.Task[object]] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            if len(self._handlers) > MAX_CONNECTIONS:
                await _answer(writer, 503, f"more than {MAX_CONNECTIONS} connections at once")
                return
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError):
            pass  # the command hung up
        finally:
            self._handlers.discard(task)
            writer.close()

    async def close(self) -> None:
        """End every connection still open (the command is over)."""
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(_HEAD_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
            request = _parse(head)
        except (asyncio.LimitOverrunError, TimeoutError):
            await _answer(writer, 400, "no complete HTTP request head")
            return
        except (_BadRequest, ValueError) as exc:  # ValueError: urlsplit's "Invalid IPv6 URL"
            await _answer(writer, 400, str(exc))
            return
        try:
            addresses = await destination(request.host, request.port)
        except Refused as exc:
            log.info("sandboxed command: connection to %s port %d refused: %s", _printable(request.host),
                     request.port, exc)
            await _answer(writer, 403, f"{exc}; {_WHERE}")
            return
        except LookupError as exc:
            await _answer(writer, 502, str(exc))
            return
        upstream = await _connect(addresses, request.port)
        if isinstance(upstream, str):
            await _answer(writer, 502, f"could not connect to {request.host} port {request.port}: {upstream}")
            return
        up_reader, up_writer = upstream
        try:
            if request.forward is None:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                up_writer.write(request.forward)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()


async def destination(host: str, port: int) -> list[IPAddress]:
    """The addresses `host` resolves to, all of them public and none of this computer's. Raises Refused
    for any other, LookupError when the name does not resolve."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError) as exc:  # ValueError: a NUL in the name
        raise LookupError(f"cannot resolve {_printable(host)}: {getattr(exc, 'strerror', None) or exc}") from None
    addresses = list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos))
    if not addresses:
        raise LookupError(f"cannot resolve {_printable(host)}")
    local = await asyncio.to_thread(local_networks)
    for address in addresses:
        reason = refusal(address, local)
        if reason:
            mapped = _mapped(address)
            spelled = f"::ffff:{mapped}" if mapped else str(address)
            shown = "" if _printable(host) == spelled else f" is {spelled}, which"
            raise Refused(f"{_printable(host)}{shown} is {reason}")
    return addresses


def refusal(address: IPAddress, local: Sequence[IPNetwork]) -> str | None:
    """Why the sandbox may not reach `address` (in words that follow "is"), or None."""
    reason = blocked_reason(address)
    if reason:
        if reason == "not public":
            return "not a public address"
        return f"{'an' if reason[0] in 'aeiou' else 'a'} {reason} address"
    plain = _mapped(address) or address
    if any(plain in network for network in local):
        return "an address of this computer or of its local network"
    return None


def _mapped(address: IPAddress) -> ipaddress.IPv4Address | None:
    return address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None


def local_networks() -> list[IPNetwork]:
    """The networks of this computer's interfaces (their addresses and what lies on the same link).
    Blocking: called in a worker thread, which also pays for psutil's import on the first connection."""
    import psutil  # not at the app's start-up: most sessions never open a connection from the sandbox

    found: list[IPNetwork] = []
    for entries in psutil.net_if_addrs().values():
        for entry in entries:
            if entry.family not in (socket.AF_INET, socket.AF_INET6) or not entry.netmask:
                continue
            address = ipaddress.ip_address(entry.address.split("%")[0])
            prefix = bin(int(ipaddress.ip_address(entry.netmask))).count("1")
            found.append(ipaddress.ip_network(f"{address}/{prefix}", strict=False))
    return found


def _parse(head: bytes) -> _Request:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise _BadRequest("not an HTTP proxy request")
    method, target, version = parts
    if method == "CONNECT":
        host, port = _authority(urlsplit(f"//{target}"), None)
        return _Request(host, port, None)
    url = urlsplit(target)
    if url.scheme != "http":
        raise _BadRequest("only http:// URLs are forwarded; https and other protocols go through CONNECT")
    host, port = _authority(url, 80)
    path = urlunsplit(("", "", url.path or "/", url.query, ""))
    headers = [line for line in lines[1:] if line and not line.lower().startswith(_HOP_BY_HOP)]
    forward = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])
    return _Request(host, port, forward.encode("latin-1"))


def _authority(url: SplitResult, default_port: int | None) -> tuple[str, int]:
    try:
        host, port = url.hostname, url.port or default_port
    except ValueError:
        raise _BadRequest("the port is not a number from 1 to 65535") from None
    if not host or not port:
        raise _BadRequest("a host and a port are needed")
    return host, port


async def _open(address: str, port: int) -> _Streams:
    async with asyncio.timeout(_CONNECT_TIMEOUT):
        return await asyncio.open_connection(address, port)


async def _connect(addresses: Sequence[IPAddress], port: int) -> _Streams | str:
    """A connection to the first address that answers (each one checked already), or why none did. As
    browsers do (Happy Eyeballs, RFC 8305), IPv6 and IPv4 addresses take turns and the next one gets a try
    when the last has not answered within a quarter second, so a network that silently drops IPv6 costs
    that, not the whole timeout."""
    queue = _interleaved(addresses)
    pending: set[asyncio.Task[_Streams]] = set()
    why = "no address"
    try:
        while queue or pending:
            if queue:
                pending.add(asyncio.create_task(_open(str(queue.pop(0)), port)))
            done, pending = await asyncio.wait(pending, timeout=_NEXT_TRY if queue else None,
                                               return_when=asyncio.FIRST_COMPLETED)
            connected = []
            for task in done:
                try:
                    connected.append(task.result())
                except TimeoutError:
                    why = "timed out"
                except OSError as exc:
                    why = exc.strerror or str(exc)
            for _, extra in connected[1:]:
                extra.close()
            if connected:
                return connected[0]
        return why
    finally:
        for task in pending:
            task.cancel()
        for late in await asyncio.gather(*pending, return_exceptions=True):
            if isinstance(late, tuple):  # connected while being cancelled
                late[1].close()


def _interleaved(addresses: Sequence[IPAddress]) -> list[IPAddress]:
    """The resolver's order, but the families alternating, starting with the first address's."""
    first = [a for a in addresses if a.version == addresses[0].version]
    other = [a for a in addresses if a.version != addresses[0].version]
    return [a for pair in itertools.zip_longest(first, other) for a in pair if a is not None]


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy until the end of one direction, then pass the end on (the other direction may go on)."""
    try:
        while data := await source.read(_CHUNK):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except OSError:
        sink.close()


async def _answer(writer: asyncio.StreamWriter, status: int, message: str) -> None:
    """An HTTP answer the command's program shows: the reason in the status line and the body."""
    text = _printable(message)
    phrase = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway", 503: "Service Unavailable"}[status]
    body = f"nanobot-tray sandbox: {text}\n".encode("ascii")
    writer.write(f"HTTP/1.1 {status} {phrase} ({text})\r\nContent-Type: text/plain\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("ascii") + body)
    with contextlib.suppress(OSError):
        await writer.drain()


def _printable(text: str) -> str:
    """`text` safe for a status line and a log: printable ASCII, bounded."""
    return "".join(c if " " <= c <= "~" else "?" for c in text)[:300]
