"""One MCP server kept connected: connect in the background, watch it, restart it with backoff.

Each server has one supervising task that owns its transport and session (the SDK's context managers
must be entered and left in the same task); calls from turns go through the live session."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import math
import os
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

from desktop.kernel import secrets
from desktop.mcp import oauth
from desktop.mcp.mending import mended
from desktop.mcp.places import ServerPlaces
from desktop.mcp.settings import McpServerConfig
from desktop.tools.base import ToolError
from desktop.workspace.programs import InWorkspace

if TYPE_CHECKING:
    from anyio import CancelScope
    from mcp import ClientSession, types

log = logging.getLogger(__name__)

KEYRING_PREFIX = "keyring:"


@dataclass(frozen=True)
class Backoff:
    first: float = 1.0
    longest: float = 300.0


BACKOFF = Backoff()  # waits between restarts of a server that failed (tests shorten them)
# Seconds between pings of an idle remote server. Over streamable HTTP the SDK retries a dropped stream
# quietly, so a server that went away would otherwise stay "connected" until the next call failed.
PING_EVERY = 30.0
MAX_TOOL_PAGES = 100  # a server whose tool (prompt, resource) list never ends is broken, not large
# Seconds a stopping server gets to disconnect cleanly. Past that it is left behind, so Quit never waits on a
# server: its stdio process is killed, then the task gets KILL_GRACE more to notice before it is abandoned.
STOP_WITHIN = 2.0
KILL_GRACE = 1.0
LAST_WORDS = 4096  # bytes of a failed server's log looked at for the last thing it said
# Lines on stdout that are not MCP before the first message, past which the program is taken for no MCP server (a
# wrong command: `yes`, a shell, a tool printing its log). A server may print a few before it speaks MCP (a banner,
# a library's notice such as dotenv's), which the SDK passes over, so the bound leaves room for a chatty start;
# a program that is not a server passes it in an instant, where it would otherwise wait out the start timeout.
NOT_MCP_LINES = 50
QUOTED = 80  # characters of its first line quoted in the message
STDOUT_UNREAD = "Failed to parse JSONRPC message from server"  # what the SDK logs for each such line


class ConnectionLost(Exception):
    """The server went away (process exited, connection closed)."""


class ServerConnection:
    """States: connecting, connected, failed (with `error`, retried with backoff), refused (with `error`: it
    would run something the workspace holds, not tried again until its settings change or it is reconnected),
    stopped."""

    def __init__(self, name: str, config: McpServerConfig, places: ServerPlaces,
                 on_change: Callable[[ServerConnection], None], backoff: Backoff = BACKOFF) -> None:
        self.name = name
        self.config = config
        self.places = places
        self.log_file = places.log_file(name)
        self.state = "connecting"
        self.error: str | None = None
        self.tools: list[types.Tool] = []  # as the server describes them, after the allow-list
        self.prompts: list[types.Prompt] = []
        self.resources: list[types.Resource] = []
        self.resource_templates: list[types.ResourceTemplate] = []
        # Set once the first attempt has connected or failed (or the server was stopped): until then a turn may
        # wait for it (`McpServers.wait_for_pending`); retries after a failure are waited for by nobody.
        self.first_settled = asyncio.Event()
        self.wait_ends: float | None = None  # loop time past which no turn waits for its first attempt
        self._on_change = on_change
        self._backoff = backoff
        self._session: ClientSession | None = None
        self._lost: asyncio.Event = asyncio.Event()
        self._lost_reason = ""
        self._refresh: asyncio.Event = asyncio.Event()
        self._had_session = False  # the current attempt got connected (a later loss restarts the backoff)
        self._unauthorized = False  # the current attempt's server answered 401: it wants a sign-in
        self.signed_out = False  # it refused to renew our OAuth sign-in: a person must sign in again
        self._calls = 0  # in flight: no ping meanwhile (a server that answers one request at a time is busy)
        self._stopping = asyncio.Event()
        self._child: Any = None  # the stdio server process of the current attempt (anyio Process)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._supervise())

    async def stop(self) -> None:
        """Disconnect for good, within STOP_WITHIN + KILL_GRACE seconds whatever the server does: the session
        closes and a stdio child is stopped (never left running). A transport that does not wind down in time
        (a server that never answers, a cancellation lost inside the SDK) is left behind with its process
        killed; it retries nothing and reports nothing afterwards."""
        task, self._task = self._task, None
        self._stopping.set()
        if task is not None:
            task.cancel()
            done, _ = await asyncio.wait([task], timeout=STOP_WITHIN)
            if not done:
                killed = self._kill_child()
                log.warning("MCP server %s did not disconnect within %g s; left behind%s", self.name,
                            STOP_WITHIN, f" (killed its process {killed})" if killed else "")
                if killed:  # with its process gone the SDK's own shutdown ends at once
                    await asyncio.wait([task], timeout=KILL_GRACE)
        self._session = None
        self.tools, self.prompts, self.resources, self.resource_templates = [], [], [], []
        self.state, self.error = "stopped", None
        self._on_change(self)
        self.first_settled.set()

    async def wait_settled(self) -> None:
        """Until the first attempt has connected or failed (the CLI's `mcp test`)."""
        await self.first_settled.wait()

    async def call(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        result: types.CallToolResult = await self._request(
            lambda session: session.call_tool(tool, arguments, read_timeout_seconds=self.config.timeout),
            f"the call to {tool}")
        return result

    async def list_resources(self) -> tuple[list[types.Resource], list[types.ResourceTemplate]]:
        """The server's resources and resource templates as they are now (kept for `mcp test` as well)."""
        async def both(session: ClientSession) -> tuple[list[Any], list[Any]]:
            return (await _all_pages(session.list_resources, "resources"),
                    await self._optional(session.list_resource_templates, "resource_templates"))

        self.resources, self.resource_templates = await self._request(both, "listing its resources")
        return self.resources, self.resource_templates

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        from mcp import types

        result = await self._request(lambda session: session.read_resource(uri), f"reading {uri}")
        if not isinstance(result, types.ReadResourceResult):  # it asked the user something: not supported here
            raise ToolError(f"MCP server '{self.name}' wants more input to read {uri}, which is not supported")
        return result

    async def get_prompt(self, prompt: str, arguments: dict[str, str]) -> types.GetPromptResult:
        from mcp import types

        result = await self._request(lambda session: session.get_prompt(prompt, arguments), f"getting {prompt}")
        if not isinstance(result, types.GetPromptResult):  # it asked the user something: not supported here
            raise ToolError(f"MCP server '{self.name}' wants more input for {prompt}, which is not supported")
        return result

    async def _request(self, send: Callable[[ClientSession], Awaitable[Any]], doing: str) -> Any:
        """One request over the live session, within the server's timeout; every failure a ToolError saying
        what happened (a lost connection is marked so, and the server restarted)."""
        import anyio
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        session = self._session
        if session is None or self.state != "connected":
            raise ToolError(f"MCP server '{self.name}' is not connected ({self.describe()}); "
                            "it is restarted automatically, try again later")
        late = ToolError(f"MCP server '{self.name}': {doing} did not finish within {self.config.timeout:g} s and "
                         "was cancelled")
        self._calls += 1
        try:
            with anyio.fail_after(self.config.timeout + 1):  # the SDK bounds a tool call itself, not the others
                return await send(session)
        except TimeoutError:
            raise late from None
        except MCPError as exc:
            if exc.error.code == REQUEST_TIMEOUT:
                raise late from None
            if exc.error.code == CONNECTION_CLOSED:
                self._mark_lost("the server closed the connection")
                raise ToolError(f"MCP server '{self.name}' stopped during {doing}; it is being restarted") from None
            raise ToolError(f"MCP server '{self.name}': {exc.error.message}") from None
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self._mark_lost(f"{type(exc).__name__}: {exc}")
            raise ToolError(f"MCP server '{self.name}' could not be reached ({exc}); "
                            "it is being restarted") from None
        finally:
            self._calls -= 1

    def describe(self) -> str:
        if self.state == "connected":
            return "connected, " + ", ".join(_count(len(items), what) for items, what in (
                (self.tools, "tool"), (self.prompts, "prompt"), (self.resources, "resource")))
        if self.state in ("failed", "refused"):
            return f"{self.state}: {self.error}"
        return self.state

    def _set(self, state: str, error: str | None) -> None:
        if self._stopping.is_set():  # a transport left behind by `stop` has nothing more to say
            return
        self.state, self.error = state, error
        self._on_change(self)  # the tools are registered before anyone waiting for them wakes
        if state != "connecting":
            self.first_settled.set()

    def _kill_child(self) -> int | None:
        """SIGKILL the stdio server's process group (the SDK starts it in a session of its own); its pid, or
        None when there is no such process left (remote, or already reaped: its pid may belong to another)."""
        child = self._child
        if child is None or child.returncode is not None:
            return None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        return int(child.pid)

    def _mark_lost(self, reason: str) -> None:
        """Down at once, not once the old session is torn down: its tools stop being offered now."""
        if not self._lost.is_set():
            self._lost_reason = reason
            self._lost.set()
            if self.state == "connected":
                self._session = None
                self._set("failed", reason)

    async def _supervise(self) -> None:
        await asyncio.to_thread(load_sdk)
        delay = self._backoff.first
        while True:
            self._lost.clear()
            self._unauthorized = False
            self._set("connecting", self.error)
            try:
                await self._session_until_lost()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # every failure of a server ends in a retry, never in the app
                reason = self._why(exc)
                log.info("MCP server %s: %s", self.name, reason)
                if _caused_by(exc, InWorkspace):  # a retry meets the same files: only a person's change helps
                    self._set("refused", reason)
                    await self._stopping.wait()
                    return
                if self._had_session:  # it had worked: start again from the shortest wait
                    self._had_session = False
                    delay = self._backoff.first
                self._session = None
                if self.state != "failed":  # a lost connection was marked failed when it was noticed
                    self._set("failed", reason)
            # Checked, not left to the cancellation: a cancel that lands while an attempt is already failing is
            # dropped by anyio's task groups (they raise the failure alone), and retrying here would go on forever.
            if self._stopping.is_set():
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._backoff.longest)

    async def _session_until_lost(self) -> None:
        """One attempt: connect within the server's timeout (at least 5 s), then serve until the connection is
        lost. The whole connect is bounded, opening the transport too: an SSE server that accepts and never
        answers holds the first GET. The bound's scope encloses the transport's task groups (anyio wants scopes
        nested) and its deadline is lifted once connected."""
        import anyio

        within = max(self.config.timeout, 5.0)
        connecting = anyio.CancelScope(deadline=anyio.current_time() + within)
        try:
            with self._stderr() as errlog, connecting:
                start = errlog.tell()
                try:
                    await self._serve(errlog, connecting)
                except Exception as exc:
                    said = _last_words(errlog, start) if self.config.command and not connecting.cancel_called else ""
                    if said:  # the SDK says only "Connection closed"; why is what the program printed last
                        raise ConnectionLost(f"{_reason(exc)}; it said: {said}") from exc
                    raise
        except Exception:
            if not connecting.cancel_called:
                raise
        if connecting.cancel_called:  # whatever the SDK made of the deadline's cancellation, this is why
            raise TimeoutError(f"no answer from {self._address()} within {within:g} s")

    async def _serve(self, errlog: TextIO, connecting: CancelScope) -> None:
        import anyio
        from mcp import ClientSession

        async with contextlib.AsyncExitStack() as stack:
            transport = await self._transport(errlog)
            read, write = await stack.enter_async_context(transport)
            self._child = _stdio_process(transport) if self.config.command else None
            inner_send, inner_read = anyio.create_memory_object_stream[Any](0)
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            group.start_soon(self._pump, read, inner_send)
            session = await stack.enter_async_context(
                ClientSession(inner_read, write, message_handler=self._on_message))
            capabilities = (await session.initialize()).capabilities
            await self._list(session, capabilities)
            connecting.deadline = math.inf
            self._session = session
            self._had_session = True
            self._set("connected", None)
            ping_every = PING_EVERY if self.config.url else None  # a stdio child's exit ends its stream
            while True:
                waits = [asyncio.ensure_future(e.wait()) for e in (self._lost, self._refresh, self._stopping)]
                try:
                    done, _ = await asyncio.wait(waits, timeout=ping_every, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for wait in waits:
                        wait.cancel()
                if self._stopping.is_set():  # stopped, though the cancellation went astray
                    return
                if not done:
                    await self._ping(session)
                if self._lost.is_set():  # _mark_lost already dropped the session
                    raise ConnectionLost(self._lost_reason)
                if not self._refresh.is_set():
                    continue
                self._refresh.clear()
                with anyio.fail_after(max(self.config.timeout, 5.0)):
                    await self._list(session, capabilities)
                self._on_change(self)

    async def _pump(self, read: Any, inner: Any) -> None:
        """Pass messages to the session and notice when the server's side ends. An error the transport
        passes along (a line that is not JSON) is not the end: the stream closing is (a stdio child exited, an
        SSE stream broke). Streamable HTTP keeps its stream open while retrying, so there `_ping` finds out.
        Over NOT_MCP_LINES such lines from a stdio program before its first message end the attempt: it is no MCP
        server."""
        import anyio

        strays = _Strays(self.name, counted=bool(self.config.command))  # a remote's errors are not lines
        async with inner:
            try:
                async for item in read:
                    if isinstance(item, Exception):
                        item = mended(item) or item
                    strays.take(item)
                    await inner.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                pass
        self._mark_lost("the server closed the connection")

    async def _ping(self, session: ClientSession) -> None:
        """An idle remote server that does not answer a ping is gone: marked lost, so it is reconnected."""
        import anyio

        if self._calls:
            return
        try:
            with anyio.fail_after(max(self.config.timeout, 5.0)):
                await session.send_ping()
        except Exception as exc:  # whatever the transport raises, the server did not answer
            self._mark_lost(f"no answer to a ping ({_reason(exc)})")

    async def _on_message(self, message: Any) -> None:
        from mcp import types

        if isinstance(message, types.ToolListChangedNotification | types.PromptListChangedNotification
                      | types.ResourceListChangedNotification):
            self._refresh.set()

    async def _list(self, session: ClientSession, capabilities: types.ServerCapabilities) -> None:
        """Read the server's tools, and its prompts and resources when it says it has them."""
        allowed = self.config.tools
        tools = await _all_pages(session.list_tools, "tools")
        prompts = await self._optional(session.list_prompts, "prompts") if capabilities.prompts else []
        resources, templates = [], []
        if capabilities.resources:
            resources = await self._optional(session.list_resources, "resources")
            templates = await self._optional(session.list_resource_templates, "resource_templates")
        self.tools = [t for t in tools if allowed is None or t.name in allowed]
        self.prompts, self.resources, self.resource_templates = prompts, resources, templates

    async def _optional(self, fetch: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
        """A list beside the tools: a server that fails to give it still serves its tools (some say they have
        resources and then know no resource templates)."""
        from mcp import MCPError

        try:
            return await _all_pages(fetch, field)
        except MCPError as exc:
            log.info("MCP server %s: no %s (%s)", self.name, field.replace("_", " "), exc.error.message)
            return []

    def _why(self, exc: BaseException) -> str:
        """Why an attempt failed, in words: a server that wants a sign-in or that nothing listens for is said
        so, whatever the transport made of it."""
        if self.signed_out:
            return (f"signed out: the server did not renew the sign-in; sign in again (Settings → MCP servers, or "
                    f"`nanobot-tray mcp login {self.name}`)")
        if self._unauthorized:
            return (f"needs sign-in: {self._address()} answered 401 Unauthorized (sign in from Settings → MCP "
                    f"servers or with `nanobot-tray mcp login {self.name}`, or give it a token in 'headers', e.g. "
                    "Authorization: keyring:NAME)")
        if _caused_by(exc, ConnectionRefusedError):
            return f"connection refused by {self._address()} (is the server running?)"
        return _reason(exc)

    async def _on_response(self, response: Any) -> None:
        if response.status_code == 401:
            self._unauthorized = True

    async def _transport(self, errlog: TextIO) -> Any:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        config = self.config
        if config.command:
            env = await resolve_references(config.env, self.name)
            command, cwd, env = await asyncio.to_thread(self.places.start_in, self.name, config.command, config.cwd,
                                                        list(config.args), env)
            params = StdioServerParameters(command=command, args=list(config.args), env=env, cwd=str(cwd))
            return stdio_client(params, errlog=errlog)
        assert config.url
        headers = await resolve_references(config.headers, self.name)
        given = any(key.lower() == "authorization" for key in headers)  # a token of its own: no sign-in
        auth = None if given else await oauth.stored_auth(self.name, config.url, self._sign_in_refused)
        return remote_transport(config.url, headers, config.transport, self._on_response, auth)

    def _sign_in_refused(self) -> None:
        self.signed_out = True

    def _address(self) -> str:
        """Where the server is, for messages: its command line, or its URL without the parts that may carry a
        secret (user info, query, fragment)."""
        if not self.config.url:
            return shlex.join([self.config.command or "", *self.config.args])
        url = urlsplit(self.config.url)
        return url._replace(netloc=url.netloc.rpartition("@")[2], query="", fragment="").geturl()

    @contextlib.contextmanager
    def _stderr(self) -> Any:
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_file, "a+", encoding="utf-8", errors="replace") as handle:  # read back: `_last_words`
            yield handle


def _last_words(errlog: TextIO, start: int) -> str:
    """The last line the server printed to its log (stderr) since `start`, cut short: read from the open handle
    of the app's own log, at most its last few kilobytes."""
    try:
        end = os.fstat(errlog.fileno()).st_size
        tail = os.pread(errlog.fileno(), min(LAST_WORDS, max(0, end - start)), max(start, end - LAST_WORDS))
    except OSError:
        return ""
    lines = [line.strip() for line in tail.decode("utf-8", errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


class _Strays:
    """What one connection's server sent that is no message: the first logged as a warning, the rest at debug; and
    for a stdio program, over NOT_MCP_LINES of them before its first message end the attempt, quoting the first."""

    def __init__(self, server: str, counted: bool) -> None:
        self.server = server
        self.counted = counted  # until the first message
        self.count = 0
        self.first = ""
        self.said = False

    def take(self, item: Any) -> None:
        if not isinstance(item, Exception):
            self.counted = False
            return
        line = _first_line(item)
        log.log(logging.DEBUG if self.said else logging.WARNING, "MCP server %s sent what is not an MCP message "
                "(logged once per connection; the rest with -v): %s", self.server, line)
        self.said = True
        self.first = self.first or line
        if self.counted:
            self.count += 1
            if self.count > NOT_MCP_LINES:
                raise ConnectionLost(f"it does not look like an MCP server: it printed over {NOT_MCP_LINES} lines "
                                     f"that are not MCP, the first “{self.first}”; check its command and arguments")


def _first_line(error: Exception) -> str:
    """The line the SDK could not read as a message, as plain text cut to QUOTED characters (the parser's error
    holds it as its input: the text of a line that is not JSON, the parsed value of JSON that is no JSON-RPC
    message, such as a program's JSON log line)."""
    errors = getattr(error, "errors", None)
    found = next((e.get("input") for e in errors()), None) if callable(errors) else None
    if found is not None and not isinstance(found, str):
        found = json.dumps(found, ensure_ascii=False, separators=(",", ":"), default=str)
    text = found if isinstance(found, str) else str(error).splitlines()[0] if str(error) else type(error).__name__
    text = "".join(c if c.isprintable() else " " for c in text).strip()
    return text[:QUOTED] + ("…" if len(text) > QUOTED else "")


def load_sdk() -> None:
    """The MCP SDK takes ~0.6 s to import: loaded off the event loop, when the first server connects. What it
    made (90,000 objects: modules, classes, pydantic's schemas) lives as long as the process, so it is frozen out
    of garbage collection: in the app the collector runs on the GUI thread, and its next walk of the young
    objects took 29 ms there, only to find them all alive. Only once: what is young later is the app's own."""
    if "mcp.client.streamable_http" in sys.modules:
        return
    import anyio._backends._asyncio  # noqa: F401  (anyio imports it at its first use: on the loop's thread)
    import mcp.client.sse
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401

    logging.getLogger(mcp.client.stdio.__name__).addFilter(_unread_lines_unlogged)
    gc.freeze()


def _unread_lines_unlogged(record: logging.LogRecord) -> bool:
    """The SDK logs a traceback for every stdout line of a server it cannot read as a message: a program that is no
    server put hundreds of lines of them on the terminal (`mcp test`) and in the app's log at every try, before the
    one line that says what is wrong. `_pump` logs the first of each connection and counts them, quoting the first
    when there are so many that the program is no server."""
    return record.msg != STDOUT_UNREAD


def _stdio_process(transport: Any) -> Any:
    """The server process `stdio_client` started (an anyio Process), so that a stop left behind can still kill
    it. The SDK does not hand it out: it is a local of the context manager's generator, read once entered."""
    frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
    return frame.f_locals.get("process") if frame is not None else None


def remote_transport(url: str, headers: dict[str, str], transport: str | None,
                     on_response: Callable[[Any], Awaitable[None]], auth: Any = None) -> Any:
    """SSE for servers whose URL ends in /sse (as peers decide), streamable HTTP otherwise. `on_response` sees
    each HTTP response (the SDK turns a refused sign-in into a bare "error response"); `auth`: an OAuth sign-in
    (desktop/mcp/oauth.py)."""
    from mcp.shared._httpx_utils import create_mcp_http_client

    def client(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        made = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        made.event_hooks = {**made.event_hooks, "response": [*made.event_hooks.get("response", []), on_response]}
        return made

    kind = transport or ("sse" if url.rstrip("/").endswith("/sse") else "streamable-http")
    if kind == "sse":
        from mcp.client.sse import sse_client

        return sse_client(url, headers=headers or None, httpx_client_factory=client, auth=auth)
    return _owned_http(url, client(headers=headers or None, auth=auth))


async def initialize_once(config: McpServerConfig, name: str, auth: Any) -> None:
    """Connect to a remote server with `auth` and say hello, then disconnect: what makes an interactive
    sign-in happen (the server's 401 starts it) and proves it worked."""
    from mcp import ClientSession

    assert config.url
    await asyncio.to_thread(load_sdk)
    headers = await resolve_references(config.headers, name)

    async def ignore(_response: Any) -> None:
        pass

    try:
        async with remote_transport(config.url, headers, config.transport, ignore, auth) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
    except Exception as exc:  # the transport's exception group said only "unhandled errors in a TaskGroup"
        if _caused_by(exc, ConnectionRefusedError):
            raise ConnectionError(f"connection refused by {config.url} (is the server running?)") from exc
        raise ConnectionError(_reason(exc)) from exc


@contextlib.asynccontextmanager
async def _owned_http(url: str, client: Any) -> Any:
    from mcp.client.streamable_http import streamable_http_client

    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams


async def resolve_references(values: dict[str, str], server: str) -> dict[str, str]:
    """`keyring:NAME` values fetched from the OS keyring now; the values are never stored or logged."""
    names = {k: v[len(KEYRING_PREFIX):] for k, v in values.items() if v.startswith(KEYRING_PREFIX)}
    if not names:
        return dict(values)

    def fetch() -> dict[str, str | None]:
        return {k: secrets.get_key(name) for k, name in names.items()}

    found = await asyncio.to_thread(fetch)
    missing = [names[k] for k, v in found.items() if not v]
    if missing:
        raise LookupError(f"no key '{missing[0]}' in the OS keyring (store it with "
                          f"`nanobot-tray keys set {missing[0]}`)")
    return {k: found.get(k) or v for k, v in values.items()}


async def _all_pages(fetch: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    """Every item of a paginated list (tools, prompts, resources), within MAX_TOOL_PAGES pages."""
    from mcp import types

    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await fetch(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            return items
    raise ConnectionLost(f"the server listed more than {MAX_TOOL_PAGES} pages of {field.replace('_', ' ')} and "
                         "kept going")


def _count(number: int, what: str) -> str:
    return f"{number} {what}{'' if number == 1 else 's'}"


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether `kind` is anywhere in what raised `exc`: its groups, causes and contexts."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return True
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return False


def _reason(exc: BaseException) -> str:
    """One line a person can act on, from whatever a transport raised (often an exception group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, TimeoutError):
        return str(exc) or "no answer in time"
    if isinstance(exc, ConnectionLost | LookupError):
        return str(exc)
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:300]
