"""Import litellm lazily and offline: it takes seconds to import and would otherwise reach the network."""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from types import ModuleType

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
            _module = module
        return _module
