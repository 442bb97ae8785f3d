"""/dream, /dream-log [rev] and /dream-restore <rev>."""

from __future__ import annotations

from desktop.agent.commands import Command, CommandContext, Commands
from desktop.kernel.local_time import local_time
from desktop.memory.dream import Dream, DreamError
from desktop.memory.git_history import GitError

LOG_ENTRIES = 10
DIFF_CHARS = 8000


def add_memory_commands(commands: Commands, dream: Dream) -> None:
    async def run_dream(ctx: CommandContext) -> str:
        if dream.running:
            return "A Dream is already running; `/dream-log` shows what it changed once it is done."
        try:
            return (await dream.run()).describe()
        except (DreamError, GitError) as exc:
            return f"Dream failed: {exc}. The history stays queued; the next Dream retries it."

    async def show_log(ctx: CommandContext) -> str:
        rev = ctx.args.strip()
        try:
            if rev:
                commit, files, diff = await dream.git.show(rev)
                if len(diff) > DIFF_CHARS:
                    diff = diff[:DIFF_CHARS] + f"\n… [diff cut at {DIFF_CHARS:,} characters]"
                body = f"\n{commit.body}\n" if commit.body else ""
                return (f"{commit.short} {local_time(commit.date)} {commit.subject}\n{body}"
                        f"Files: {', '.join(files) or '(none)'}\n\n```diff\n{diff.strip()}\n```")
            commits = await dream.git.log(LOG_ENTRIES)
        except GitError as exc:
            return f"Cannot show the memory history: {exc}"
        if not commits:
            return "No memory changes recorded yet."
        lines = [f"{c.short}  {local_time(c.date)}  {c.subject}" for c in commits]
        return ("Recent memory changes (newest first):\n" + "\n".join(lines)
                + "\n\n`/dream-log REV` shows a change; `/dream-restore REV` undoes it.")

    async def restore(ctx: CommandContext) -> str:
        rev = ctx.args.strip()
        if not rev:
            return "Usage: /dream-restore REV (see /dream-log for revisions)."
        try:
            new, files = await dream.git.restore_before(rev)
        except GitError as exc:
            return f"Cannot restore: {exc}"
        if new is None:
            return f"{', '.join(files)} already match the version before {rev}; nothing to restore."
        return f"Restored {', '.join(files)} to before {rev} (as a new change, {new[:7]}, which can be undone too)."

    commands.add(Command("/dream", "update long-term memory from recent history now", run_dream))
    commands.add(Command("/dream-log", "memory changes; /dream-log REV shows one as a diff", show_log,
                         immediate=True))
    commands.add(Command("/dream-restore", "undo a memory change: /dream-restore REV", restore))
