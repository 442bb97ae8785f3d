"""What can go wrong with dictation, in words for the person: one exception, and whether its cure is in
Settings (no speech model set, a key or an address to fix), so the window can offer the button there."""

from __future__ import annotations


class VoiceError(RuntimeError):
    """Dictation could not go on; the message says why and what to do."""

    def __init__(self, message: str, *, fix_in_settings: bool = False) -> None:
        super().__init__(message)
        self.fix_in_settings = fix_in_settings
