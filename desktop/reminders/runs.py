"""A job's last runs, kept with the job in the jobs file (desktop/reminders/jobs.py), so the Reminders window
can say honestly what each run did: when, how it ended, what its model calls used, or that it never ran
and why.

Only what the window shows is kept: the outcome, a short reason (a failure's message, the tools it lacked),
tokens and cost; never a word of the reminder's message or of the answer. A run that cannot be read is
skipped, not fatal: the job itself matters more than its history."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

KEPT = 10  # runs kept per job, the newest


class Outcome(enum.StrEnum):
    ANSWERED = "answered"
    FAILED = "failed"  # the model could not be reached, or the turn broke
    BUDGET = "budget"  # a budget for unattended work stopped it
    WANTED = "wanted"  # it answered, but would have had to ask for a tool it was not granted
    STOPPED = "stopped"  # someone stopped its chat while it ran
    MISSED = "missed"  # it never ran: the app was closed, the computer slept, or it was paused


@dataclass(frozen=True)
class Run:
    """One run of a job, or one it missed. `at` is when it ran (or, missed, when it was due)."""

    at: datetime
    outcome: Outcome
    reason: str = ""  # why it failed, was stopped or missed; the tools it wanted
    tokens: int = 0  # its model calls' prompt and completion tokens
    cost_usd: float | None = None  # their known price; None when none had one

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at.isoformat(), "outcome": self.outcome.value, "reason": self.reason,
                "tokens": self.tokens, "cost": self.cost_usd}


def outcome_words(run: Run) -> str:
    """How a run ended, in a few words (the reason in full is the window's tooltip)."""
    return {Outcome.ANSWERED: "Answered", Outcome.FAILED: f"Failed: {run.reason}", Outcome.BUDGET: "Stopped by budget",
            Outcome.WANTED: f"Answered, but wanted {run.reason} (not granted)", Outcome.STOPPED: "Stopped",
            Outcome.MISSED: f"Missed: {run.reason}"}[run.outcome]


def run_from_json(data: Any) -> Run | None:
    """The run saved as `data`; None for one that is not (skipped)."""
    try:
        at = datetime.fromisoformat(str(data["at"]))
        cost = data.get("cost")
        if at.tzinfo is None:
            return None
        return Run(at, Outcome(data["outcome"]), str(data.get("reason") or ""), int(data.get("tokens") or 0),
                   None if cost is None else float(cost))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def runs_from_json(data: Any) -> list[Run]:
    items = data if isinstance(data, list) else []
    return [run for run in map(run_from_json, items) if run is not None][-KEPT:]


def kept(runs: list[Run], run: Run) -> list[Run]:
    """`runs` with `run` added, the newest `KEPT` of them."""
    return [*runs, run][-KEPT:]
