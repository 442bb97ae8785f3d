"""Skill scripts live outside the workspace; with the workspace restriction on they must still run."""

from __future__ import annotations

from desktop.core import Core
from desktop.kernel.paths import bundled
from desktop.tools.base import ToolContext


async def test_builtin_skill_script_runs_under_restriction(core: Core) -> None:
    assert core.config.tools.restrict_to_workspace
    skill = core.workspace / "skills" / "notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: notes\ndescription: Keep notes. Use when asked to note.\n---\nBody\n")
    validator = bundled("skills") / "skill-creator" / "scripts" / "validate_skill.py"
    ctx = ToolContext("cli:t")
    ran = await core.tools.run("exec", {"command": f"python3 {validator} skills/notes"}, ctx)
    assert ran.ok and "refused" not in str(ran.output)
    assert "Exit code: 0" in str(ran.output)
    outside = await core.tools.run("exec", {"command": f"touch {validator.parent}/planted"}, ctx)
    assert "Read-only file system" in str(outside.output)  # the sandbox; refused outright without one
    assert not (validator.parent / "planted").exists()
