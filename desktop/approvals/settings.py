"""The `approvals` section of config.yaml: what runs without asking (desktop/config.py says how a section is
declared)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.config import SECONDS, Section, setting


@dataclass
class ApprovalsConfig:
    tools: dict[str, str] = setting(factory=dict, label="Per tool",
                                    help="Tool name to allow, ask or deny, instead of the usual rule (any other "
                                    "value asks).")
    timeout: float = setting(600.0, low=0, above=True, unit=SECONDS, label="Wait for an answer",
                             help="Seconds before an unanswered question counts as no.")
    rules: list[dict[str, str]] = setting(factory=list, label="Always allowed",
                                          help="Answers of \"Always allow\": each the tool, what (the exact "
                                          "command or path) and the workspace where it holds.")


SECTION = Section("approvals", ApprovalsConfig, label="Approvals",
                  help="What runs without asking, and how long a question waits.")
