"""Saving what a window with the model form shows (Settings' Save, first-run setup): the API key typed in the
form goes to the keyring first, then config.yaml is written, one way for both windows.

The key first: a key the keyring will not take (locked, its password prompt dismissed, no keyring installed) then
saves nothing, and the model in force keeps answering. Written first (as Settings did), config.yaml switched the app
to the new model with its key missing, and every chat failed until the keyring was fixed; on a first run, setup
would be done with a model that cannot answer. The other way round the worst case is smaller and rare: a config.yaml
that is then not written (a broken file the person keeps, a write that fails) leaves the typed key stored under its
provider, which is what the person asked of the key, and the message says so. The key goes before config.yaml is
read, not between the read and the write: the keyring's prompt can stay open long, and an edit made elsewhere
meanwhile (a hand edit, a card's "Always allow") would be written over by the file as read before it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.config import Config
from desktop.ui.form_widgets import save_edited_config

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from desktop.ui.bridge import CoreBridge
    from desktop.ui.model_form import KeyNotStored, ModelForm

KEY_KEPT = "Your API key is stored in the keyring all the same."


@dataclass(frozen=True)
class SaveOutcome:
    """Whether config.yaml was saved, a line for the person, and, when the keyring would not take the key (and so
    nothing was saved), why: a window may offer its own way on (try again, go on without the key)."""

    saved: bool
    message: str
    key_not_stored: KeyNotStored | None = None


async def save_with_key(parent: QWidget, bridge: CoreBridge, edit: Callable[[Config], str | None],
                        key_from: ModelForm | None) -> SaveOutcome:
    """Store the key typed in `key_from` (None: no key to store), then save config.yaml as `edit` changes it
    (`save_edited_config`). The caller greys the fields being saved: the keyring's prompt may stay open long."""
    stored = False
    if key_from is not None:
        stored = bool(key_from.key.text().strip())
        not_stored = await key_from.store_typed_key()
        if not_stored:
            return SaveOutcome(False, str(not_stored), not_stored)
    saved, message = await save_edited_config(parent, bridge, edit)
    if not saved and stored:
        message = f"{message} {KEY_KEPT}"
    return SaveOutcome(saved, message)
