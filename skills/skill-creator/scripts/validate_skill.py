#!/usr/bin/env python3
"""Check skill folders the way Nanobot loads them.

Usage: python3 validate_skill.py SKILL_FOLDER_OR_SKILL_MD [...]
Prints one line per problem. "error" means Nanobot skips the skill; "warning" means it loads
but breaks an Agent Skills rule. Exit code 1 when any skill has an error, 2 on bad usage.
Standalone on purpose (only PyYAML needed), so it runs with any python3.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

try:
    import yaml
except ImportError:
    sys.exit("validate_skill.py needs PyYAML: python3 -m pip install --user pyyaml")

MAX_FILE_BYTES = 1024 * 1024
MAX_DESCRIPTION = 1024
MAX_NAME = 64
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
FRONTMATTER = re.compile(r"---[ \t]*\n(.*?)^---[ \t]*$\n?", re.S | re.M)
OS_NAMES = {"darwin", "macos", "mac", "osx", "linux", "windows", "win32", "win"}


def check(path: Path) -> list[tuple[str, str]]:
    """(level, message) pairs for one SKILL.md; an empty list means it is fine."""
    folder = path.parent.name
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return [("error", f"SKILL.md is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")]
        data = path.read_bytes()
    except OSError as exc:
        return [("error", f"cannot read SKILL.md: {exc.strerror or exc}")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [("error", f"SKILL.md is not UTF-8 text (bad byte at offset {exc.start}); save it as UTF-8")]
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    match = FRONTMATTER.match(text)
    if not match:
        return [("error", "no frontmatter: SKILL.md must start with a '---' line, the YAML fields "
                          "(name, description), and another '---' line")]
    try:
        fields = yaml.load(match.group(1), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        hint = "; put values containing ': ' in quotes" if "mapping values" in problem else ""
        return [("error", f"frontmatter is not valid YAML{where}: {problem}{hint}")]
    if fields is None:
        fields = {}
    if not isinstance(fields, dict):
        return [("error", "frontmatter must be a list of 'field: value' lines")]

    description = fields.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        return [("error", "no description: add 'description:' saying what the skill does and when to use it")]
    if not isinstance(description, str):
        return [("error", f"description must be text, got {description!r:.60}; put it in quotes")]
    notes: list[tuple[str, str]] = []

    def warn(message: str) -> None:
        notes.append(("warning", message))

    if len(description.strip()) > MAX_DESCRIPTION:
        warn(f"description is {len(description.strip())} characters; keep it under {MAX_DESCRIPTION}")
    name = fields.get("name")
    if not (isinstance(name, str) and name):
        warn("no 'name' field: using the folder name")
        name = folder
    if not 1 <= len(name) <= MAX_NAME:
        warn(f"name '{name}' must be 1-{MAX_NAME} characters long")
    if not NAME.fullmatch(name):
        warn(f"name '{name}' may use only a-z, 0-9 and single hyphens inside the name")
    if name != folder:
        warn(f"name '{name}' does not match its folder '{folder}'")

    outer = mapping(fields.get("metadata"), "metadata", warn)
    key = "nanobot" if "nanobot" in outer else "openclaw"
    ours = mapping(outer.get(key), f"metadata.{key}", warn)
    always = ours.get("always", fields.get("always", False))
    if not isinstance(always, bool):
        warn(f"'always' should be true or false, got {always!r:.40}")
    requires = ours.get("requires") or {}
    if not isinstance(requires, dict):
        warn("'requires' should be a mapping with 'bins' and/or 'env'")
        requires = {}
    for os_name in strings(ours.get("os"), "os", warn):
        if os_name.lower() not in OS_NAMES:
            warn(f"unknown os '{os_name}' (use darwin, linux or windows)")
    if not text[match.end():].strip():
        warn("SKILL.md has no instructions after the frontmatter")
    strings(requires.get("bins"), "requires.bins", warn)
    strings(requires.get("env"), "requires.env", warn)
    install = ours.get("install")
    if install is not None:
        for item in install if isinstance(install, list) else [install]:
            if not isinstance(item, (str, dict)):
                warn("'install' entries should be text or mappings; one was ignored")
    return notes


def mapping(value, where, warn):
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            warn(f"{where} is text but not valid JSON ({exc.msg}); ignored")
            return {}
    if not isinstance(value, dict):
        warn(f"{where} should be a mapping; ignored")
        return {}
    return value


def strings(value, where, warn):
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    warn(f"'{where}' should be a list of names; ignored")
    return []


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    failed = False
    for arg in argv:
        path = Path(arg)
        if path.is_dir():
            path = path / "SKILL.md"
        if not path.is_file():
            print(f"{arg}: error: no SKILL.md here")
            failed = True
            continue
        notes = check(path)
        for level, message in notes:
            print(f"{path}: {level}: {message}")
        failed |= any(level == "error" for level, _ in notes)
        if not notes:
            print(f"{path}: OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
