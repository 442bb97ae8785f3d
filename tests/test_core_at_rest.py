"""A started core that has run no turn holds none of the libraries only some turns need: the app at rest stays
light (issue 26), and each of them loads the first time it is used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What each costs the app's process when loaded (measured here): the web client with what it brings 7 MB, the
# keyring library with its backends 5 MB, the Markdown library 2 MB; the model libraries live in the helper.
ON_USE = ("httpx", "keyring", "markdown_it", "litellm", "tiktoken", "openai")
STARTED = """
import asyncio, json, sys
from desktop.core import build_core

async def main():
    core = build_core()
    await core.start()
    await asyncio.sleep(0.5)  # what starts in the background after the core
    await core.close()

asyncio.run(main())
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[1:]))))
"""


def test_a_started_core_with_no_turn_has_not_loaded_what_only_some_turns_need(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("model: openai/test\napi_base: http://127.0.0.1:9/v1\n", encoding="utf-8")
    env = {**os.environ, "NANOBOT_TRAY_HOME": str(tmp_path), "HOME": str(tmp_path / "user"),
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", STARTED, *ON_USE], env=env, capture_output=True, text=True,
                          timeout=120, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
