"""OAuth sign-in to a remote MCP server, end to end on 127.0.0.1: our test server behind the SDK's own
authorization-server pieces (tests/mcp/auth_server.py), the app's client through the SDK's OAuth client, and
an HTTP client following the redirects in place of the browser. Tokens live in the (in-memory) keyring."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from desktop.core import Core
from desktop.kernel.notices import Notice
from desktop.mcp import McpServers, manage
from desktop.mcp.oauth import SignInFailed
from desktop.mcp.settings import McpConfig
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import RemoteServer
from tests.mcp.test_tools import started, turn, until, unwrapped
from tests.memkeyring import MemoryKeyring

TOKEN_SECONDS = 4  # the test server's access tokens: short, so that renewing them happens within a test


class Browser:
    """Stands in for the person's browser: opens the consent page and follows its redirects (consent is given
    at once by the test server), ending at the app's loopback page."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.pages: list[httpx.Response] = []
        self._visits: list[asyncio.Task[None]] = []

    def open(self, url: str) -> None:
        self.opened.append(url)
        self._visits.append(asyncio.ensure_future(self._visit(url)))

    async def _visit(self, url: str) -> None:
        async with httpx.AsyncClient(follow_redirects=True, timeout=30) as client:
            self.pages.append(await client.get(url))


@pytest.fixture
def oauth_server(remote_servers: Callable[..., RemoteServer]) -> RemoteServer:
    return remote_servers("--http", None, "--oauth", str(TOKEN_SECONDS))


@pytest.fixture
async def core(home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring,
               oauth_server: RemoteServer) -> AsyncIterator[Core]:
    core = await started(home_dir, model_config, {"test": oauth_server.config(timeout=10)})
    yield core
    await core.close()


def stored(memory_keyring: MemoryKeyring) -> dict[str, Any]:
    value = memory_keyring.store.get(("nanobot-tray", "mcp.test.oauth"))
    return json.loads(value) if value else {}


async def signed_in(core: Core, browser: Browser) -> None:
    servers = core.get(McpServers)
    await until(lambda: "needs sign-in" in (servers.servers["test"].error or ""))
    await manage.sign_in(servers, "test", core.config.section(McpConfig).servers["test"], browser.open)
    await until(lambda: servers.servers["test"].state == "connected")


async def test_sign_in_in_the_browser_then_the_tools_work(core: Core, fake: FakeOpenAI, home_dir: Path,
                                                          memory_keyring: MemoryKeyring,
                                                          oauth_server: RemoteServer) -> None:
    servers = core.get(McpServers)
    await until(lambda: servers.servers["test"].state == "failed")
    assert servers.servers["test"].error.startswith(f"needs sign-in: {oauth_server.url} answered 401 Unauthorized "
                                                    "(sign in from Settings → MCP servers")
    browser = Browser()
    await signed_in(core, browser)
    consent = urlsplit(browser.opened[0])
    asked = parse_qs(consent.query)
    assert consent.netloc == f"127.0.0.1:{oauth_server.port}" and consent.path == "/authorize"
    assert asked["code_challenge_method"] == ["S256"] and asked["response_type"] == ["code"]  # PKCE
    assert asked["redirect_uri"][0].startswith("http://127.0.0.1:")  # our loopback, a port of its own
    assert asked["resource"] == [oauth_server.url]
    assert browser.pages[0].status_code == 200 and "Signed in to test." in browser.pages[0].text
    kept = stored(memory_keyring)
    assert kept["url"] == oauth_server.url and kept["tokens"]["access_token"] and kept["tokens"]["refresh_token"]
    assert kept["client"]["client_id"] and kept["client"]["client_name"] == "Nanobot Tray"  # registered itself
    assert kept["tokens"]["access_token"] not in (home_dir / "config.yaml").read_text(encoding="utf-8")
    assert unwrapped(await turn(core, fake, "mcp_test_echo", {"text": "hi"})) == "hi"

    await manage.sign_out(servers, "test", core.config.section(McpConfig).servers["test"])
    assert stored(memory_keyring) == {}
    await until(lambda: "needs sign-in" in (servers.servers["test"].error or ""))


async def test_tokens_are_renewed_before_they_expire_and_survive_a_restart(
        core: Core, fake: FakeOpenAI, home_dir: Path, model_config: dict[str, Any],
        memory_keyring: MemoryKeyring, oauth_server: RemoteServer) -> None:
    await signed_in(core, Browser())
    first = stored(memory_keyring)["tokens"]["access_token"]
    await until(lambda: stored(memory_keyring)["tokens"]["access_token"] != first, timeout=TOKEN_SECONDS * 5)
    # renewed no sooner than a tenth of its lifetime before it expires (0.4 s): a second on, the first token has
    # expired, and the call below is refused unless the renewed one is used
    await asyncio.sleep(1.0)
    assert core.get(McpServers).servers["test"].state == "connected"
    assert unwrapped(await turn(core, fake, "mcp_test_echo", {"text": "still"})) == "still"
    await core.close()

    again = await started(home_dir, model_config, {"test": oauth_server.config(timeout=10)})  # tokens from the keyring
    try:
        await until(lambda: again.get(McpServers).servers["test"].state == "connected")
        assert unwrapped(await turn(again, fake, "mcp_test_echo", {"text": "back"})) == "back"
    finally:
        await again.close()


async def test_a_refused_renewal_asks_the_person_to_sign_in_again(core: Core, memory_keyring: MemoryKeyring,
                                                                  oauth_server: RemoteServer) -> None:
    notices = Conversation(core)
    await signed_in(core, Browser())
    httpx.post(f"http://127.0.0.1:{oauth_server.port}/test/refuse-refresh", timeout=10).raise_for_status()
    servers = core.get(McpServers)
    await until(lambda: servers.servers["test"].state == "failed", timeout=TOKEN_SECONDS * 5)
    assert servers.servers["test"].error == ("signed out: the server did not renew the sign-in; sign in again "
                                             "(Settings → MCP servers, or `nanobot-tray mcp login test`)")
    await asyncio.sleep(0.5)  # retries meanwhile (the backoff is short in tests) do not say it again
    said = [(n.title, n.body) for n in notices.of(Notice)]
    assert said == [("Sign in to test again", "The server did not renew the sign-in. Sign in again in Settings → "
                     "MCP servers; its tools are back once you have.")]
    assert "tokens" not in stored(memory_keyring) or not stored(memory_keyring)["tokens"]


async def test_a_sign_in_nobody_finishes_ends_with_a_clear_message(core: Core, memory_keyring: MemoryKeyring) -> None:
    servers = core.get(McpServers)
    await until(lambda: "needs sign-in" in (servers.servers["test"].error or ""))
    opened: list[str] = []
    with pytest.raises(SignInFailed, match="^not signed in to test: nothing came back from the browser within"):
        from desktop.mcp import oauth
        from desktop.mcp.connection import initialize_once

        config = core.config.section(McpConfig).servers["test"]
        await oauth.sign_in("test", config.url or "", lambda auth: initialize_once(config, "test", auth),
                            opened.append, within=2)
    assert len(opened) == 1 and stored(memory_keyring).get("tokens") is None
