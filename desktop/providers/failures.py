"""Why a model call failed, in plain words and with the next step. One place, used by the chat (through
ProviderError.kind) and by the Settings connection test."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

from desktop.providers.litellm_env import litellm
from desktop.providers.lookups import names_provider
from desktop.providers.server_models import ServerModelsError, list_server_models

_QUOTA_WORDS = ("insufficient_quota", "billing", "quota exceeded", "exceeded your current quota", "credit balance")
MAX_LISTED_MODELS = 8


class FailureKind(Enum):
    """What the user can do about it: the chat offers Open Settings for SETTINGS_KINDS, Retry for the rest."""

    UNREACHABLE = "unreachable"  # connection refused, DNS, timeout: is the server running?
    KEY = "key"  # missing, refused or not allowed
    MODEL = "model"  # the server does not know the model
    QUOTA = "quota"  # out of credit: retrying will not help
    ANSWER = "answer"  # the answer broke off, was empty or never ended
    OTHER = "other"


SETTINGS_KINDS = frozenset({FailureKind.UNREACHABLE, FailureKind.KEY, FailureKind.MODEL})


def is_quota(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(word in text for word in _QUOTA_WORDS)


def server_root(api_base: str) -> str:
    """The address a person typed, e.g. http://127.0.0.1:1234 for http://127.0.0.1:1234/v1."""
    return re.sub(r"/v1/?$", "", api_base.rstrip("/"))


async def classify(exc: Exception, api_base: str | None, model: str, timeout: float) -> tuple[FailureKind, str]:
    """The kind of a failed call and the sentence to show. `exc` is what litellm raised (in the model helper)."""
    lm = litellm()
    provider = model.split("/", 1)[0] if "/" in model else "the provider"
    where = f"the model server at {server_root(api_base)}" if api_base else provider
    status = getattr(exc, "status_code", None)
    if isinstance(exc, lm.BadRequestError) and not names_provider(model, api_base):
        return FailureKind.MODEL, _no_provider(model, api_base)
    if is_quota(exc):
        return FailureKind.QUOTA, (f"The {provider} account is out of quota or credit, so {provider} refused the "
                                   "request. Check your plan and billing with them; retrying will not help.")
    if isinstance(exc, (lm.AuthenticationError, lm.PermissionDeniedError)) or status in (401, 403):
        return FailureKind.KEY, (f"{where[0].upper()}{where[1:]} refused the API key (HTTP {status or 401}). "
                                 f"Check the {provider} key in Settings.")
    if isinstance(exc, lm.NotFoundError) or status == 404:
        return FailureKind.MODEL, f"{where[0].upper()}{where[1:]} does not know the model '{model}'." \
            + await _offered(api_base)
    if isinstance(exc, lm.Timeout) or isinstance(exc, TimeoutError):
        return FailureKind.UNREACHABLE, (f"No answer from {where} within {timeout:g} s. "
                                         + ("Is it running?" if api_base else "Try again in a moment."))
    if isinstance(exc, (lm.APIConnectionError, ConnectionError)) or _connection_failed(exc):
        if api_base:
            return FailureKind.UNREACHABLE, f"Can't reach the model server at {server_root(api_base)} — " \
                                            "is it running?"
        return FailureKind.UNREACHABLE, f"Can't reach {provider}. Check the internet connection."
    if isinstance(exc, lm.RateLimitError) or status == 429:
        return FailureKind.OTHER, f"{where[0].upper()}{where[1:]} is limiting requests right now (HTTP 429). " \
                                  "Wait a moment, then retry."
    return FailureKind.OTHER, _plain(exc)


def _no_provider(model: str, api_base: str | None) -> str:
    """What to give instead of a model name litellm finds no provider in."""
    if api_base:
        return (f"The model name '{model}' names no provider the app knows; for an OpenAI-compatible server give it "
                f"as openai/{model} (Settings → Model).")
    return (f"The model name '{model}' names no provider the app knows; give provider/model, such as "
            "openai/gpt-4o-mini or ollama/llama3 (Settings → Model).")


def _connection_failed(exc: BaseException) -> bool:
    """litellm reports a refused connection as HTTP 500 "Connection error."; the cause chain tells."""
    import httpx  # here: see desktop/tools/web.py (litellm, which raised this, has loaded it already)

    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, (httpx.ConnectError, httpx.ConnectTimeout, ConnectionError)) \
                or type(seen).__name__ == "APIConnectionError" or "Connection error." in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def _offered(api_base: str | None) -> str:
    if not api_base:
        return " Check the model name in Settings."
    try:
        names = await list_server_models(api_base)
    except ServerModelsError:
        return " Check the model name in Settings."
    if not names:
        return " It lists no models."
    shown = ", ".join(names[:MAX_LISTED_MODELS]) + (", …" if len(names) > MAX_LISTED_MODELS else "")
    return f" It offers: {shown}."


def _plain(exc: Any) -> str:
    message = re.sub(r"\s+", " ", str(exc)).strip()
    message = re.sub(r"(sk|key)-[A-Za-z0-9_\-]{8,}", "[redacted]", message)
    status = getattr(exc, "status_code", None)
    prefix = f"{type(exc).__name__}" + (f" (HTTP {status})" if isinstance(status, int) else "")
    return f"The model request failed: {prefix}: {message[:300]}"
