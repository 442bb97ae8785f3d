"""How full a chat's context is, measured on a running core with real workspace files and a chat that ran a tool
against the scripted server: every part is there, the parts add up to what the next request carries (by the same
estimate), consolidation's share is its own estimate, and the memory part grows with MEMORY.md."""

from __future__ import annotations

from desktop.core import Core
from desktop.memory import Memory
from desktop.memory.consolidator import budget_of
from desktop.memory.context_use import HISTORY, MEMORY, SKILLS, SYSTEM, TOOL_RESULTS, TOOLS, ContextUse
from desktop.providers.token_bound import messages_bound
from desktop.workspace.layout import MEMORY_FILE
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI

SKILL = "---\nname: tide-tables\ndescription: Reads tide tables for harbours along the coast.\n---\nLook it up.\n"
FACTS = "- The user's boat is called Heron.\n"


async def measure(core: Core, key: str) -> ContextUse:
    return core.get(Memory).gauge.measure(await core.sessions.load(key))


async def test_the_parts_are_what_the_next_request_carries(core: Core, chat: Conversation,
                                                           fake: FakeOpenAI) -> None:
    (core.workspace / "skills" / "tide-tables").mkdir(parents=True)
    (core.workspace / "skills" / "tide-tables" / "SKILL.md").write_text(SKILL)
    (core.workspace / MEMORY_FILE).write_text(FACTS)
    (core.workspace / "notes.txt").write_text("low tide at six\n" * 40)
    fake.add({"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
             {"content": "Low tide is at six."})
    await chat.ask("When is low tide?")

    use = await measure(core, chat.key)
    assert list(use.parts) == [SYSTEM, SKILLS, MEMORY, HISTORY, TOOL_RESULTS, TOOLS]
    assert all(tokens > 0 for tokens in use.parts.values()), use.parts
    assert use.parts[TOOL_RESULTS] > 40 * 4  # the file the tool read, carried back to the model
    assert use.used == sum(use.parts.values())
    assert use.counted == await core.get(Memory).consolidator.estimate(await core.sessions.load(chat.key))
    assert (use.window, use.budget) == (core.config.context_window_tokens, budget_of(core.config))

    fake.add({"content": "Yes."})
    await chat.ask("Sure?")
    sent = fake.requests[-1]
    assert "tide-tables" in sent["messages"][0]["content"] and FACTS.strip() in sent["messages"][0]["content"]
    assert messages_bound(sent["messages"][:-1]) == use.counted  # all of it but the new message, no more

    before = await measure(core, chat.key)
    (core.workspace / MEMORY_FILE).write_text(FACTS + "".join(f"- Fact number {n} about the boat.\n"
                                                              for n in range(50)))
    grown = await measure(core, chat.key)
    assert grown.parts[MEMORY] > before.parts[MEMORY] + 50 * 5
    assert grown.used - before.used == grown.parts[MEMORY] - before.parts[MEMORY]
    assert {k: v for k, v in grown.parts.items() if k != MEMORY} == {
        k: v for k, v in before.parts.items() if k != MEMORY}
