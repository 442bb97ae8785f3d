"""File-based memory: consolidation under token pressure (and how near a chat is to it), Dream, and the history
of the memory files."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.kernel.host import Feature, Host
from desktop.memory.commands import add_memory_commands
from desktop.memory.consolidator import Consolidator
from desktop.memory.context_use import ContextGauge
from desktop.memory.dream import Dream
from desktop.memory.dream_job import JOB_NAME, dream_interval, scheduled_dream
from desktop.memory.git_history import GitHistory
from desktop.memory.store import MemoryStore
from desktop.scheduler import Scheduler
from desktop.scheduler.settings import SchedulesConfig


@dataclass
class Memory:
    store: MemoryStore
    consolidator: Consolidator
    git: GitHistory
    dream: Dream
    gauge: ContextGauge  # how full a chat's context is (the chat window's gauge)


def attach(host: Host) -> Memory:
    """Build the memory parts and hook them into turns (turn hooks and slash commands) and the scheduler
    (Dream every `schedules.dream_interval`)."""
    store = MemoryStore(host.workspace)
    consolidator = Consolidator(store, host.provider, host.sessions, host.context, host.config, host.spawn)
    host.hooks.before_turn.append(consolidator.before_turn)
    host.hooks.after_turn.append(consolidator.after_turn)
    host.hooks.on_set_aside.append(consolidator.set_aside)
    git = GitHistory(store, host.home.data_dir / "memory-history")  # hidden from the sandbox
    dream = Dream(store, host.provider, host.config, git)
    add_memory_commands(host.commands, dream)
    host.get(Scheduler).add_system_job(JOB_NAME,
                                       lambda: dream_interval(host.config.section(SchedulesConfig).dream_interval),
                                       lambda: scheduled_dream(dream, host.notify))
    host.settings.subscribe("workspace", lambda _: setattr(store, "workspace", host.workspace))
    gauge = ContextGauge(host.context, host.tools.schemas, lambda: host.config)
    return Memory(store, consolidator, git, dream, gauge)


FEATURE = Feature("memory", Memory, attach, requires=(Scheduler,), cli="desktop.cli.dream_cmd")
