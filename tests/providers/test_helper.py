"""The model helper (desktop/providers/helper.py): the process that holds litellm, so the app does not.

Through real calls against the scripted server: the app's own process answers a turn without loading litellm,
tiktoken or the openai client; the helper leaves after its idle time and the next call starts another; a helper
that dies in the middle of an answer ends that call with words, and the next call works; and files a sandboxed
command could have written where the app was started are never run by it; a failure inside it reaches the
app's log; a server's words with stray escapes in them reach the app mended (they once never reached it at all)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.core import Core
from desktop.kernel.bus import TextDelta, TurnError, TurnFinished
from desktop.providers import HELPER_FLAG
from desktop.providers.helper import HelperFailed, ModelHelper
from desktop.providers.model_thread import run_on_model_thread
from tests.conftest import Conversation, session_lines
from tests.fakeserver import FakeOpenAI

ROOT = Path(__file__).parents[2]
# A lone low and a lone high surrogate, a pair the wrong way round (two lone halves) and a whole pair, as a
# server's JSON escapes them; and as the person reads them
STRAY = "bad \udcff, half \ud83d, reversed \ude00\ud83d, whole \ud83d\ude00"
MENDED = "bad \ufffd, half \ufffd, reversed \ufffd\ufffd, whole \U0001f600"
TURN = """
import asyncio, json, os, sys
from desktop.config import Config
from desktop.providers.helper import model_helper
from desktop.providers.llm import LLMProvider
from tests.fakeserver import FakeOpenAI

with FakeOpenAI() as fake:
    config = Config(model="openai/test", api_base=fake.base_url)
    pieces = []
    answer = asyncio.run(LLMProvider(config).chat([{"role": "user", "content": "hello"}], on_text=pieces.append))
    helper = model_helper().pid
loaded = sorted({name.split(".")[0] for name in sys.modules} & {"litellm", "tiktoken", "openai"})
print(json.dumps({"answer": answer.content, "pieces": pieces, "loaded": loaded, "helper": helper,
                  "helper_argv": open(f"/proc/{helper}/cmdline").read().split("\\0")}))
"""


def test_a_call_is_answered_without_the_model_library_in_the_app_s_process() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    out = subprocess.run([sys.executable, "-c", TURN], env=env, capture_output=True, text=True, timeout=180,
                         check=True, cwd=ROOT)
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["answer"] == "echo: hello" and "".join(seen["pieces"]) == "echo: hello"  # streamed, in pieces
    assert seen["loaded"] == []
    assert HELPER_FLAG in seen["helper_argv"]


ENVIRONMENT_CHANGED_WHILE_LOADING = """
import asyncio, os, time
from desktop.config import Config
from desktop.providers.helper import model_helper
from desktop.providers.llm import LLMProvider
from tests.fakeserver import FakeOpenAI

with FakeOpenAI() as fake:
    provider = LLMProvider(Config(model="openai/test", api_base=fake.base_url))
    provider.prepare()  # the helper starts, and litellm loads in it
    deadline = time.monotonic() + 30
    while not model_helper().running and time.monotonic() < deadline:
        time.sleep(0.01)
    os.environ["A_SETTING_CHANGED"] = "1"  # so the call brings the app's environment while litellm loads
    print(asyncio.run(provider.chat([{"role": "user", "content": "hello"}])).content)
"""


def test_the_app_s_environment_reaching_a_loading_helper_does_not_send_it_to_the_network() -> None:
    """litellm fetches its cost map from GitHub at import unless told not to; the helper tells it, and the app's
    environment arriving mid-import must not take that away (it did: the import then tried the network)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("LITELLM_", "TIKTOKEN_"))}
    env.update(PYTHONPATH=str(ROOT), PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    out = subprocess.run([sys.executable, "-c", ENVIRONMENT_CHANGED_WHILE_LOADING], env=env, capture_output=True,
                         text=True, timeout=180, check=True, cwd=ROOT)
    assert out.stdout.splitlines()[-1] == "echo: hello"
    assert "cost map" not in out.stderr, out.stderr


async def _call(helper: ModelHelper) -> object:
    return await run_on_model_thread(helper.call("key_needs", model="openai/gpt-4o-mini"))


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


async def test_the_helper_leaves_after_its_idle_time_and_the_next_call_starts_another() -> None:
    helper = ModelHelper()
    helper.idle_exit = 1.0
    try:
        assert await _call(helper) == {"provider": "openai", "missing": ["OPENAI_API_KEY"]}
        first = helper.pid
        assert first is not None and not _gone(first)
        for _ in range(100):  # bounded: 10 s
            if _gone(first):
                break
            await asyncio.sleep(0.1)
        assert _gone(first) and not helper.running
        assert await _call(helper) == {"provider": "openai", "missing": ["OPENAI_API_KEY"]}
        assert helper.pid not in (None, first)
    finally:
        await run_on_model_thread(helper.close())


async def test_a_helper_closed_while_its_library_still_loads_leaves_at_once_and_is_not_killed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Quitting soon after a window took the focus, or `agent` stopping at a mistake in its command line, closes a
    helper that is still importing litellm (seconds; here an import that never ends). It leaves then: it waited
    for the import, so quitting waited too, and one that outlasted EXIT_WAIT was killed."""
    stuck = tmp_path / "stuck"
    stuck.mkdir()
    (stuck / "litellm.py").write_text("import time\ntime.sleep(120)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(stuck), str(ROOT)]))
    helper = ModelHelper()
    await run_on_model_thread(helper.warm())
    process = helper._process
    assert process is not None
    await asyncio.sleep(1)  # its import has begun
    await run_on_model_thread(helper.close())
    assert process.popen.returncode == 0  # it left on its own; killed, it would be -9


async def test_a_helper_killed_mid_answer_ends_the_turn_with_words_and_the_next_turn_is_answered(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    core.config.provider.retry_delays = []
    fake.add({"content": "a long answer " * 50, "chunk": 4, "pace": 0.05})
    asked = asyncio.ensure_future(chat.ask("tell me"))
    await chat.first(TextDelta)
    from desktop.providers.helper import model_helper

    pid = model_helper().pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    end = await asyncio.wait_for(asked, 30)
    assert isinstance(end, TurnError) and "The model helper was stopped (signal 9)" in end.message
    assert isinstance(await chat.ask("again"), TurnFinished)
    assert model_helper().pid != pid


async def test_modules_planted_where_the_app_was_started_are_not_run_by_the_helper(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    """A sandboxed command may write anything in the workspace, and `nanobot-tray agent` may be started there."""
    planted = tmp_path / "workspace"
    planted.mkdir()
    marker = tmp_path / "ran"
    for name in ("litellm.py", "tiktoken.py", "sitecustomize.py", "usercustomize.py", "desktop.py", "httpx.py"):
        (planted / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    os.chdir(planted)  # restored below: the helper is started from here
    helper = ModelHelper()
    try:
        assert (await _call(helper))["provider"] == "openai"  # type: ignore[index]
        answer = await run_on_model_thread(helper.call("chat", request={
            "model": "openai/test", "api_base": fake.base_url, "api_key": "no-key-needed", "stream": True,
            "messages": [{"role": "user", "content": "hi"}], "timeout": 30}, allow_empty=False))
        assert answer["response"]["content"] == "echo: hi"
        assert not marker.exists()
    finally:
        os.chdir(ROOT)
        await run_on_model_thread(helper.close())


async def test_a_failure_inside_the_helper_is_written_to_the_app_s_log_not_lost_on_standard_error(
        caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> None:
    """A tray app's standard error usually goes nowhere; the log file is what a person finds and sends."""
    helper = ModelHelper()
    try:
        with caplog.at_level(logging.WARNING, logger="desktop.providers.helper"):
            with pytest.raises(HelperFailed, match="TypeError"):
                await run_on_model_thread(helper.call("chat"))  # an operation called without its arguments
            for _ in range(100):  # bounded: 5 s (the line and the failure travel on the same socket)
                if "Traceback" in caplog.text:
                    break
                await asyncio.sleep(0.05)
        lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("model helper:")]
        assert len(lines) == 1 and "chat failed" in lines[0] and "Traceback" in lines[0] and "TypeError" in lines[0]
        assert "Traceback" not in capfd.readouterr().err
    finally:
        await run_on_model_thread(helper.close())


async def test_a_refusal_whose_words_hold_stray_escapes_is_said_mended_saved_and_the_chat_goes_on(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """The helper could not send such words to the app, so the turn waited for an answer that never came."""
    fake.add({"status": 400, "body": {"error": {"message": STRAY, "type": "invalid_request_error"}}},
             {"content": "Fine now."})
    end = await chat.ask("hi", timeout=30)
    assert isinstance(end, TurnError) and MENDED in end.message
    failed = session_lines(core, chat.key)[-1]
    assert failed["failed"] and MENDED in failed["error"]

    end = await chat.ask("again")
    assert isinstance(end, TurnFinished) and end.content == "Fine now."
