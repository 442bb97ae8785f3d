"""Token estimates with tiktoken, offline (litellm ships the encodings)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import tiktoken

from desktop.providers.litellm_env import prepare_offline_environment

PER_MESSAGE_OVERHEAD = 4
FALLBACK_ENCODING = "cl100k_base"


@lru_cache(maxsize=8)
def encoding_for(model: str) -> tiktoken.Encoding:
    """The model's own encoding when tiktoken knows it, cl100k_base otherwise."""
    prepare_offline_environment()
    try:
        return tiktoken.encoding_for_model(model.rsplit("/", 1)[-1])
    except KeyError:
        return tiktoken.get_encoding(FALLBACK_ENCODING)


def count_text(text: str, model: str = "") -> int:
    return len(encoding_for(model).encode(text, disallowed_special=()))


def estimate_messages(messages: list[dict[str, Any]], model: str = "") -> int:
    """Approximate prompt tokens of a message list (content, tool calls and names)."""
    enc = encoding_for(model)
    total = 0
    for message in messages:
        total += PER_MESSAGE_OVERHEAD
        content = message.get("content")
        if isinstance(content, str):
            total += len(enc.encode(content, disallowed_special=()))
        elif isinstance(content, list):
            for part in content:
                text = part.get("text") if isinstance(part, dict) else None
                total += len(enc.encode(text, disallowed_special=())) if text else 765  # an image tile
        if message.get("tool_calls"):
            total += len(enc.encode(json.dumps(message["tool_calls"]), disallowed_special=()))
    return total
