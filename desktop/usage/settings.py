"""The `budgets` section of config.yaml: how much unattended work may use (desktop/config.py says how a
section is declared)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.config import TOKENS, Section, Unit, setting

DOLLARS = Unit("USD")


@dataclass
class BudgetsConfig:
    unattended_daily_tokens: int = setting(0, low=0, unit=TOKENS, zero="No limit", step=10000,
                                           label="Unattended tokens a day",
                                           help="Tokens reminders, the heartbeat, Dream and background tasks may "
                                           "use from local midnight on; then they wait for the next day. 0: no "
                                           "limit.")
    unattended_daily_cost: float = setting(0.0, low=0, unit=DOLLARS, zero="No limit", step=0.5,
                                           label="Unattended cost a day",
                                           help="US dollars the same work may cost a day, by litellm's price map "
                                           "(a local server costs nothing here). 0: no limit.")
    per_run_tokens: int = setting(0, low=0, unit=TOKENS, zero="No limit", step=10000,
                                  label="Tokens per unattended run",
                                  help="Tokens one reminder run, heartbeat, Dream or background task may use "
                                  "before it is stopped. 0: no limit.")


SECTION = Section("budgets", BudgetsConfig, label="Budgets",
                  help="How much reminders, the heartbeat, Dream and background tasks may use.")
