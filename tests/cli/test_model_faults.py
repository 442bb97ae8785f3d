"""Model faults that used to pass as answers, through `agent -m` against the scripted server: an endless
stream, a stream that brings nothing, a stream cut off before its end, an empty answer. Each ends in a clear error and exit 1, and the
session keeps no half-finished answer as if it were whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.in_process import run_main
from tests.conftest import write_config
from tests.fakeserver import FakeOpenAI


def ask(home: Path, fake: FakeOpenAI, *steps: dict[str, Any], timeout: float = 5) -> tuple[int, str, str]:
    write_config(home, model="openai/test", api_base=fake.base_url,
                 provider={"timeout": timeout, "retry_delays": [0.01]})
    fake.add(*steps)
    result = run_main(home, "agent", "-m", "tell me a story", "-s", "faults")
    return result.returncode, result.stdout, result.stderr


def saved_answers(home: Path) -> list[dict[str, Any]]:
    lines = (home / "data" / "sessions" / "cli%3Afaults.jsonl").read_text(encoding="utf-8").splitlines()
    return [m for m in map(json.loads, lines) if m.get("role") == "assistant"]


def test_an_endless_stream_is_stopped_at_ten_times_the_timeout(tmp_path: Path, fake: FakeOpenAI) -> None:
    # timeout 1 s: a shorter one can also time out the first chunk on a busy machine, which is another error;
    # a piece every 0.2 s: litellm calls 100 identical chunks in a row a repeating model, another error too
    code, out, err = ask(tmp_path, fake, {"content": "and again ", "endless": 0.2}, timeout=1.0)
    assert code == 1 and out == ""
    assert "kept streaming for 10 s without finishing" in err
    assert len(fake.requests) == 1  # not tried again: it would stream forever again
    assert all(m.get("failed") and "and again" not in str(m.get("content")) for m in saved_answers(tmp_path))


def test_a_stream_of_empty_chunks_is_stopped_at_the_timeout(tmp_path: Path, fake: FakeOpenAI) -> None:
    # the server holds the stream open with chunks that carry nothing: no progress, so one timeout per try
    code, out, err = ask(tmp_path, fake, {"empty_chunks": 0.05}, {"empty_chunks": 0.05}, timeout=2.0)
    assert code == 1 and out == ""
    assert "error: The model server kept the stream open but sent nothing for 2 s" in err
    assert len(fake.requests) == 2  # tried once more, as for other faults before any text
    assert all(m.get("failed") for m in saved_answers(tmp_path))


def test_a_stream_cut_off_mid_answer_is_an_error_not_an_answer(tmp_path: Path, fake: FakeOpenAI) -> None:
    code, out, err = ask(tmp_path, fake, {"content": "Once upon a time there was", "chunk": 5, "cut": 3})
    assert code == 1 and out == ""
    assert "The answer broke off" in err
    assert all(m.get("failed") and "Once" not in str(m.get("content")) for m in saved_answers(tmp_path))


def test_a_stream_cut_before_any_text_is_tried_again(tmp_path: Path, fake: FakeOpenAI) -> None:
    code, out, err = ask(tmp_path, fake, {"content": "lost", "cut": 1}, {"content": "The end."})
    assert (code, out) == (0, "The end.\n"), err
    assert [m["content"] for m in saved_answers(tmp_path)] == ["The end."]


def test_an_empty_answer_is_an_error(tmp_path: Path, fake: FakeOpenAI) -> None:
    code, out, err = ask(tmp_path, fake, {"content": ""}, {"content": ""})
    assert code == 1 and out == ""
    assert "finished without an answer" in err
    assert len(fake.requests) == 2  # tried once more first
    assert all(m.get("failed") for m in saved_answers(tmp_path))


def test_a_model_naming_no_provider_says_what_to_give(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="nosuch/x", provider={"timeout": 5, "retry_delays": [0.01]})
    result = run_main(tmp_path, "agent", "-m", "hi", "-s", "faults")
    assert (result.returncode, result.stdout) == (1, "")
    assert ("error: The model name 'nosuch/x' names no provider the app knows; give provider/model, such as "
            "openai/gpt-4o-mini or ollama/llama3 (Settings → Model).") in result.stderr
    assert "Huggingface" not in result.stderr and fake.requests == []
