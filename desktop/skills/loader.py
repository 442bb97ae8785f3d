"""Finds skills in their folders, works out which are usable, and renders them for the system prompt.

Progressive loading: always-on skills are inlined, every other skill costs only a summary entry
whose SKILL.md the model reads when it needs it. Parsed files are cached by path, mtime and size,
so rebuilding the prompt every turn re-reads nothing unless a SKILL.md changed.

Each folder is read through desktop.workspace.access, confined to its root: the workspace's skills to the
workspace (sandboxed commands write it, and could make `skills/x` a link to anywhere), the built-in and
user folders to themselves. A skill whose folder or SKILL.md leads out is listed as broken, saying so.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from desktop.config import Config
from desktop.kernel.paths import bundled
from desktop.settings import Settings
from desktop.skills.frontmatter import SkillDoc, current_os, parse_skill
from desktop.workspace import access

_MENTION = re.compile(r"(?<![\w$])\$([A-Za-z0-9](?:[\w-]*[A-Za-z0-9])?)")

SUMMARY_INTRO = (
    "# Skills\n\n"
    "Skills are instructions for specific tasks. Before using one, read its SKILL.md (<location>) with "
    "read_file and follow it; read or run the files it mentions only when needed. When "
    'available="false", <requires> says what is missing: tell the user how to install it, or work another way.'
)
MAX_SKILL_FOLDERS = 500  # looked at per skills folder: a command can make millions in the workspace's (see below)
ACTIVE_INTRO = "# Active skills\n\nThese skills are always on; follow them whenever they apply."


@dataclass(frozen=True)
class SkillStatus:
    """One SKILL.md as a person managing skills sees it (the skills window and `skills list`)."""

    doc: SkillDoc
    source: str  # "workspace", "builtin" or "user" (highest precedence first)
    enabled: bool  # not in skills.disabled
    missing: tuple[str, ...]  # unmet requirements: "CLI: gh", "ENV: TOKEN", "OS: darwin"
    shadowed_by: str | None = None  # source of a same-named skill that takes precedence

    @property
    def name(self) -> str:
        return self.doc.name

    @property
    def available(self) -> bool:
        return not self.missing

    @property
    def in_effect(self) -> bool:
        """Loaded, enabled and not overridden: the copy the agent uses."""
        return self.doc.loadable and self.enabled and self.shadowed_by is None


def skill_roots(workspace: Path) -> list[tuple[str, Path]]:
    """The three skill folders in precedence order; missing folders are simply empty."""
    return [("workspace", workspace / "skills"), ("builtin", bundled("skills")),
            ("user", Path.home() / ".agents" / "skills")]


class SkillsLoader:
    """Skill discovery with a parse cache. Safe to call from worker threads (the cache is swapped,
    never mutated in place)."""

    def __init__(self, roots: Sequence[tuple[str, Path]],
                 disabled: Callable[[], Collection[str]] = tuple) -> None:
        self.roots = list(roots)
        self._disabled = disabled  # read on every scan so toggles apply on the next turn
        self._cache: dict[str, tuple[int, int, SkillDoc]] = {}  # SKILL.md path -> mtime_ns, size, parsed
        self._rendered: tuple[tuple[object, ...], list[str]] = ((), [])

    def scan(self) -> list[SkillStatus]:
        """Every SKILL.md found, sorted by name then precedence; broken and shadowed ones included."""
        disabled = set(self._disabled())
        which = _COMMANDS.finder()
        cache: dict[str, tuple[int, int, SkillDoc]] = {}
        old = self._cache
        found: list[SkillStatus] = []
        claimed: dict[str, str] = {}
        for source, root in self.roots:
            base, prefix = confinement(source, root)
            folder = str(root)
            for name, st in _skill_files(base, prefix).items():
                path = f"{folder}{os.sep}{name}{os.sep}SKILL.md"
                if isinstance(st, (FileNotFoundError, NotADirectoryError)):
                    continue  # a folder without SKILL.md is not a skill
                if isinstance(st, OSError):  # leads out of its root, or a loop: listed as broken, saying why
                    doc = parse_skill(Path(path), base)
                else:
                    hit = old.get(path)
                    if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
                        doc = hit[2]
                    else:
                        doc = parse_skill(Path(path), base)
                    cache[path] = (st.st_mtime_ns, st.st_size, doc)
                shadow = claimed.get(doc.name) if doc.loadable else None
                if doc.loadable and shadow is None:
                    claimed[doc.name] = source
                found.append(SkillStatus(doc, source, doc.name not in disabled, _missing(doc, which), shadow))
        self._cache = cache
        rank = {source: i for i, (source, _) in enumerate(self.roots)}
        found.sort(key=lambda s: (s.name, rank[s.source]))
        return found

    def active(self) -> list[SkillStatus]:
        """The skills the agent uses, by name."""
        return [s for s in self.scan() if s.in_effect]

    def prompt_sections(self, tools: Collection[str] | None = None) -> list[str]:
        """The system prompt's skill sections: always-on bodies, then the summary of the rest.
        Either is left out when it would be empty. Given the agent's `tools`, a skill that calls one it
        lacks (`requires.tools`) is left out: its instructions would name a tool that is not there."""
        shown = [s for s in self.active() if s.doc.model_invocable
                 and (tools is None or all(name in tools for name in s.doc.tools))]
        key = tuple((s.doc, s.missing) for s in shown)
        if key == self._rendered[0]:
            return list(self._rendered[1])
        always = [s for s in shown if s.doc.always and s.available]
        others = [s for s in shown if not (s.doc.always and s.available)]
        sections = []
        if always:
            sections.append("\n\n".join([ACTIVE_INTRO, *(f"## Skill: {s.name}\n\n{s.doc.body}" for s in always)]))
        if others:
            sections.append(f"{SUMMARY_INTRO}\n\n{skills_xml(others)}")
        self._rendered = (key, sections)
        return list(sections)

    def expand_mentions(self, text: str) -> str:
        """Bodies of the skills named as `$name` in a user message, for that turn only ("" if none)."""
        if "$" not in text:
            return ""
        wanted = dict.fromkeys(m.group(1) for m in _MENTION.finditer(text))
        if not wanted:
            return ""
        by_name = {s.name: s for s in self.active()}
        blocks = []
        for name in wanted:
            status = by_name.get(name)
            if status is None:
                continue
            note = f" Its requirements are not met ({', '.join(status.missing)})." if status.missing else ""
            blocks.append(f"[The user asked for skill ${name}; follow these instructions. Its folder is "
                          f"{status.doc.path.parent}.{note}]\n\n{status.doc.body}")
        return "\n\n".join(blocks)


def skills_xml(statuses: Sequence[SkillStatus]) -> str:
    """One line per skill: indentation would cost ~9 tokens a skill for nothing the model needs."""
    lines = ["<skills>"]
    for s in statuses:
        requires = f"<requires>{escape(', '.join(s.missing))}</requires>" if s.missing else ""
        lines.append(f'<skill available="{str(s.available).lower()}"><name>{escape(s.name)}</name>'
                     f"<description>{escape(' '.join(s.doc.description.split()))}</description>"
                     f"<location>{escape(str(s.doc.path))}</location>{requires}</skill>")
    lines.append("</skills>")
    return "\n".join(lines)


async def set_skill_enabled(settings: Settings, name: str, enabled: bool) -> None:
    """Add or remove `name` in skills.disabled of config.yaml as it is on disk now, through the settings
    writer (refused while the file has problems); a loader reading the live settings follows at once."""

    def edit(config: Config) -> None:
        kept = [n for n in config.skills.disabled if n != name]
        config.skills.disabled = kept if enabled else [*kept, name]

    await settings.update(edit)


def confinement(source: str, root: Path) -> tuple[Path, str]:
    """The folder a skills root is read within, and the root's path inside it: the workspace's skills folder
    is itself workspace content (it could be a link), so it is confined to the workspace, not to itself."""
    return (root.parent, f"{root.name}/") if source == "workspace" else (root, "")


def _skill_files(base: Path, prefix: str) -> dict[str, os.stat_result | OSError]:
    """Each candidate skill folder's SKILL.md: its stat, or why there is none to read (links included:
    where they lead is checked by desktop.workspace.access)."""
    folder = prefix.rstrip("/")
    try:
        found = access.stat_children(base, folder, "SKILL.md", limit=MAX_SKILL_FOLDERS + 1)
    except OSError as exc:
        access.report(exc, folder or str(base))
        return {}
    if len(found) > MAX_SKILL_FOLDERS:  # every prompt of every chat looks: it must not look at millions
        access.report(access.Refused(f"{folder or base} holds more than {MAX_SKILL_FOLDERS} entries; only "
                                     f"{MAX_SKILL_FOLDERS} of them are read as skills"), folder)
        found = dict(list(found.items())[:MAX_SKILL_FOLDERS])
    return {name: st for name, st in found.items() if not name.startswith(".")}


class _Commands:
    """Which commands are on PATH, for the skills' `requires.bins`, which every prompt checks. `shutil.which`
    stats every PATH folder for every name: most of what looking at the skills cost per turn. Its answers change
    only when PATH does or a name comes or goes in one of its folders, which changes that folder's status-change
    time (ctime, which unlike the modification time no program can set back), so they are kept until one of
    those changes. A folder changed within the last few seconds is not trusted to show a change made within the
    same clock tick, so then nothing is kept. Safe from worker threads: the answers are replaced, and a dict only
    gains entries."""

    RECENT_NS = 2_000_000_000

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._found: dict[str, str | None] = {}

    def finder(self) -> Callable[[str], str | None]:
        path = os.environ.get("PATH", os.defpath)
        folders = [folder for folder in path.split(os.pathsep) if folder]
        stamps: list[tuple[int, int] | None] = []
        for folder in folders:
            try:
                st = os.stat(folder)
                stamps.append((st.st_ino, st.st_ctime_ns))
            except OSError:
                stamps.append(None)
        recent = time.time_ns() - self.RECENT_NS
        if any(stamp is not None and stamp[1] > recent for stamp in stamps):
            return functools.cache(shutil.which)
        key = (path, *stamps)
        if key != self._key:
            self._key, self._found = key, {}
        found = self._found

        def which(name: str) -> str | None:
            if name not in found:
                found[name] = shutil.which(name)
            return found[name]

        return which


_COMMANDS = _Commands()


def _missing(doc: SkillDoc, which: Callable[[str], str | None]) -> tuple[str, ...]:
    if not (doc.bins or doc.env or doc.os):
        return ()
    missing = [f"CLI: {b}" for b in doc.bins if not which(b)]
    missing += [f"ENV: {e}" for e in doc.env if not os.environ.get(e)]
    if doc.os and current_os() not in doc.os:
        missing.append(f"OS: {' or '.join(doc.os)}")
    return tuple(missing)
