"""Token counts with tiktoken, offline (litellm ships the encodings), for calls whose server reported none.

tiktoken is imported, and an encoding loaded (40-77 MB, most of a second), only when such a call is counted:
context budgets use the tokenizer-free bound in desktop/providers/token_bound.py."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from desktop.providers.litellm_env import prepare_offline_environment

if TYPE_CHECKING:
    import tiktoken

PER_MESSAGE_OVERHEAD = 4
FALLBACK_ENCODING = "cl100k_base"


@lru_cache(maxsize=8)
def encoding_for(model: str) -> tiktoken.Encoding:
    """The model's own encoding when tiktoken knows it, cl100k_base otherwise."""
    prepare_offline_environment()
    import tiktoken

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
