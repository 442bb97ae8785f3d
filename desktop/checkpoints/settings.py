"""The `checkpoints` section of config.yaml: whether turns' file changes are recorded for undo, and how large a
workspace may be for that (desktop/config.py says how a section is declared).

Why the caps: recording keeps a copy of every workspace file in the data folder and looks at every name at each
turn's start and end, so a workspace set to a home folder would copy gigabytes and make every look slow. Over
either cap recording pauses (nothing more is copied) and the chat says so."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.config import MB, Section, setting


@dataclass
class CheckpointsConfig:
    enabled: bool = setting(True, label="Record each turn's file changes for undo",
                            help="Keep what each turn changed in the workspace so /undo and \"Undo these "
                            "changes\" can put it back.")
    max_workspace_mb: int = setting(1024, low=1, unit=MB, label="Largest workspace",
                                    help="MB of files the workspace may hold for its changes to be recorded; a "
                                    "larger one pauses recording, nothing of it is copied.")
    max_files: int = setting(100_000, low=1, label="Most files in the workspace",
                             help="Files and folders the workspace may hold for its changes to be recorded (each "
                             "turn looks at every one twice); more pauses recording.")

    keep_turns: int = setting(50, low=1, label="Turns kept per chat",
                              help="How many of each chat's newest turns that changed files can still be undone; "
                              "older records, and the kept copies only they named, are removed.")


SECTION = Section("checkpoints", CheckpointsConfig, label="Checkpoints",
                  help="Recording each turn's workspace changes so they can be undone.")
