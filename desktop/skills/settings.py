"""The `skills` section of config.yaml (desktop/config.py says how a section is declared)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.config import setting


@dataclass
class SkillsConfig:
    disabled: list[str] = setting(factory=list, label="Disabled skills",
                                  help="Names of skills the assistant does not see (nanobot-tray skills "
                                  "enable|disable NAME).")
