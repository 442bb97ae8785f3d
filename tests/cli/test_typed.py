"""What is typed at the terminal chat (desktop/cli/typed.py), with `nanobot-tray agent` as a process of its own:
Ctrl+C at the prompt and bytes the terminal's encoding cannot decode."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.interrupted import WITH_CTRL_C, process_env
from tests.conftest import write_config
from tests.fakeserver import FakeOpenAI


def _read_until(fd: int, wanted: bytes, within: float) -> bytes:
    """What `fd` gave until `wanted` appeared in it, or all it gave within `within` seconds."""
    seen, end = b"", time.monotonic() + within
    while wanted not in seen and (left := end - time.monotonic()) > 0:
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
    return seen


def test_ctrl_c_at_the_chats_prompt_ends_the_program_at_once(tmp_path: Path) -> None:
    """It used to wait, frozen, until one more line was typed."""
    write_config(tmp_path, model="openai/test", api_base="http://127.0.0.1:9/v1")  # no turn: never called
    chat = subprocess.Popen([sys.executable, "-c", WITH_CTRL_C, "agent"], env=process_env(tmp_path), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert chat.stdout is not None
        assert _read_until(chat.stdout.fileno(), b"you> ", within=60).endswith(b"you> ")
        chat.send_signal(signal.SIGINT)  # stdin stays open: nothing more is typed
        assert chat.wait(timeout=10) == 130
    finally:
        chat.kill()
        chat.communicate()


def test_bytes_the_terminals_encoding_cannot_decode_are_mended_not_a_crash(tmp_path: Path,
                                                                           fake: FakeOpenAI) -> None:
    """A terminal in Latin-1 under a UTF-8 locale with strict decoding (as on most desktops)."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    result = subprocess.run([sys.executable, "-m", "desktop", "agent"], input="café\nnext\n".encode("latin-1"),
                            capture_output=True, env=process_env(tmp_path, PYTHONIOENCODING="utf-8:strict"), timeout=60)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().split("you> ")[1:3] == ["echo: caf\ufffd\n", "echo: next\n"]
