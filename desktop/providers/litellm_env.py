"""Import litellm lazily and offline: it takes seconds to import and would otherwise reach the network."""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from types import ModuleType

PASSED_THROUGH = ("messages", "tools")
_lock = threading.Lock()
_module: ModuleType | None = None


def prepare_offline_environment() -> None:
    """Point litellm at its bundled cost map and tiktoken at litellm's bundled encodings."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    spec = importlib.util.find_spec("litellm")
    if spec and spec.submodule_search_locations:
        tokenizers = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
        if tokenizers.is_dir():
            os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(tokenizers))


def litellm() -> ModuleType:
    """The litellm module, imported once (thread-safe: the app imports it on a worker thread)."""
    global _module
    with _lock:
        if _module is None:
            prepare_offline_environment()
            import litellm as module

            module.suppress_debug_info = True
            module.drop_params = True
            module.telemetry = False
            _pass_messages_through()
            _module = module
        return _module


def _pass_messages_through() -> None:
    """The openai client (litellm's route for openai/ and compatible servers) walks every message and
    tool schema through its TypedDict transformer on each request: ~0.25 ms per message, most of a
    turn's cost in a long session. Chat-completion request types declare no aliases or formats, so
    the walk returns them unchanged (tests/providers/test_fastpath.py checks that); transform
    the few other fields and pass these through as they are."""
    from openai.resources.chat.completions import completions

    original = completions.async_maybe_transform

    async def transform(data: object, expected_type: object) -> object:
        if isinstance(data, dict) and "messages" in data:
            bulky = {k: data[k] for k in PASSED_THROUGH if k in data}
            rest = await original({k: v for k, v in data.items() if k not in bulky}, expected_type)
            return {**rest, **bulky} if isinstance(rest, dict) else rest
        return await original(data, expected_type)

    completions.async_maybe_transform = transform
