"""File-based memory: consolidation under token pressure, Dream, and the history of the memory files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.memory.commands import add_memory_commands
from desktop.memory.consolidator import Consolidator
from desktop.memory.dream import Dream
from desktop.memory.dream_job import JOB_NAME, dream_interval, scheduled_dream
from desktop.memory.git_history import GitHistory
from desktop.memory.store import MemoryStore

if TYPE_CHECKING:
    from desktop.core import Core


@dataclass
class Memory:
    store: MemoryStore
    consolidator: Consolidator
    git: GitHistory
    dream: Dream


def attach_memory(core: Core) -> Memory:
    """Build the memory parts and hook them into the loop (turn hooks and slash commands) and the
    scheduler (Dream every `schedules.dream_interval`)."""
    loop = core.loop
    store = MemoryStore(core.workspace)
    consolidator = Consolidator(store, loop.provider, loop.sessions, loop.context, loop.config, loop.spawn)
    loop.before_turn.append(consolidator.before_turn)
    loop.after_turn.append(consolidator.after_turn)
    loop.on_set_aside.append(consolidator.set_aside)
    git = GitHistory(store, core.home.data_dir / "memory-history")  # hidden from the sandbox
    dream = Dream(store, loop.provider, loop.config, git)
    add_memory_commands(loop.commands, dream)
    core.scheduler.add_system_job(JOB_NAME, lambda: dream_interval(core.config.schedules.dream_interval),
                                  lambda: scheduled_dream(dream, core.notify))
    core.settings.subscribe("workspace", lambda _: setattr(store, "workspace", core.workspace))
    return Memory(store, consolidator, git, dream)
