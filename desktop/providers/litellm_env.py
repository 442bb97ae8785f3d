"""Import litellm lazily and offline: it takes seconds to import and would otherwise reach the network."""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

PASSED_THROUGH = ("messages", "tools")
# Whatever the environment says: litellm's import otherwise loads the first `.env` found walking up from its own
# folder (from the working folder in a frozen app). With the app installed under the workspace (a workspace that
# is the home folder, and a venv in it), that is a file a sandboxed command can write, and it would set where
# the model requests go with the key, or the proxy they go through.
FORCED = {"LITELLM_MODE": "PRODUCTION"}
CLAUDE_TOKENIZER = "anthropic_tokenizer.json"
_lock = threading.Lock()
_module: ModuleType | None = None


def offline_environment() -> dict[str, str]:
    """The variables that point litellm at its bundled cost map and tiktoken at litellm's bundled encodings:
    without them litellm's import fetches the cost map from GitHub, and tiktoken downloads its tables."""
    found = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"}
    spec = importlib.util.find_spec("litellm")
    if spec and spec.submodule_search_locations:
        tokenizers = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
        if tokenizers.is_dir():
            found["TIKTOKEN_CACHE_DIR"] = str(tokenizers)
    return found


def prepare_offline_environment() -> None:
    """`offline_environment` in this process, where a variable is not set already; FORCED in any case."""
    for name, value in offline_environment().items():
        os.environ.setdefault(name, value)
    os.environ.update(FORCED)


def litellm() -> ModuleType:
    """The litellm module, imported once (thread-safe: the app imports it on a worker thread)."""
    global _module
    with _lock:
        if _module is None:
            prepare_offline_environment()
            with _quiet_import():
                import litellm as module
            _defer_claude_tokenizer()

            module.suppress_debug_info = True
            module.drop_params = True
            module.telemetry = False
            _pass_messages_through()
            _price_calls_ourselves(module)
            _module = module
        return _module


@contextmanager
def _quiet_import() -> Iterator[None]:
    """Keep litellm's import from holding the interpreter lock for long stretches (the GUI thread waits meanwhile).

    Measured on its import (thread CPU time): full garbage collections of 60-160 ms each, every few hundred
    modules, that find nothing to free; and json.dumps of the Claude tokenizer (110 ms) after its json.load
    (40 ms), for a string only litellm's Claude token counter reads. So the collector pauses for the import,
    then freezes what the import made (modules and classes live as long as the app: later full collections
    skip them), and the tokenizer is read from its file only if that counter is ever used."""
    collecting = gc.isenabled()
    gc.disable()
    original_load = json.load

    def load(fp: Any, *args: Any, **kwargs: Any) -> Any:
        if str(getattr(fp, "name", "")).endswith(CLAUDE_TOKENIZER):
            return {}  # litellm.utils keeps json.dumps of this as claude_json_str: "{}" until asked for
        return original_load(fp, *args, **kwargs)

    json.load = load
    try:
        yield
    finally:
        json.load = original_load
        gc.freeze()
        if collecting:
            gc.enable()


def _defer_claude_tokenizer() -> None:
    """litellm.utils.claude_json_str, read on first use (module __getattr__) instead of at import."""
    utils = sys.modules.get("litellm.utils")
    if utils is None or getattr(utils, "claude_json_str", None) != "{}":
        return  # another litellm version: it loaded (or dropped) the tokenizer its own way
    path = Path(str(utils.__file__)).parent / "litellm_core_utils" / "tokenizers" / CLAUDE_TOKENIZER
    del utils.claude_json_str
    if getattr(utils, "json_data", None) == {}:
        del utils.json_data

    lazy = vars(utils).get("__getattr__")  # litellm.utils loads other names on first use too

    def read_on_first_use(name: str) -> Any:
        if name != "claude_json_str":
            if lazy is None:
                raise AttributeError(f"module 'litellm.utils' has no attribute {name!r}")
            return lazy(name)
        text = path.read_text(encoding="utf-8")
        setattr(utils, name, text)
        return text

    setattr(utils, "__getattr__", read_on_first_use)  # noqa: B010  (PEP 562: asked for names it lacks)


def _price_calls_ourselves(module: ModuleType) -> None:
    """litellm prices every response it returns (a hidden parameter nothing here reads; desktop/usage prices each
    call from the usage its server reported). For a stream it does so before the first chunk, with no usage yet,
    so it runs its token counter over the whole prompt on every call: that loads a tiktoken encoding at the
    first call (40 MB, most of a second) and tokenizes every message of the session each round. Its calculator
    is looked up on the module at each use, so an answer of "no price" here stops both."""

    def no_price(**_kwargs: Any) -> None:
        return None

    setattr(module, "response_cost_calculator", no_price)  # noqa: B010  (a name litellm resolves lazily)


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
