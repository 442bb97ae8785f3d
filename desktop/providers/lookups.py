"""What the app asks of litellm's tables, in the model helper (desktop/providers/helper_main.py): which
provider a model is and where its key may be, the chat models litellm knows, and which read images."""

from __future__ import annotations

import functools
import logging
from typing import Any

from desktop.providers import catalog
from desktop.providers.helper import EventSink
from desktop.providers.litellm_env import litellm

log = logging.getLogger(__name__)


def provider_name(model: str) -> str:
    """The provider as litellm spells it (the part before the first '/')."""
    if "/" in model:
        return model.split("/", 1)[0]
    try:
        return str(litellm().get_llm_provider(model)[1])
    except Exception:
        return "openai"


def names_provider(model: str, api_base: str | None = None) -> bool:
    """Whether litellm can tell the provider from `model` (a known prefix, or a bare name it lists): one it
    cannot is refused before any server is asked, in litellm's words about Huggingface endpoints. A prefix litellm
    lists is taken without asking it more: for some (github_copilot) it starts a login, which waits on the network."""
    prefix, slash, _name = model.partition("/")
    if slash and prefix in _provider_names():
        return True
    try:
        litellm().get_llm_provider(model, api_base=api_base)
    except Exception:
        return False
    return True


@functools.cache
def _provider_names() -> frozenset[str]:
    """litellm's providers, read once: the model list asks this of each of its thousands of names."""
    return frozenset(str(getattr(provider, "value", provider)) for provider in litellm().provider_list)


async def knows_provider(_emit: EventSink, *, model: str) -> bool:
    """For `/model NAME` in a chat (desktop/providers/catalog.py): whether litellm can tell NAME's provider."""
    return names_provider(model)


async def key_needs(_emit: EventSink, *, model: str) -> dict[str, Any]:
    """The model's provider, and the environment variables litellm would take its key from that are unset here."""
    missing = litellm().validate_environment(model=model).get("missing_keys") or []
    return {"provider": provider_name(model), "missing": [str(name) for name in missing]}


async def chat_models(_emit: EventSink) -> dict[str, list[str]]:
    """provider -> sorted "provider/model" strings, from litellm's price map (desktop/providers/catalog.py), only
    those whose provider litellm can tell: the map files some under a provider no call takes
    (vertex_ai-language-models/..., anyscale/...), which the pickers offered and a turn then failed on."""
    grouped = catalog.group(litellm().model_cost)
    usable = {provider: [name for name in names if names_provider(name)] for provider, names in grouped.items()}
    return {provider: names for provider, names in usable.items() if names or provider in catalog.POPULAR}


async def sees_images(_emit: EventSink, *, model: str) -> bool:
    """True when litellm lists `model` (as configured, e.g. "openai/gpt-4o") as supporting vision."""
    if not model:
        return False
    try:
        return bool(litellm().supports_vision(model=model))
    except Exception:  # an unknown provider prefix: litellm raises instead of saying no
        log.debug("litellm does not know %s", model, exc_info=True)
        return False
