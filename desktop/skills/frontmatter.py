"""One SKILL.md read into a `SkillDoc`: lenient about what it accepts, precise about what is wrong.

Errors mean the skill cannot be used and is skipped; warnings mean it loads but breaks a rule of
the Agent Skills format. Neither is ever raised: both end up in `SkillDoc.diagnostics`.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from desktop.kernel.wellformed import well_formed, well_formed_json
from desktop.workspace import access

MAX_FILE_BYTES = 1024 * 1024
MAX_DESCRIPTION = 1024
MAX_NAME = 64
ERROR = "error"
WARNING = "warning"

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~10x faster cold loads
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FRONTMATTER = re.compile(r"---[ \t]*\n(.*?)^---[ \t]*$\n?", re.S | re.M)
# Keys read anywhere (ours, the Agent Skills format's, Claude's), for "did you mean" on misspelled ones.
_TOP_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools",
             "disable-model-invocation", "user-invocable", "argument-hint", "model", "context", "hooks", "homepage",
             "always")
_OUR_KEYS = ("emoji", "always", "requires", "os", "install", "homepage", "primaryEnv", "skillKey")
_REQUIRES_KEYS = ("bins", "env", "anyBins", "config", "tools")
_OS_NAMES = {"darwin": "darwin", "macos": "darwin", "mac": "darwin", "osx": "darwin", "linux": "linux",
             "windows": "windows", "win32": "windows", "win": "windows"}


def current_os() -> str:
    """This machine in the naming skills use: darwin, linux or windows."""
    if sys.platform.startswith("win"):
        return "windows"
    return "darwin" if sys.platform == "darwin" else "linux"


@dataclass(frozen=True)
class Diagnostic:
    level: str  # ERROR (skill skipped) or WARNING (skill loaded)
    message: str


@dataclass(frozen=True)
class SkillDoc:
    """What one SKILL.md says. `name` is its folder's name, the skill's identity everywhere."""

    name: str
    path: Path
    declared_name: str = ""
    description: str = ""
    body: str = ""
    emoji: str = ""
    always: bool = False
    bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()  # agent tools its instructions call: an agent without one is not offered it
    os: tuple[str, ...] = ()
    install: tuple[str, ...] = ()  # human-readable install hints
    homepage: str = ""
    model_invocable: bool = True  # Claude's `disable-model-invocation: true` keeps it out of the prompt
    diagnostics: tuple[Diagnostic, ...] = ()

    @functools.cached_property
    def loadable(self) -> bool:
        return not any(d.level == ERROR for d in self.diagnostics)


def name_problems(name: str, folder: str) -> list[str]:
    """The Agent Skills naming rules, as messages a person can act on."""
    problems = []
    if not 1 <= len(name) <= MAX_NAME:
        problems.append(f"name '{name}' must be 1-{MAX_NAME} characters long")
    if not _NAME.fullmatch(name):
        problems.append(f"name '{name}' may use only a-z, 0-9 and single hyphens inside the name")
    if name != folder:
        problems.append(f"name '{name}' does not match its folder '{folder}'")
    return problems


def is_valid_name(name: str) -> bool:
    return len(name) <= MAX_NAME and bool(_NAME.fullmatch(name))


def parse_skill(path: Path, root: Path | None = None) -> SkillDoc:
    """Read and parse one SKILL.md; any problem becomes a diagnostic, never an exception. It is read through
    desktop.workspace.access, never following a link out of `root` (the skill's own folder by default; the
    loader passes the workspace for workspace skills): a SKILL.md that leads elsewhere is a broken skill
    saying so, and nothing of the file it points at is read."""
    folder = path.parent.name
    base = root or path.parent
    named = well_formed(folder)
    if named != folder:  # the model could not be told where it is, nor the skill be named in a file
        return _broken(named, path, "its folder's name is not UTF-8 text; rename the folder")
    try:
        with access.open_file(base, path.relative_to(base).as_posix()) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_FILE_BYTES:
                return _broken(folder, path, f"SKILL.md is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
            data = fh.read(MAX_FILE_BYTES + 1)
    except access.Refused as exc:
        return _broken(folder, path, str(exc))
    except OSError as exc:
        return _broken(folder, path, f"cannot read SKILL.md: {exc.strerror or exc}")
    if len(data) > MAX_FILE_BYTES:
        return _broken(folder, path, f"SKILL.md is over {MAX_FILE_BYTES:,} bytes, the limit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _broken(folder, path, f"SKILL.md is not UTF-8 text (bad byte at offset {exc.start}); "
                                     "save it as UTF-8")
    return parse_skill_text(text, path)


def parse_skill_text(text: str, path: Path) -> SkillDoc:
    """Parse SKILL.md text as if it lived at `path` (also used to validate text being edited)."""
    folder = path.parent.name
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    match = _FRONTMATTER.match(text)
    if not match:
        return _broken(folder, path, "no frontmatter: SKILL.md must start with a '---' line, the YAML "
                                     "fields (name, description), and another '---' line")
    try:
        if _aliased(match.group(1)):
            return _broken(folder, path, "frontmatter uses a YAML alias (*name); write the value out where it "
                                         "is used")
        # without libyaml, PyYAML reads a "\\ud800" escape as a lone surrogate (and a pair's as two halves)
        data = well_formed_json(yaml.load(match.group(1), Loader=_YAML_LOADER))
    except yaml.YAMLError as exc:
        return _broken(folder, path, _yaml_message(exc))
    except RecursionError:  # lists in lists, hundreds deep: a sandboxed command's skill must not end the scan
        return _broken(folder, path, "frontmatter is nested too deeply to read")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return _broken(folder, path, "frontmatter must be a list of 'field: value' lines")
    notes: list[Diagnostic] = []

    def warn(message: str) -> None:
        notes.append(Diagnostic(WARNING, message))

    misspelt = _misspelt_keys(data, _TOP_KEYS)
    description = data.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        hint = "".join(f"; '{key}' looks like a misspelling of it" for key, known in misspelt.items()
                       if known == "description")
        return _broken(folder, path, "no description: add 'description:' saying what the skill does "
                                     f"and when to use it{hint}")
    for key, known in misspelt.items():
        warn(f"unknown field '{key}': did you mean '{known}'?")
    if not isinstance(description, str):
        return _broken(folder, path, f"description must be text, got {description!r:.60}; put it in quotes")
    description = description.strip()
    if len(description) > MAX_DESCRIPTION:
        warn(f"description is {len(description)} characters; keep it under {MAX_DESCRIPTION}")

    declared = data.get("name")
    if isinstance(declared, str) and declared:
        for problem in name_problems(declared, folder):
            warn(problem)
    else:
        warn("no 'name' field: using the folder name")
        declared = ""
        for problem in name_problems(folder, folder):
            warn(problem)

    ours = _our_metadata(data.get("metadata"), warn)
    always = ours.get("always", data.get("always", False))
    if not isinstance(always, bool):
        warn(f"'always' should be true or false, got {always!r:.40}")
        always = False
    for key, known in _misspelt_keys(ours, _OUR_KEYS).items():
        warn(f"unknown field 'metadata.nanobot.{key}': did you mean '{known}'?")
    requires = ours.get("requires") or {}
    if not isinstance(requires, dict):
        warn("'requires' should be a mapping with 'bins' and/or 'env'")
        requires = {}
    for key, known in _misspelt_keys(requires, _REQUIRES_KEYS).items():
        warn(f"unknown field 'requires.{key}': did you mean '{known}'?")
    os_names = []
    for name in _strings(ours.get("os"), "os", warn):
        if name.lower() in _OS_NAMES:
            os_names.append(_OS_NAMES[name.lower()])
        else:
            warn(f"unknown os '{name}' (use darwin, linux or windows)")
    body = text[match.end():].strip()
    if not body:
        warn("SKILL.md has no instructions after the frontmatter")
    return SkillDoc(
        name=folder, path=path, declared_name=declared, description=description, body=body,
        emoji=_text(ours.get("emoji")), always=always,
        bins=_strings(requires.get("bins"), "requires.bins", warn),
        env=_strings(requires.get("env"), "requires.env", warn),
        tools=_strings(requires.get("tools"), "requires.tools", warn),
        os=tuple(dict.fromkeys(os_names)), install=_install_hints(ours.get("install"), warn),
        homepage=_text(ours.get("homepage") or data.get("homepage")),
        model_invocable=data.get("disable-model-invocation") is not True,
        diagnostics=tuple(notes),
    )


def _misspelt_keys(data: dict[Any, Any], known: tuple[str, ...]) -> dict[str, str]:
    """Unknown keys that look like a known one ('descripton' -> 'description'); other keys pass silently,
    as other tools may define them."""
    found = {}
    for key in data:
        if isinstance(key, str) and key not in known:
            close = difflib.get_close_matches(key.lower().replace("_", "-"), known, n=1, cutoff=0.75)
            if close and close[0] not in data:
                found[key] = close[0]
    return found


def _broken(folder: str, path: Path, message: str) -> SkillDoc:
    return SkillDoc(name=folder, path=path, diagnostics=(Diagnostic(ERROR, message),))


def _aliased(frontmatter: str) -> bool:
    """Whether the YAML names an anchor again (*name). No skill needs one, and a sandboxed command can write a
    workspace skill: nine lists of nine aliases each are a few hundred bytes that read as 387 million strings,
    which the app's own process walked on its next scan, growing by about 100 MB a second until no memory was
    left. The parser's events are cheap and come before anything is built."""
    return any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(frontmatter, Loader=_YAML_LOADER))


def _yaml_message(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 2}" if mark else ""  # +1 for 1-based, +1 for the opening '---'
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    hint = "; put values containing ': ' in quotes" if "mapping values" in problem else ""
    return f"frontmatter is not valid YAML{where}: {problem}{hint}"


def _as_mapping(value: Any, where: str, warn: Callable[[str], None]) -> dict[str, Any]:
    """A mapping, or a JSON string holding one (the Agent Skills format allows only string values)."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = well_formed_json(json.loads(value))  # a lone surrogate's escape parses to one
        except json.JSONDecodeError as exc:
            warn(f"{where} is text but not valid JSON ({exc.msg}); ignored")
            return {}
        except RecursionError:  # a sandboxed command can write a workspace skill: it must not end the scan
            warn(f"{where} is text but not valid JSON (nested too deeply); ignored")
            return {}
    if not isinstance(value, dict):
        warn(f"{where} should be a mapping; ignored")
        return {}
    return value


def _our_metadata(metadata: Any, warn: Callable[[str], None]) -> dict[str, Any]:
    """Our keys live under metadata.nanobot; metadata.openclaw is read when that is absent."""
    outer = _as_mapping(metadata, "metadata", warn)
    key = "nanobot" if "nanobot" in outer else "openclaw"
    return _as_mapping(outer.get(key), f"metadata.{key}", warn)


def _strings(value: Any, where: str, warn: Callable[[str], None]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    warn(f"'{where}' should be a list of names; ignored")
    return ()


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _install_hints(value: Any, warn: Callable[[str], None]) -> tuple[str, ...]:
    """Install recipes (strings, or openclaw-style mappings) as one line each for the user."""
    if value is None:
        return ()
    if not isinstance(value, list):
        value = [value]
    hints = []
    for item in value:
        if isinstance(item, str):
            hints.append(item)
        elif isinstance(item, dict):
            label = item.get("label")
            target = next((item[k] for k in ("formula", "package", "module", "url") if item.get(k)), "")
            hint = label if isinstance(label, str) else f"{item.get('kind', 'install')} {target}".strip()
            hints.append(str(hint))
        else:
            warn("'install' entries should be text or mappings; one was ignored")
    return tuple(hints)
