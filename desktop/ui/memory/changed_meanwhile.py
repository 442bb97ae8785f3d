"""A memory file changed on disk while someone typed in an editor of it (Dream, the other editor, a text editor):
the one way both editors of USER.md and SOUL.md (the memory window, Settings → Personalisation) notice it, say it
and offer the choice, so the typing is never lost and nothing is written over unseen."""

from __future__ import annotations

LOAD_THEIRS = "Load the version on disk"


def changed_meanwhile(on_disk: str | None, known: str | None, typed: str) -> bool:
    """Whether the file now holds something the person has not seen: neither the version the editor knows of (as
    read, or the newer one it was told of) nor the text about to be saved."""
    return on_disk not in (known, typed)


def held_back_note(name: str, where: str) -> str:
    """What the editor says once it held back a newer version of `name` (`where`: "this window", "this page")."""
    return (f"{name} was changed outside {where} (by Dream, say). Your edits are kept: Save replaces that version "
            "with them, or load the version on disk.")
