"""First-run discovery: local OpenAI-compatible model servers and an existing nanobot workspace."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx


@dataclass(frozen=True)
class KnownServer:
    """Where a local server usually listens, and how litellm should talk to it."""

    name: str
    port: int
    prefix: str  # litellm provider prefix for its models
    native_base: bool = False  # litellm's prefix wants the server root, not its /v1 endpoint


KNOWN_SERVERS: tuple[KnownServer, ...] = (
    KnownServer("Ollama", 11434, "ollama_chat", native_base=True),
    KnownServer("LM Studio", 1234, "openai"),
    KnownServer("llama.cpp", 8080, "openai"),
)


@dataclass(frozen=True)
class LocalServer:
    """A server that answered, with the model ids it serves."""

    kind: KnownServer
    root: str  # e.g. http://127.0.0.1:1234
    models: tuple[str, ...]

    @property
    def api_base(self) -> str:
        return self.root if self.kind.native_base else f"{self.root}/v1"

    def model_for(self, model_id: str) -> str:
        return f"{self.kind.prefix}/{model_id}"


# Seconds a local server has to list its models. A port with nothing on it is refused at once, so this is only
# waited for by a server that is there and slow: LM Studio or Ollama busy loading a model, or any of them on a
# machine busy starting everything else at login. At 0.8 s first start said no server was found for one that
# answered a moment later.
PROBE_WITHIN = 3.0


async def probe_local_servers(servers: tuple[KnownServer, ...] = KNOWN_SERVERS, host: str = "127.0.0.1",
                              timeout: float = PROBE_WITHIN) -> list[LocalServer]:
    """Ask each known port for `GET /v1/models` at once; servers that do not answer are left out."""
    import httpx  # here: see desktop/tools/web.py

    async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
        found = await asyncio.gather(*(_probe(client, s, f"http://{host}:{s.port}") for s in servers))
    return [server for server in found if server is not None]


async def _probe(client: httpx.AsyncClient, kind: KnownServer, root: str) -> LocalServer | None:
    import httpx

    try:
        response = await client.get(f"{root}/v1/models")
        data = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    ids = tuple(str(e["id"]) for e in entries if isinstance(e, dict) and e.get("id"))
    return LocalServer(kind, root, ids)


def existing_nanobot_workspace(user_home: Path | None = None) -> Path | None:
    """A workspace left by the nanobot CLI, whose memory and skills the user may want to keep."""
    candidate = (user_home or Path.home()) / ".nanobot" / "workspace"
    return candidate if candidate.is_dir() else None
