"""A model server's own list of models, and a check that a server address is one.

Settings asks the server at the address the user typed which models it serves, so the picker offers
those names instead of litellm's catalogue. OpenAI-compatible servers answer `GET <base>/models`;
Ollama answers `GET <root>/api/tags`. Short timeout, one message a person can act on when it fails."""

from __future__ import annotations

from urllib.parse import urlsplit

from desktop.config import Config
from desktop.providers import catalog
from desktop.providers.helper import HelperFailed, HelperGone

LIST_TIMEOUT = 3.0


class ServerModelsError(Exception):
    """The server could not say which models it has; the message says why in plain words."""


def address_problem(address: str) -> str | None:
    """What is wrong with a server address, or None when it looks usable."""
    text = address.strip()
    example = "e.g. http://127.0.0.1:1234/v1"
    if not text:
        return None
    if any(c.isspace() for c in text):
        return f"The server address must not contain spaces ({example})."
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018  # raises ValueError for a port that is not a number
    except ValueError:
        return f"The server address has a port that is not a number ({example})."
    if parts.scheme not in ("http", "https"):
        return f"The server address must start with http:// or https:// ({example})."
    if not parts.hostname:
        return f"The server address must name a host after {parts.scheme}:// ({example})."
    return None


def _candidates(address: str) -> list[str]:
    base = address.strip().rstrip("/")
    if base.endswith("/v1"):
        return [f"{base}/models", f"{base.removesuffix('/v1')}/api/tags"]
    return [f"{base}/v1/models", f"{base}/api/tags", f"{base}/models"]


def _names(payload: object) -> list[str] | None:
    """Model ids from an OpenAI-style (`data[].id`) or Ollama-style (`models[].name`) answer."""
    if not isinstance(payload, dict):
        return None
    for key, field in (("data", "id"), ("models", "name")):
        entries = payload.get(key)
        if isinstance(entries, list):
            return sorted({str(e[field]) for e in entries if isinstance(e, dict) and e.get(field)})
    return None


async def list_server_models(address: str, key: str | None = None, timeout: float = LIST_TIMEOUT) -> list[str]:
    """The model ids the server at `address` serves. Raises ServerModelsError saying what went wrong."""
    problem = address_problem(address)
    if problem:
        raise ServerModelsError(problem)
    import httpx  # here: see desktop/tools/web.py

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    failures: list[str] = []
    async with httpx.AsyncClient(timeout=timeout, trust_env=False, headers=headers) as client:
        for url in _candidates(address):
            try:
                response = await client.get(url)
            except httpx.TimeoutException:
                raise ServerModelsError(f"{address} did not answer within {timeout:g} s.") from None
            except httpx.HTTPError:
                raise ServerModelsError(f"Nothing answers at {address}. Is the server running?") from None
            if response.status_code in (401, 403):
                raise ServerModelsError(f"{address} wants an API key to list its models "
                                        f"(HTTP {response.status_code}).")
            try:
                names = _names(response.json()) if response.status_code == 200 else None
            except ValueError:
                names = None
            if names is not None:
                return names
            failures.append(f"{urlsplit(url).path} → HTTP {response.status_code}")
    raise ServerModelsError(f"{address} answers but lists no models ({'; '.join(failures)}). "
                            "Type the model name instead.")


async def offered_models(config: Config) -> list[str]:
    """Full model names to offer in a picker for these settings: the server's own models when a server
    address is set (with the provider prefix in use), else the provider's common chat models. Never asks
    the keyring: a server that wants a key to list its models just offers none."""
    provider, slash, _ = config.model.partition("/")
    prefix = f"{provider}/" if slash else ""
    if config.api_base:
        try:
            return [f"{prefix}{name}" for name in await list_server_models(config.api_base)]
        except ServerModelsError:
            return []
    try:
        models = await catalog.chat_models()
    except (HelperGone, HelperFailed):
        return []  # the picker still takes a typed name
    return catalog.common_first(models.get(provider, []))[0]
