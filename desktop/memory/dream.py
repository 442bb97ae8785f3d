"""Dream: turns new history entries into lasting memory. Phase 1 asks the model what should change
(tagged findings); phase 2 lets it apply them with the file tools, confined to the memory files and
new skills. Every run that changes files becomes one commit in the memory history.

Dream runs by itself, outside the sandbox, over files sandboxed commands can write: it reads them through
desktop.workspace.access (a file that became a link out of the workspace is named as "not read", never read)
and records them in a history kept outside the workspace (desktop.memory.git_history)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from string import Template
from typing import Any

from desktop.agent.runner import Runner
from desktop.config import Config
from desktop.kernel import work
from desktop.kernel.channels import Channel, session_key
from desktop.kernel.wellformed import well_formed
from desktop.memory.consolidator import budget_of
from desktop.memory.dream_tools import SeenFiles, current_text, dream_tools
from desktop.memory.git_history import GitHistory, is_memory_path
from desktop.memory.store import HistoryEntry, MemoryStore
from desktop.providers.llm import LLMProvider, ProviderError
from desktop.providers.token_bound import text_bound
from desktop.skills.loader import MAX_SKILL_FOLDERS, confinement, skill_roots
from desktop.tools.base import ToolContext, ToolError
from desktop.tools.path_guard import PathGuard
from desktop.workspace import access
from desktop.workspace.layout import MEMORY_FILES, TEXT_FILE_LIMIT, prompt_text

log = logging.getLogger(__name__)

APPLY_MAX_ITERATIONS = 15
TOO_MANY_SKILLS = f"more than {MAX_SKILL_FOLDERS} skill folders: Dream creates no skill while there are so many"
_FINDING = re.compile(r"^\s*(?:[-*]\s*)?\[(USER|SOUL|MEMORY|SKILL)(-REMOVE)?\]\s*(\S.*)$", re.IGNORECASE)


class DreamError(RuntimeError):
    """The Dream did not finish; the cursor did not move, so the next run retries."""


@dataclass
class DreamResult:
    processed: int  # history entries reviewed
    findings: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # workspace-relative paths
    rev: str | None = None

    def describe(self) -> str:
        if not self.processed:
            return "Dream: no new history since the last run."
        if not self.changed:
            return f"Dream: reviewed {self.processed} history entries; the memory files needed no change."
        where = f" (change {self.rev[:7]}; `/dream-log {self.rev[:7]}` shows the diff)" if self.rev else ""
        return (f"Dream: reviewed {self.processed} history entries and updated "
                f"{', '.join(self.changed)}{where}.")


def parse_findings(text: str) -> list[str]:
    """The tagged lines of a phase-1 answer, normalised; [SKIP] and prose yield nothing."""
    found = []
    for line in text.splitlines():
        match = _FINDING.match(line)
        if match is None:
            continue
        target, remove, rest = match.group(1).upper(), (match.group(2) or "").upper(), match.group(3).strip()
        if target == "SKILL" and remove:
            continue  # skills are only ever added
        found.append(f"[{target}{remove}] {rest}")
    return found


@dataclass
class DreamGuard(PathGuard):
    """Write access for Dream: the three memory files, and skills/<name>/SKILL.md for names that did
    not exist when the run started (an existing skill is never overwritten; with `taken_skills` None, too many
    to list, no skill is created)."""

    taken_skills: frozenset[str] | None = frozenset()

    def resolve(self, raw: str, *, write: bool = False) -> Path:
        path = super().resolve(raw, write=write)
        if not write:
            return path
        relative = path.relative_to(self.workspace.resolve()).as_posix()  # restrict=True: inside the workspace
        if relative in MEMORY_FILES:
            return path
        if relative.startswith("skills/") and is_memory_path(relative):
            name = relative.split("/")[1]
            if self.taken_skills is None:
                raise ToolError(f"{TOO_MANY_SKILLS}; do not create one now")
            if name in self.taken_skills:
                raise ToolError(f"a skill named '{name}' already exists; Dream never overwrites a skill")
            return path
        raise ToolError(f"Dream may only change USER.md, SOUL.md, memory/MEMORY.md or create "
                        f"skills/<name>/SKILL.md, not {raw}")


class Dream:
    def __init__(self, store: MemoryStore, provider: LLMProvider, config: Config, git: GitHistory) -> None:
        self.store = store
        self.provider = provider
        self.config = config
        self.git = git
        self._lock = asyncio.Lock()

    @property
    def running(self) -> bool:
        return self._lock.locked()

    async def run_if_due(self) -> DreamResult | None:
        """The scheduled run (the scheduler already waited for no turn to run): only when no Dream runs
        and there is new history."""
        if self.running or not await asyncio.to_thread(self.store.has_unprocessed):
            return None
        return await self.run()

    async def run(self) -> DreamResult:
        if self._lock.locked():
            raise DreamError("a Dream is already running")
        async with self._lock:
            with work.doing(work.Source.DREAM):
                return await self._run()

    async def _run(self) -> DreamResult:
        workspace = self.store.workspace
        since = await asyncio.to_thread(self.store.dream_cursor)
        entries = await asyncio.to_thread(self._entries_for_run, since)
        if not entries:
            return DreamResult(0)
        files = await asyncio.to_thread(_read_memory_files, workspace)
        seen = await asyncio.to_thread(SeenFiles.now, workspace)  # a file changed after this is not written over
        taken = await asyncio.to_thread(_taken_skill_names, workspace)
        try:
            analysis = await self.provider.chat([
                {"role": "system", "content": await asyncio.to_thread(prompt_text, "dream_analyse.md", workspace)},
                {"role": "user", "content": _analysis_input(entries, files, taken)}], allow_empty=True)  # no findings
        except ProviderError as exc:
            raise DreamError(f"the analysis call failed: {exc}") from exc
        findings = parse_findings(analysis.content)
        result = DreamResult(len(entries), findings)
        if findings:
            await self.git.commit(list(MEMORY_FILES), "Changes made outside Dream")  # keep Dream's diff its own
            skills = taken is not None  # else Dream creates none: there is no skill to look at
            before = await asyncio.to_thread(_snapshot, workspace, skills)
            try:
                await self._apply(workspace, findings, files, taken, seen)
            except ProviderError as exc:  # edits made so far stay (each one atomic) and are committed as such
                await self._record_stopped(workspace, before, skills, findings, entries)
                raise DreamError(f"applying the findings failed: {exc}") from exc
            except asyncio.CancelledError:  # the app quits: what was changed is still Dream's, to see and undo
                await self._record_stopped(workspace, before, skills, findings, entries)
                raise
            result.changed = _changed(before, await asyncio.to_thread(_snapshot, workspace, skills))
        await asyncio.to_thread(self.store.set_dream_cursor, entries[-1].cursor)
        dropped = await asyncio.to_thread(self.store.compact_history)
        if dropped:
            log.info("history compacted: %d old entries dropped", dropped)
        if result.changed:
            result.rev = await self.git.commit(result.changed, _message(result.changed, findings, entries))
        return result

    async def _record_stopped(self, workspace: Path, before: dict[str, str | None], skills: bool,
                              findings: list[str], entries: list[HistoryEntry]) -> None:
        """Commit the edits a run made before it stopped, as Dream's (stopped early); the cursor stays."""
        changed = _changed(before, await asyncio.to_thread(_snapshot, workspace, skills))
        if changed:
            await self.git.commit(changed, _message(changed, findings, entries, stopped=True))

    async def _apply(self, workspace: Path, findings: list[str], files: dict[str, str],
                     taken: frozenset[str] | None, seen: SeenFiles) -> None:
        extras = [root for source, root in skill_roots(workspace) if source != "workspace"]
        guard = DreamGuard(workspace, True, read_only_extras=extras, taken_skills=taken)
        tools = dream_tools(guard, seen)
        instructions = Template(await asyncio.to_thread(prompt_text, "dream_apply.md", workspace))
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": instructions.safe_substitute(workspace=str(workspace))},
            {"role": "user", "content": _apply_input(findings, files, taken)}]

        async def record(message: dict[str, Any]) -> None:
            pass  # the transcript of a Dream is not kept; its result is the commit

        runner = Runner(self.provider, tools, lambda event: None, APPLY_MAX_ITERATIONS)
        await runner.run(messages, ToolContext(session_key(Channel.SYSTEM, "dream")), record)

    def _entries_for_run(self, since: int) -> list[HistoryEntry]:
        """New entries, oldest first, as many as fit half the prompt budget (the rest wait for the next run)."""
        entries = self.store.read_history(since)
        room = max(budget_of(self.config) // 2, 1)
        taken: list[HistoryEntry] = []
        used = 0
        for entry in entries:
            used += text_bound(entry.content) + 20
            if taken and used > room:
                break
            taken.append(entry)
        return taken


def _read_memory_files(workspace: Path) -> dict[str, str]:
    """The memory files as the model sees them; one that may not be read says so instead (its content never)."""
    files = {}
    for name in MEMORY_FILES:
        text, refused = access.load_text(workspace, name, TEXT_FILE_LIMIT)
        files[name] = f"[Not read: {refused}]" if refused else text
    return files


def _taken_skill_names(workspace: Path) -> frozenset[str] | None:
    """Names of every skill folder (and link), so Dream never creates a skill over one. None when a skills folder
    holds more than MAX_SKILL_FOLDERS (a loop in one sandboxed command makes millions): too many to tell the
    model, or to read, so Dream then creates no skill."""
    names: set[str] = set()
    for source, root in skill_roots(workspace):
        base, folder = confinement(source, root)
        try:
            entries = access.list_dir(base, folder, limit=MAX_SKILL_FOLDERS + 1)
        except OSError as exc:
            access.report(exc, folder or str(root))
            continue
        if len(entries) > MAX_SKILL_FOLDERS:
            access.report(access.Refused(f"{root} holds more than {MAX_SKILL_FOLDERS} entries; Dream creates "
                                         "no skill while it does"), folder)
            return None
        # as the model reads them: a name that is not UTF-8 (a sandboxed command can make one) mended, since the
        # request cannot carry it; such a folder is no skill the model could name anyway
        names.update(well_formed(e.name) for e in entries if e.kind in ("dir", "link"))
    return frozenset(names)


def _snapshot(workspace: Path, skills: bool) -> dict[str, str | None]:
    """A digest of every file Dream may touch (None: absent or refused), to tell afterwards what it changed;
    the workspace's skills too when `skills` (Dream may create one), as many as it lists of them (twice what it
    lets Dream create beside: a run adds a few). Digests, not texts: each of hundreds of skills may be large."""
    names = list(MEMORY_FILES)
    if skills:
        try:
            listed = access.list_dir(workspace, "skills", limit=2 * MAX_SKILL_FOLDERS)
        except OSError:
            listed = []
        names += [f"skills/{e.name}/SKILL.md" for e in listed if e.kind in ("dir", "link")]
    return {name: _digest(current_text(workspace, name)) for name in names}


def _digest(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _changed(before: dict[str, str | None], after: dict[str, str | None]) -> list[str]:
    """The files that differ; a skill no longer listed is not one of them (Dream removes none: it was left out of
    a listing cut short)."""
    return sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n)
                  and (n in after or not n.startswith("skills/")))


def _names(taken: frozenset[str] | None) -> str:
    return f"({TOO_MANY_SKILLS})" if taken is None else ", ".join(sorted(taken)) or "(none)"


def _analysis_input(entries: list[HistoryEntry], files: dict[str, str], taken: frozenset[str] | None) -> str:
    history = "\n\n".join(f"[{e.timestamp[:16].replace('T', ' ')} · {e.session_key}]\n{e.content}" for e in entries)
    parts = [f"Today is {datetime.now().astimezone():%Y-%m-%d (%A)}.",
             f"## New history entries\n\n{history}"]
    parts += [f"## {name}\n\n{text.strip() or '(empty)'}" for name, text in files.items()]
    parts.append(f"## Existing skills\n\n{_names(taken)}")
    return "\n\n".join(parts)


def _apply_input(findings: list[str], files: dict[str, str], taken: frozenset[str] | None) -> str:
    parts = ["## Findings to apply\n\n" + "\n".join(findings)]
    parts += [f"## Current {name}\n\n````\n{text}\n````" for name, text in files.items()]
    parts.append(f"## Skill names already taken\n\n{_names(taken)}")
    return "\n\n".join(parts)


def _message(changed: list[str], findings: list[str], entries: list[HistoryEntry], stopped: bool = False) -> str:
    head = "Dream (stopped early)" if stopped else "Dream"
    lines = [f"{head}: update {', '.join(changed)}", ""]
    lines += [f"- {f}" for f in findings[:20]]
    if len(findings) > 20:
        lines.append(f"- … and {len(findings) - 20} more findings")
    lines += ["", f"From {len(entries)} history entries (cursor {entries[0].cursor}–{entries[-1].cursor})."]
    return "\n".join(lines)
