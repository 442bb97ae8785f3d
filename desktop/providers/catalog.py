"""The chat models litellm knows, grouped by provider, for the model picker (free text stays allowed)."""

from __future__ import annotations

import functools
from collections.abc import Collection

from desktop.providers.litellm_env import litellm

# Shown first in the picker; everything else litellm knows follows alphabetically.
POPULAR = ("openai", "anthropic", "openrouter", "gemini", "deepseek", "mistral", "groq", "xai",
           "ollama_chat")


@functools.cache
def chat_models() -> dict[str, list[str]]:
    """provider -> sorted "provider/model" strings. Slow the first time (imports litellm): call off the GUI thread."""
    grouped: dict[str, set[str]] = {}
    for name, info in litellm().model_cost.items():
        if not isinstance(info, dict) or info.get("mode") != "chat":
            continue
        provider = str(info.get("litellm_provider") or "")
        if not provider:
            continue
        model = name if name.startswith(f"{provider}/") else f"{provider}/{name}"
        grouped.setdefault(provider, set()).add(model)
    for provider in POPULAR:
        grouped.setdefault(provider, set())
    return {p: sorted(grouped[p]) for p in ordered_providers(grouped)}


def ordered_providers(names: Collection[str]) -> list[str]:
    popular = [p for p in POPULAR if p in names]
    return popular + sorted(set(names) - set(popular))


def needs_key(provider: str) -> bool:
    """Local providers take no API key."""
    return provider not in {"ollama", "ollama_chat", "lm_studio", "llamafile", "hosted_vllm"}
