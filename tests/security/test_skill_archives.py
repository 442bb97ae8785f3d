"""Skill archives that try to write or link outside their folder (zip-slip): refused, nothing outside changed.

These go through the installer the skills manager and `nanobot-tray skills install` use (no agent tool
installs skills)."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from desktop.skills.install import InstallError, install_skill
from tests.security.harness import REFUSED, Lab

pytestmark = pytest.mark.asyncio(loop_scope="module")
SKILL_MD = "---\nname: evil\ndescription: An evil skill. Use never.\n---\nBody\n"

ARCHIVES: list[tuple[str, list[tuple[str, str, bool]]]] = [  # (entry name, content or link target, is a link)
    ("zip-slip with ..", [("evil/SKILL.md", SKILL_MD, False), ("evil/../../../../user/.bashrc", "pwned", False)]),
    ("zip-slip with backslashes", [("evil/SKILL.md", SKILL_MD, False), ("evil\\..\\..\\..\\x.txt", "pwned", False)]),
    ("absolute entry", [("evil/SKILL.md", SKILL_MD, False), ("{marker}", "pwned", False)]),
    ("symlink out of the folder", [("evil/SKILL.md", SKILL_MD, False), ("evil/home", "../../../../../user", True)]),
    ("symlink to an absolute path", [("evil/SKILL.md", SKILL_MD, False), ("evil/key", "{key}", True)]),
    ("file through a planted symlink", [("evil/SKILL.md", SKILL_MD, False), ("evil/up", "../..", True),
                                        ("evil/up/escape.txt", "pwned", False)]),
]


@pytest.mark.parametrize("entries", [a[1] for a in ARCHIVES], ids=[a[0] for a in ARCHIVES])
async def test_hostile_skill_archives_are_refused(lab: Lab, tmp_path: Path,
                                                  entries: list[tuple[str, str, bool]]) -> None:
    archive = tmp_path / "evil.skill"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, content, is_link in entries:
            name = name.replace("{marker}", str(lab.marker))
            content = content.replace("{key}", str(lab.planted["key"]))
            info = zipfile.ZipInfo(name)
            if is_link:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, content)
    before = lab.snapshot()
    with pytest.raises(InstallError) as refused:
        install_skill(archive, lab.workspace / "skills")
    breaches = lab.breaches(before, [str(refused.value)])
    if (lab.workspace / "skills" / "evil").exists():
        breaches.append("a half-installed skill was left behind")
    lab.record(f"skill archive {entries[-1][0]}", REFUSED, breaches)
