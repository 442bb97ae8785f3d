"""`nanobot-tray skills`: list the skills the agent sees, check SKILL.md files, install, enable or disable
a skill. Enabling and disabling go through the settings writer, so a running app follows at once."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from desktop.kernel.paths import home
from desktop.settings import Settings, SettingsError
from desktop.skills.frontmatter import ERROR, SkillDoc, parse_skill
from desktop.skills.install import InstallError, install_skill
from desktop.skills.loader import SkillsLoader, SkillStatus, set_skill_enabled, skill_roots


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("skills", help="list, check and install skills")
    skills = parser.add_subparsers(dest="skills_command", metavar="ACTION", required=True)
    skills.add_parser("list", help="every skill with its source, availability and what it is missing")
    p = skills.add_parser("check", help="report problems in SKILL.md files (exit 1 when a skill cannot load)")
    p.add_argument("path", nargs="?", type=Path,
                   help="a skill folder, a SKILL.md, or a folder of skills (default: all skills)")
    p = skills.add_parser("install", help="install a skill folder, .zip or .skill archive into the workspace")
    p.add_argument("source", type=Path, help="the skill's folder (holding its SKILL.md), or a .zip or .skill "
                   "archive of it")
    p.add_argument("--force", action="store_true", help="replace an installed skill of the same name")
    for action, what in (("enable", "let the agent use a skill again"), ("disable", "hide a skill from the agent")):
        p = skills.add_parser(action, help=f"{what} (skills.disabled in config.yaml)")
        p.add_argument("name", help="the skill's name, as `nanobot-tray skills list` shows it")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    h = home()
    settings = Settings.open(h.config_file)
    for problem in settings.problems:
        print(f"warning: {problem}", file=sys.stderr)
    workspace = h.workspace(settings.config.workspace)
    if args.skills_command == "install":
        return _install(args.source, workspace / "skills", args.force)
    loader = SkillsLoader(skill_roots(workspace), lambda: settings.config.skills.disabled)
    if args.skills_command in ("enable", "disable"):
        return _toggle(settings, loader, args.name, args.skills_command == "enable")
    if args.skills_command == "list":
        return _list(loader.scan())
    if args.path is None:
        return _check([(s.doc, s.source) for s in loader.scan()])
    docs = _docs_at(args.path)
    if not docs:
        print(f"error: no SKILL.md found at {args.path}; give a skill's folder, its SKILL.md, or a folder of skills",
              file=sys.stderr)
        return 2
    return _check([(doc, str(doc.path.parent)) for doc in docs])


def _toggle(settings: Settings, loader: SkillsLoader, name: str, enabled: bool) -> int:
    known = {s.name for s in loader.scan() if s.doc.loadable}
    if name not in known and not (enabled and name in settings.config.skills.disabled):
        print(f"error: no skill named '{name}'; `nanobot-tray skills list` shows them", file=sys.stderr)
        return 1
    try:
        asyncio.run(set_skill_enabled(settings, name, enabled))
    except (SettingsError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{'Enabled' if enabled else 'Disabled'} skill '{name}'.")
    return 0


def _list(statuses: list[SkillStatus]) -> int:
    shown = [s for s in statuses if s.doc.loadable and s.shadowed_by is None]
    rows = [("NAME", "SOURCE", "AVAILABLE", "ALWAYS", "ENABLED", "MISSING")]
    rows += [(s.name, s.source, _yes(s.available), _yes(s.doc.always), _yes(s.enabled), ", ".join(s.missing))
             for s in shown]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print(("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[5]).rstrip())
    for s in statuses:
        if s.shadowed_by:
            print(f"note: the {s.shadowed_by} skill '{s.name}' overrides the {s.source} one")
    broken = sum(not s.doc.loadable for s in statuses)
    if broken:
        print(f"{broken} SKILL.md file(s) could not be loaded; run `nanobot-tray skills check`.")
    return 0


def _check(docs: list[tuple[SkillDoc, str]]) -> int:
    errors = warnings = 0
    for doc, where in docs:
        print(f"{'ok' if not doc.diagnostics else 'skipped' if not doc.loadable else 'warnings'}: "
              f"{doc.name} ({where}) {doc.path}")
        for d in doc.diagnostics:
            print(f"  {d.level}: {d.message}")
            errors += d.level == ERROR
            warnings += d.level != ERROR
    print(f"{len(docs)} skill(s) checked: {errors} error(s), {warnings} warning(s).")
    return 1 if errors else 0


def _docs_at(path: Path) -> list[SkillDoc]:
    """The skills at what the person named; a file other than a SKILL.md is none (read as one, it named a skill
    after its folder that is not there)."""
    if path.is_file():
        return [parse_skill(path)] if path.name == "SKILL.md" else []
    if (path / "SKILL.md").is_file():
        return [parse_skill(path / "SKILL.md")]
    return [parse_skill(p) for p in sorted(path.glob("*/SKILL.md"))] if path.is_dir() else []


def _install(source: Path, skills_dir: Path, force: bool) -> int:
    try:
        doc = install_skill(source, skills_dir, force=force)
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Installed skill '{doc.name}' into {doc.path.parent}")
    for d in doc.diagnostics:
        print(f"  {d.level}: {d.message}")
    return 0


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
