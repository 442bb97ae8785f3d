"""litellm's import as the app does it (desktop/providers/litellm_env.py), in a fresh process: the garbage
collector is back on afterwards and litellm's Claude tokenizer, no longer read at import, still is on use; no
`.env` file is read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
CHILD = """
import gc, json, sys
from desktop.providers.litellm_env import litellm
module = litellm()
import litellm.utils as utils
read_at_import = "claude_json_str" in vars(utils)
assert callable(utils.update_response_metadata)  # one of the names litellm.utils itself loads on first use
from litellm.utils import claude_json_str
print(json.dumps({"gc": gc.isenabled(), "read_at_import": read_at_import, "tokenizer": json.loads(claude_json_str),
                  "count": module.token_counter(model="claude-3-5-sonnet-20240620", text="hello world, again"),
                  "file": utils.__file__}))
"""


def test_the_collector_runs_again_and_the_claude_tokenizer_loads_when_used() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=180,
                         check=True)
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["gc"] is True and seen["read_at_import"] is False
    shipped = Path(seen["file"]).parent / "litellm_core_utils" / "tokenizers" / "anthropic_tokenizer.json"
    assert seen["tokenizer"] == json.loads(shipped.read_text(encoding="utf-8"))
    assert seen["count"] > 3


CALL = """
import asyncio, json, sys
from desktop.providers.streaming import attempt
from tests.fakeserver import FakeOpenAI

with FakeOpenAI() as fake:  # one call as the model helper makes it
    messages = [{"role": "user", "content": f"question {i} " * 50} for i in range(200)]
    request = {"model": "openai/gpt-4o", "messages": messages, "stream": True, "api_base": fake.base_url,
               "api_key": "no-key-needed", "stream_options": {"include_usage": True}, "timeout": 30}
    answer = asyncio.run(attempt(lambda event: None, request=request, allow_empty=False))["response"]
encodings = getattr(sys.modules.get("tiktoken.registry"), "ENCODINGS", {})
print(json.dumps({"answer": answer["content"], "usage": answer["usage"], "encodings": sorted(encodings)}))
"""


def test_a_model_call_loads_no_tokenizer_when_its_server_counts_the_tokens() -> None:
    """litellm's own pricing of each response tokenized the whole prompt and kept an encoding's tables (40-77 MB)
    in the model helper."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    out = subprocess.run([sys.executable, "-c", CALL], env=env, capture_output=True, text=True, timeout=180,
                         check=True)
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["answer"].startswith("echo: question 199")
    assert seen["usage"]["prompt_tokens"] > 0  # the server's count, which the usage meter prices
    assert seen["encodings"] == []


DOTENV = """
import os, sys
sys.frozen = True  # a frozen app: dotenv looks for .env from the working folder instead of litellm's own
from desktop.providers.litellm_env import litellm
litellm()
print(os.environ.get("NBT_PLANTED", "not read"), os.environ.get("OPENAI_BASE_URL", "not set"))
"""


def test_litellm_s_import_reads_no_env_file_a_sandboxed_command_could_have_written(tmp_path: Path) -> None:
    """A `.env` on the way up from where litellm looks (the workspace, when it holds the app) would tell the model
    calls where to go with the key. The person's own LITELLM_MODE=DEV changes nothing."""
    (tmp_path / ".env").write_text("NBT_PLANTED=read\nOPENAI_BASE_URL=http://127.0.0.1:9/steal\n")
    for mode in ({}, {"LITELLM_MODE": "DEV"}):
        env = {**{k: v for k, v in os.environ.items() if k not in ("LITELLM_MODE", "OPENAI_BASE_URL")},
               "PYTHONPATH": str(ROOT), **mode}
        out = subprocess.run([sys.executable, "-c", DOTENV], env=env, capture_output=True, text=True, timeout=180,
                             check=True, cwd=tmp_path)
        assert out.stdout.split() == ["not", "read", "not", "set"], (mode, out.stdout, out.stderr[-2000:])
