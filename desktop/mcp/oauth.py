"""Signing in to remote MCP servers that want OAuth, through the SDK's client (mcp.client.auth: discovery of the
server's authorization server, dynamic client registration, PKCE, token refresh).

A sign-in is only ever started by the person (Settings → MCP servers → Sign in): the browser opens at the
server's consent page and comes back to a loopback address of ours (127.0.0.1, a port the system chooses).
Tokens and the registered client are kept in the OS keyring, one entry a server, bound to its URL. The
background connection uses them and renews the access token a little before it expires; when the server
refuses to renew it, the connection never opens a browser by itself: it fails saying the person must sign in
again (desktop/mcp/__init__.py turns that into a notification)."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from desktop.kernel import secrets

if TYPE_CHECKING:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

log = logging.getLogger(__name__)

SIGN_IN_WITHIN = 300.0  # seconds a person has to finish signing in in the browser
RENEW_EARLY = 60.0  # seconds before expiry a token is renewed (at most a tenth of its lifetime)
CLIENT_NAME = "Nanobot Tray"


class SignInNeeded(Exception):
    """The server wants a person to sign in (again); the background connection does not open a browser."""


class SignInFailed(Exception):
    """An interactive sign-in did not end with tokens; the message says why, for a person."""


def entry_name(server: str) -> str:
    return f"mcp.{server}.oauth".replace(",", "_")


class KeyringTokenStorage:
    """The SDK's token storage on one keyring entry: the tokens (with when they expire, which the SDK does not keep)
    and the registered client, for one server at one URL (a changed URL starts over)."""

    def __init__(self, server: str, url: str) -> None:
        self.server = server
        self.url = url

    async def read(self) -> dict[str, Any]:
        def fetch() -> str | None:
            return secrets.get_key(entry_name(self.server))

        raw = await asyncio.to_thread(fetch)
        try:
            data = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            return {}
        return data if isinstance(data, dict) and data.get("url") == self.url else {}

    async def _update(self, **values: Any) -> None:
        data = {**await self.read(), **values, "url": self.url}
        text = json.dumps(data)
        await asyncio.to_thread(lambda: secrets.set_key(entry_name(self.server), text))

    async def drop_tokens(self) -> None:
        """The tokens no longer work; the registered client stays."""
        await self._update(tokens=None, expires_at=None, lifetime=None)

    async def forget(self) -> None:
        """Tokens and client gone (signed out, or a sign-in starting over)."""
        await asyncio.to_thread(lambda: secrets.delete_key(entry_name(self.server)))

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        tokens = (await self.read()).get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        lifetime = tokens.expires_in
        await self._update(tokens=tokens.model_dump(mode="json", exclude_none=True), lifetime=lifetime,
                           expires_at=time.time() + lifetime if lifetime else None)

    async def renew_at(self) -> float | None:
        """When the stored access token should be renewed (None: it does not expire)."""
        data = await self.read()
        return renew_time(data.get("expires_at"), data.get("lifetime"))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        client = (await self.read()).get("client")
        return OAuthClientInformationFull.model_validate(client) if client else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._update(client=client_info.model_dump(mode="json", exclude_none=True))


def renew_time(expires_at: float | None, lifetime: float | None) -> float | None:
    if expires_at is None:
        return None
    return expires_at - min(RENEW_EARLY, (lifetime or 0) / 10)


async def signed_in(server: str, url: str) -> bool:
    """Whether tokens for this server at this URL are stored (they may still be refused)."""
    return await KeyringTokenStorage(server, url).get_tokens() is not None


async def sign_out(server: str, url: str) -> None:
    await KeyringTokenStorage(server, url).forget()


def _provider(url: str, storage: KeyringTokenStorage, redirect_uri: str,
              redirect: Callable[[str], Any], callback: Callable[[], Any]) -> OAuthClientProvider:
    """The SDK's provider, with what it lacks here: a token's expiry survives a restart (the SDK knows it only
    for tokens it got itself) and a token is renewed a little before it expires, not once it has."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.auth.oauth2 import OAuthContext
    from mcp.shared.auth import OAuthClientMetadata

    class EarlyContext(OAuthContext):
        def update_token_expiry(self, token: OAuthToken) -> None:
            lifetime = token.expires_in
            self.token_expiry_time = renew_time(time.time() + lifetime, lifetime) if lifetime else None

    class Provider(OAuthClientProvider):
        async def _initialize(self) -> None:
            await super()._initialize()
            self.context.token_expiry_time = await storage.renew_at()

    metadata = OAuthClientMetadata(client_name=CLIENT_NAME, redirect_uris=[redirect_uri],  # type: ignore[list-item]
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                   token_endpoint_auth_method="none")
    provider = Provider(url, metadata, storage, redirect_handler=redirect, callback_handler=callback)
    provider.context = EarlyContext(server_url=url, client_metadata=metadata, storage=storage,
                                    redirect_handler=redirect, callback_handler=callback)
    return provider


async def stored_auth(server: str, url: str, signed_out: Callable[[], None]) -> OAuthClientProvider | None:
    """For the background connection: the stored sign-in (None when there is none). Should the server want a
    new one (its refresh refused), the tokens are dropped and `signed_out` is called instead of a browser."""
    storage = KeyringTokenStorage(server, url)
    try:
        if await storage.get_tokens() is None:
            return None
    except secrets.KeyringUnavailable as exc:  # no sign-in to use: the server says 401 if it wants one
        log.info("MCP server %s: its sign-in cannot be read (%s)", server, exc)
        return None

    async def refuse(_url: str) -> None:
        await storage.drop_tokens()
        signed_out()
        raise SignInNeeded(f"{server} wants you to sign in again")

    async def never() -> AuthorizationCodeResult:
        raise SignInNeeded(f"{server} wants you to sign in again")

    return _provider(url, storage, "http://127.0.0.1/callback", refuse, never)


async def sign_in(server: str, url: str, connect: Callable[[OAuthClientProvider], Any],
                  open_browser: Callable[[str], None], within: float = SIGN_IN_WITHIN) -> None:
    """Sign in with the person in the browser: `open_browser(url)` shows the server's consent page, which sends
    them back to our loopback address; `connect(provider)` connects once with the provider (the server's 401
    starts the flow). A new client is registered for this sign-in's address. Raises SignInFailed."""
    storage = KeyringTokenStorage(server, url)
    await storage.forget()
    async with _loopback(server) as (redirect_uri, came_back):
        async def redirect(consent_url: str) -> None:
            open_browser(consent_url)

        provider = _provider(url, storage, redirect_uri, redirect, lambda: came_back)
        try:
            async with asyncio.timeout(within):
                await connect(provider)
        except TimeoutError:
            raise SignInFailed(f"not signed in to {server}: nothing came back from the browser within "
                               f"{within / 60:g} minutes") from None
        except Exception as exc:
            refused = came_back.exception() if came_back.done() and not came_back.cancelled() else None
            why = refused or exc
            raise SignInFailed(f"not signed in to {server}: {why}") from None
    if await storage.get_tokens() is None:
        raise SignInFailed(f"not signed in to {server}: the server gave no tokens")


@contextlib.asynccontextmanager
async def _loopback(server: str) -> AsyncIterator[tuple[str, asyncio.Future[AuthorizationCodeResult]]]:
    """A one-page HTTP server on 127.0.0.1 (a port the system chooses) that the browser is sent back to: its
    redirect URI, and the future of the code (or the refusal) it brings."""
    from mcp.shared.auth import AuthorizationCodeResult

    came_back: asyncio.Future[AuthorizationCodeResult] = asyncio.get_running_loop().create_future()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                request = await reader.readuntil(b"\r\n\r\n")
            target = request.split(b" ", 2)[1].decode("latin-1")
            parts = urlsplit(target)
            query = {key: values[0] for key, values in parse_qs(parts.query).items()}
            if parts.path != "/callback":
                status, page = "404 Not Found", "Nothing here."
            elif "error" in query:
                why = query.get("error_description") or query["error"]
                status, page = "200 OK", f"{server} did not sign you in: {why}."
                if not came_back.done():
                    came_back.set_exception(SignInFailed(page))
            elif "code" in query:
                status, page = "200 OK", f"Signed in to {server}. You can close this tab."
                if not came_back.done():
                    came_back.set_result(AuthorizationCodeResult(code=query["code"], state=query.get("state"),
                                                                 iss=query.get("iss")))
            else:
                status, page = "400 Bad Request", "This address only takes a sign-in's answer."
            body = f"<!doctype html><meta charset=utf-8><title>Nanobot Tray</title><p>{html.escape(page)}</p>".encode()
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: "
                         f"{len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
            await writer.drain()
        except (OSError, IndexError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # not a browser's request: nothing to answer
        finally:
            writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/callback", came_back
    finally:
        listener.close()
        if not came_back.done():
            came_back.cancel()
        elif not came_back.cancelled():
            came_back.exception()  # retrieved: a refusal already reported is not logged as never seen
