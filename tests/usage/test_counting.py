"""Every model call counted once, under the work it served, from the numbers the scripted server reports:
through the real core, over HTTP. The file keeps numbers, never a word of the conversation, and a line torn
by a crash costs only that line."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from desktop.core import Core, build_core
from desktop.heartbeat import Heartbeat
from desktop.kernel import work
from desktop.kernel.bus import TurnFinished
from desktop.kernel.paths import home
from desktop.kernel.work import Source
from desktop.memory import Memory
from desktop.providers.llm import LLMResponse
from desktop.providers.tokens import count_text
from desktop.reminders import Reminders
from desktop.scheduler.schedules import At
from desktop.subagents import Subagents
from desktop.usage import Usage
from desktop.usage.records import CallRecord, UsageLog
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI, Step
from tests.heartbeat.test_heartbeat import TASKS


def counts(prompt: int, completion: int, cached: int = 0) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "cached_tokens": cached}


async def recorded(core: Core) -> list[CallRecord]:
    usage = core.get(Usage)
    await usage.log.flush()
    return await asyncio.to_thread(usage.log.read_since, 0)


def tally(records: list[CallRecord]) -> dict[Source, tuple[int, int, int, int]]:
    """Per source: calls, prompt, completion and cached tokens."""
    out: dict[Source, tuple[int, int, int, int]] = {}
    for r in records:
        calls, prompt, completion, cached = out.get(r.source, (0, 0, 0, 0))
        out[r.source] = (calls + 1, prompt + r.prompt_tokens, completion + r.completion_tokens,
                         cached + r.cached_tokens)
    return out


async def test_a_typed_turn_counts_each_call_as_the_server_reported_it_and_keeps_no_text(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "usage": counts(1200, 40, 1000)},
             {"content": "Your workspace holds the usual files.", "usage": counts(1350, 12, 1200)})
    end = await chat.ask("what is in my secret-project folder?")
    assert end.content == "Your workspace holds the usual files."
    records = await recorded(core)
    assert tally(records) == {Source.CHAT: (2, 2550, 52, 2200)}
    assert {(r.session, r.model, r.cost_usd, r.estimated) for r in records} == {
        ("cli:test", "openai/test", None, False)}  # a server on 127.0.0.1 costs nothing known
    text = core.get(Usage).log.path.read_text()
    assert "secret-project" not in text and "usual files" not in text and "list_dir" not in text


async def test_unattended_work_is_counted_under_its_own_source(core: Core, fake: FakeOpenAI) -> None:
    fake.default = lambda body: {"content": "NOTHING_TO_REPORT", "usage": counts(500, 5)}
    (core.workspace / "HEARTBEAT.md").write_text(TASKS)
    assert (await core.get(Heartbeat).run()).quiet
    reminders = core.get(Reminders)
    job = await reminders.add("desktop:plans", At(datetime.now(UTC) + timedelta(hours=1)), "Remind me to call Sam")
    await asyncio.wait_for(reminders.run_now(job.id), 60)
    memory = core.get(Memory)
    memory.store.append_history("desktop:plans", "Sam prefers calls in the morning.")
    fake.default = lambda body: {"content": "", "usage": counts(300, 3)}  # Dream finds nothing
    await memory.dream.run()
    fake.default = lambda body: {"content": "The user planned a call.", "usage": counts(200, 20)}
    await memory.consolidator.archive("desktop:plans", [{"role": "user", "content": "plan a call with Sam"},
                                                        {"role": "assistant", "content": "Planned."}])
    records = await recorded(core)
    assert tally(records) == {Source.HEARTBEAT: (1, 500, 5, 0), Source.REMINDER: (1, 500, 5, 0),
                              Source.DREAM: (1, 300, 3, 0), Source.CONSOLIDATION: (1, 200, 20, 0)}
    assert [r.session for r in records] == ["system:heartbeat", "desktop:plans", "", "desktop:plans"]


async def test_a_background_task_and_the_turn_that_tells_its_result_count_as_subagent(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    def reply(body: dict[str, Any]) -> Step:
        text = str(body["messages"][-1].get("content"))
        if body["messages"][-1]["role"] == "tool":
            return {"content": "Started it.", "usage": counts(110, 11)}
        if "[Background task" in text:
            return {"content": "The files are counted.", "usage": counts(130, 13)}
        if text.endswith("count the files"):  # the task itself
            return {"content": "Report: 12 files.", "usage": counts(70, 7)}
        return {"tool_calls": [{"name": "spawn", "arguments": {"task": "count the files"}}],
                "usage": counts(100, 10)}

    fake.default = reply
    await chat.ask("how many files?")
    [task] = core.get(Subagents).of(chat.key)
    assert task.told is not None
    await asyncio.wait_for(task.told, 60)
    records = await recorded(core)
    assert tally(records) == {Source.CHAT: (2, 210, 21, 0), Source.SUBAGENT: (2, 200, 20, 0)}
    assert {r.session for r in records} == {chat.key}  # the task's calls count for the chat that started it


async def test_a_server_that_reports_nothing_is_estimated_and_marked(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add({"content": "An answer whose tokens nobody counted.", "usage": None})
    await chat.ask("count me")
    [record] = await recorded(core)
    assert record.estimated
    assert record.completion_tokens == count_text("An answer whose tokens nobody counted.", "openai/test")
    assert record.prompt_tokens > count_text("count me")  # the system prompt is in it too


async def test_the_log_survives_a_restart_and_a_torn_last_line(
        chat: Conversation, core: Core, fake: FakeOpenAI, home_dir: Path) -> None:
    fake.add({"content": "one", "usage": counts(10, 1)}, {"content": "two", "usage": counts(20, 2)})
    await chat.ask("first")
    await chat.ask("second")
    await core.get(Usage).log.flush()
    path = core.get(Usage).log.path
    with path.open("a") as fh:
        fh.write('{"at": 17000, "source": "chat", "sess')  # the app died mid-line
    fake.add({"content": "three", "usage": counts(30, 3)})
    await chat.ask("third")  # written after the torn line, not onto it
    records = await recorded(core)
    assert [(r.prompt_tokens, r.completion_tokens) for r in records] == [(10, 1), (20, 2), (30, 3)]
    again = await asyncio.to_thread(build_core)  # the app started again
    assert await asyncio.to_thread(again.get(Usage).log.read_since, 0) == records
    assert UsageLog(path.parent).read_since(records[1].at) == records[1:]


async def test_a_folder_where_the_usage_log_should_be_does_not_stop_the_app(
        model_config: dict[str, Any], memory_keyring: Any, fake: Any) -> None:
    """A folder in usage.jsonl's place (a backup restored wrong) stopped the app from starting: counting today's
    calls read it. Now the app starts and answers, counting from nothing, and the folder is left as it is."""
    log_path = home().data_dir / "usage.jsonl"
    (log_path / "kept by hand").mkdir(parents=True)
    core = build_core()
    await core.start()
    try:
        fake.add({"content": "still here"})
        end = await core.loop.ask("desktop:c", "hello")
        assert isinstance(end, TurnFinished) and end.content == "still here"
    finally:
        await core.close()
    assert (log_path / "kept by hand").is_dir()


async def test_a_call_whose_turn_is_cut_short_while_it_is_priced_is_still_counted_when_the_app_quits(
        core: Core) -> None:
    """A call that answered is priced by the model helper before it is booked: a turn stopped, or cut short by
    Quit, in that wait lost the call's record, and its tokens never reached the Usage window. Now the call is
    counted all the same, and quitting waits for it before the log's last write."""
    usage = core.get(Usage)
    answered = LLMResponse("Planned for Monday.")  # the server reported no usage: the helper counts it
    with work.doing(Source.CHAT, "desktop:plans"):  # what a typed turn in that chat is labelled
        counting = asyncio.ensure_future(usage.meter.count("openai/test", [{"role": "user", "content": "plan it"}],
                                                           answered))
    await asyncio.sleep(0)  # the count has asked the helper, which cannot have answered yet
    assert not counting.done()
    counting.cancel()
    await core.close()
    records = await asyncio.to_thread(usage.log.read_since, 0)
    assert [(r.source, r.session, r.estimated) for r in records] == [(Source.CHAT, "desktop:plans", True)]
    assert records[0].completion_tokens > 0
