"""What the checkpoints feature tells the windows: a turn's file changes are written down, or were undone."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.checkpoints.journal import TurnChanges
from desktop.kernel.bus import Event


@dataclass
class FilesChanged(Event):
    session_key: str
    turn: TurnChanges


@dataclass
class ChangesUndone(Event):
    session_key: str
    turn_id: str


@dataclass
class RecordingPaused(Event):
    """Recording stopped for every chat (`reason` says why, for the person), or resumed (`reason` empty)."""

    reason: str
