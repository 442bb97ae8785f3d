"""The chat models litellm knows, grouped by provider, for the model picker (free text stays allowed)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from desktop.providers.helper import HelperFailed, HelperGone, ask

# litellm lists these under "chat" too, but nobody picks them to chat with: fine-tunes (`ft:`, usable only by
# their owner), the code container, and speech, image, embedding and moderation models.
_NOT_FOR_CHAT = re.compile(r"^ft:|(^|[-_/.])(container|embed\w*|image|audio|tts|whisper|transcribe|moderation|"
                           r"realtime|dall-e|computer-use|lyria)($|[-_/.])", re.IGNORECASE)
# Dated snapshots and previews: offered after the plain names a person usually means.
_SNAPSHOT = re.compile(r"-\d{4}(-\d{2}-\d{2})?$|-\d{8}$|-\d{2}-\d{4}$|preview|(^|-)exp(erimental)?($|-)",
                       re.IGNORECASE)

# Shown first in the picker; everything else litellm knows follows alphabetically.
POPULAR = ("openai", "anthropic", "openrouter", "gemini", "deepseek", "mistral", "groq", "xai",
           "ollama_chat")


_models: dict[str, list[str]] | None = None


async def chat_models() -> dict[str, list[str]]:
    """provider -> sorted "provider/model" strings, asked of the model helper once (it starts it: the model
    picker is open, a call is likely)."""
    global _models
    if _models is None:
        _models = await ask("chat_models")
    return _models


async def names_provider(model: str) -> bool:
    """Whether litellm can tell the provider of `model`, asked of the model helper (it starts it: a turn with
    the model is likely next). True when the helper cannot say: the call itself then says what is wrong."""
    try:
        return bool(await ask("knows_provider", model=model))
    except (HelperGone, HelperFailed):
        return True


def group(model_cost: Mapping[str, Any]) -> dict[str, list[str]]:
    """litellm's price map's chat models by provider (in the model helper: desktop/providers/lookups.py)."""
    grouped: dict[str, set[str]] = {}
    for name, info in model_cost.items():
        if not isinstance(info, dict) or info.get("mode") != "chat":
            continue
        provider = str(info.get("litellm_provider") or "")
        if not provider:
            continue
        model = name if name.startswith(f"{provider}/") else f"{provider}/{name}"
        if for_chat(model):
            grouped.setdefault(provider, set()).add(model)
    for provider in POPULAR:
        grouped.setdefault(provider, set())
    return {p: sorted(grouped[p]) for p in ordered_providers(grouped)}


def for_chat(model: str) -> bool:
    """Whether a catalogue entry is a model one chats with (see _NOT_FOR_CHAT)."""
    return not _NOT_FOR_CHAT.search(model.partition("/")[2] or model)


def common_first(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """Split model names into the plain ones people usually pick and the dated snapshots and previews."""
    common: list[str] = []
    others: list[str] = []
    for name in names:
        (others if _SNAPSHOT.search(name.rpartition("/")[2]) else common).append(name)
    return common, others


def ordered_providers(names: Collection[str]) -> list[str]:
    popular = [p for p in POPULAR if p in names]
    return popular + sorted(set(names) - set(popular))


def needs_key(provider: str) -> bool:
    """Local providers take no API key."""
    return provider not in {"ollama", "ollama_chat", "lm_studio", "llamafile", "hosted_vllm"}
