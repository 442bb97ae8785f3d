"""Skills: folders with a SKILL.md that teach the agent a task (Agent Skills format).

The built-in skill folders ship inside the wheel as `desktop/resources/skills` (top-level `skills/` in a
checkout); this package is the code that finds, checks, installs and edits them. The `Skills` service is what
the skills manager window asks: the loader in force (a workspace change replaces it) and where new skills go."""

from __future__ import annotations

from pathlib import Path

from desktop.kernel.host import Feature, Host
from desktop.skills.loader import SkillsLoader


class Skills:
    def __init__(self, host: Host) -> None:
        self._host = host

    @property
    def loader(self) -> SkillsLoader:
        """The skills of the workspace in force, read fresh by each call that lists them."""
        loader = self._host.context.skills
        assert loader is not None, "the core was built without a skills loader"
        return loader

    @property
    def folder(self) -> Path:
        """The workspace's own skills folder, where installed and new skills go."""
        return self._host.workspace / "skills"


def attach(host: Host) -> Skills:
    return Skills(host)


FEATURE = Feature("skills", Skills, attach)
