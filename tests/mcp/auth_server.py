"""An OAuth authorization server for our test MCP server, made of the SDK's own pieces (mcp.server.auth: its
metadata, registration, authorize and token endpoints, and the bearer check in front of /mcp) with this
in-memory store behind them. Consent is given at once: /authorize redirects straight back with a code, so a
plain HTTP client following redirects stands in for the browser.

Access tokens live `token_seconds`; refresh tokens are rotated on use. POST /test/refuse-refresh makes every
refresh token so far unusable (what a server does when a sign-in is withdrawn)."""

from __future__ import annotations

import secrets
import time
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class MemoryAuthServer:
    def __init__(self, token_seconds: int) -> None:
        self.token_seconds = token_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        found = self.codes.get(authorization_code)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(authorization_code.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        del self.refresh[refresh_token.token]
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def refuse_refresh(self) -> None:
        self.refresh.clear()

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + self.token_seconds, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, expires_in=self.token_seconds, refresh_token=refresh,
                          scope=" ".join(scopes) or None)


def settings(port: int) -> AuthSettings:
    """The server is its own authorization server (the issuer is its origin) and protects /mcp."""
    return AuthSettings(issuer_url=f"http://127.0.0.1:{port}", resource_server_url=f"http://127.0.0.1:{port}/mcp",
                        client_registration_options=ClientRegistrationOptions(enabled=True),
                        validate_token_resource=True)


def add_test_routes(server: Any, store: MemoryAuthServer) -> None:
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse

    @server.custom_route("/test/refuse-refresh", methods=["POST"])
    async def refuse(request: Request) -> PlainTextResponse:
        store.refuse_refresh()
        return PlainTextResponse("refresh tokens refused from now on")
