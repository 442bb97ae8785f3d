"""The app's asker through real turns: questions posted for a view to answer, the turn's place given up
while one waits, "Always allow" saved as a rule (or as trust in an MCP server), Do not disturb for
background work, and the diff a write would make."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from desktop.approvals import Answer, Approvals
from desktop.approvals.settings import ApprovalsConfig
from desktop.core import Core, build_core
from desktop.kernel.bus import MessageKind, TurnFinished
from desktop.kernel.channels import Channel
from desktop.kernel.questions import Question, Questions
from desktop.mcp import McpServers
from desktop.mcp.settings import McpConfig
from desktop.tools.filesystem import WriteFileTool
from desktop.tools.path_guard import PathGuard
from tests.approvals.test_approvals import unsandboxed_exec
from tests.conftest import Conversation, write_config
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import stdio_server
from tests.memkeyring import MemoryKeyring


async def until(check: Callable[[], object], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


class Watcher:
    """A view of the questions: remembers each one posted and, when told to, answers it at once."""

    def __init__(self, questions: Questions) -> None:
        self.seen: list[Question] = []
        self.answer: Answer | None = None
        questions.subscribe(self._show)

    def _show(self, question: Question) -> None:
        self.seen.append(question)
        if self.answer is not None:
            question.answer(self.answer)


def asking(core: Core, quiet: bool = False, answer: Answer | None = None) -> tuple[Questions, Watcher]:
    """`core` with exec unsandboxed (so it asks) behind the app's asker."""
    core.tools.register(unsandboxed_exec(core.workspace))
    questions = core.questions
    questions.quiet = lambda: quiet
    watcher = Watcher(questions)
    watcher.answer = answer
    return questions, watcher


def run_step(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "exec", "arguments": {"command": command}}]}


def tool_results(fake: FakeOpenAI) -> list[str]:
    return [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"]


async def test_a_waiting_question_holds_no_turn_place_and_allow_runs_the_command(
        core: Core, fake: FakeOpenAI) -> None:
    await core.settings.update(lambda config: setattr(config, "max_concurrent_turns", 1))
    questions, watcher = asking(core)
    first, second = Conversation(core, Channel.DESKTOP, "a"), Conversation(core, Channel.DESKTOP, "b")
    fake.add(run_step("touch made"), {"content": "b answered"}, {"content": "a done"})
    await first.send("make a file")
    await until(lambda: watcher.seen)
    question = watcher.seen[0]
    assert question.request.shown == "touch made" and questions.of("desktop:a") == [question]
    end = await second.ask("meanwhile")  # the only place is free while the question waits
    assert isinstance(end, TurnFinished) and end.content == "b answered"
    question.answer("once")
    assert isinstance(await first.wait_end(), TurnFinished) and (core.workspace / "made").exists()
    assert not questions.pending and question.answered == "once"


async def test_deny_ends_in_a_tool_error_and_nothing_runs(core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    _questions, watcher = asking(core, answer="deny")
    fake.add(run_step("touch made"), {"content": "ok"})
    await chat.ask("make a file")
    assert "the user did not approve exec: touch made" in tool_results(fake)[0]
    assert not (core.workspace / "made").exists()


async def test_always_allow_saves_a_rule_and_the_same_command_then_runs_without_asking(
        core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    _questions, watcher = asking(core, answer="always")
    fake.add(run_step("echo once"), {"content": "ok"})
    await chat.ask("run it")
    rule = {"tool": "exec", "what": "echo once", "workspace": str(core.workspace)}
    assert core.config.section(ApprovalsConfig).rules == [rule]
    on_disk = yaml.safe_load(core.settings.path.read_text(encoding="utf-8"))
    assert on_disk["approvals"]["rules"] == [rule]
    fake.add(run_step("echo once"), {"content": "ok"}, run_step("echo other"), {"content": "ok"})
    await chat.ask("again")
    assert "once" in tool_results(fake)[-1] and len(watcher.seen) == 1
    await chat.ask("something else")
    assert len(watcher.seen) == 2 and watcher.seen[1].request.shown == "echo other"


async def test_with_do_not_disturb_background_work_is_denied_and_says_so(core: Core, fake: FakeOpenAI) -> None:
    _questions, watcher = asking(core, quiet=True)
    fake.add(run_step("touch made"), {"content": "ok"})
    await Conversation(core, Channel.SUBAGENT, "x1").ask("background job")
    assert "Do not disturb is on" in tool_results(fake)[0] and not watcher.seen
    assert not (core.workspace / "made").exists()


async def test_with_do_not_disturb_a_task_report_in_a_chat_is_denied_but_the_person_is_asked(
        core: Core, fake: FakeOpenAI) -> None:
    """A background task's report runs in the chat that started it; under Do not disturb its asks are denied at
    once."""
    _questions, watcher = asking(core, quiet=True, answer="deny")
    fake.add(run_step("touch made"), {"content": "could not"})
    end = await asyncio.wait_for(core.loop.ask("desktop:plans", "it is done", kind=MessageKind.SUBAGENT_RESULT), 60)
    assert isinstance(end, TurnFinished) and end.content == "could not"
    assert "Do not disturb is on" in tool_results(fake)[0] and not watcher.seen
    fake.add(run_step("touch made"), {"content": "ok"})
    await Conversation(core, Channel.DESKTOP, "plans").ask("make it now")
    assert [q.request.shown for q in watcher.seen] == ["touch made"]  # the person's own turn still asks
    assert not (core.workspace / "made").exists()


async def test_with_do_not_disturb_a_background_task_still_asks_while_its_chat_is_in_front(
        core: Core, fake: FakeOpenAI) -> None:
    questions, watcher = asking(core, quiet=True, answer="once")
    questions.in_sight = lambda key: key == "subagent:x1"  # the app says whether its chat is in front
    fake.add(run_step("touch made"), {"content": "ok"})
    await Conversation(core, Channel.SUBAGENT, "x1").ask("background job")
    assert [q.request.shown for q in watcher.seen] == ["touch made"] and (core.workspace / "made").exists()


async def test_a_scheduled_turn_never_asks_what_it_was_not_granted_fails_at_once(
        core: Core, fake: FakeOpenAI) -> None:
    """Someone listens for questions and Do not disturb is off, yet a reminder's or the heartbeat's turn puts
    no question (it would wait 10 minutes on a card nobody sees): the call fails at once and the turn goes on;
    a grant decided ahead lets it run, a deny keeps even an unasked tool from it."""
    _questions, watcher = asking(core)  # never answers: a question would hold the turn for approvals.timeout
    unattended = core.get(Approvals).unattended
    fake.add(run_step("touch made"), {"content": "could not"})
    with unattended.running("desktop:plans", {}) as run:
        end = await asyncio.wait_for(core.loop.ask("desktop:plans", "it is time", kind=MessageKind.SCHEDULED), 60)
    assert isinstance(end, TurnFinished) and end.content == "could not" and not watcher.seen
    assert "no grant for exec" in tool_results(fake)[0] and run.wanted == ["exec"]
    assert not (core.workspace / "made").exists()

    fake.add(run_step("touch made"), {"content": "made"}, {"tool_calls": [{"name": "list_dir", "arguments": {}}]},
             {"content": "not listed"})
    with unattended.running("desktop:plans", {"exec": "allow", "list_dir": "deny"}) as run:
        await asyncio.wait_for(core.loop.ask("desktop:plans", "it is time", kind=MessageKind.SCHEDULED), 60)
        await asyncio.wait_for(core.loop.ask("desktop:plans", "look", kind=MessageKind.SCHEDULED), 60)
    assert (core.workspace / "made").exists() and not watcher.seen and run.wanted == []
    assert "its grants deny list_dir" in tool_results(fake)[-1]


async def test_a_write_asks_with_the_diff_it_would_make(core: Core, chat: Conversation, fake: FakeOpenAI,
                                                        tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("one\ntwo\n")
    _questions, watcher = asking(core, answer="deny")
    core.tools.register(WriteFileTool(PathGuard(core.workspace, restrict=False)))
    fake.add({"tool_calls": [{"name": "write_file", "arguments": {"path": str(outside), "content": "one\n2\n"}}]},
             {"content": "ok"})
    await chat.ask("edit it")
    detail = watcher.seen[0].request.detail
    assert "-two" in detail and "+2" in detail and outside.read_text() == "one\ntwo\n"


@pytest.fixture
async def mcp_core(home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring) -> AsyncIterator[Core]:
    write_config(home_dir, **model_config, mcp={"servers": {"test": stdio_server()}})
    core = build_core()
    await core.start()
    yield core
    await core.close()


async def test_mcp_tools_ask_until_always_allow_trusts_their_server(mcp_core: Core, fake: FakeOpenAI) -> None:
    await until(lambda: mcp_core.get(McpServers).servers["test"].state == "connected", timeout=60)  # a fresh SDK import
    connection = mcp_core.get(McpServers).servers["test"]
    _questions, watcher = asking(mcp_core, answer="always")
    chat = Conversation(mcp_core)
    call = {"tool_calls": [{"name": "mcp_test_echo", "arguments": {"text": "hi"}}]}
    fake.add(call, {"content": "ok"})
    await chat.ask("echo")
    assert "trust MCP server 'test'" in watcher.seen[0].request.always
    assert mcp_core.config.section(McpConfig).servers["test"].trusted
    assert [r.rsplit("\n\n", 1)[-1] for r in tool_results(fake)] == ["hi"]  # after the untrusted-data note
    fake.add(call, {"content": "ok"})
    await chat.ask("echo again")
    assert len(watcher.seen) == 1 and tool_results(fake)[-1].endswith("\n\nhi")
    assert mcp_core.get(McpServers).servers["test"] is connection  # trusting it did not restart it
