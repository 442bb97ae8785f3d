"""Regular expressions from outside (the model's `grep`, a person's history search) run over workspace text.

Python's own `re` backtracks without limit and holds the interpreter lock while it does: `(a|aa)+$` over a line of
forty a's runs for hours, and meanwhile the GUI thread cannot draw a frame, nor can the search be cancelled. The
pattern may come from a model steered by a web page, the text from a sandboxed command. So matching goes
through the `regex` package (mrab-regex: the same syntax as `re`, already installed for tiktoken), which lets go of
the lock while it matches (`concurrent`) and stops at a deadline (`timeout`); `re` has neither. It is imported on
first use, off the app's start path."""

from __future__ import annotations

import time
from typing import Any


class BadPattern(ValueError):
    """A pattern that does not compile; the message says why, for the person or the model."""


class TooSlow(Exception):
    """Matching ran past its time: the pattern backtracks too much on this text."""


class Pattern:
    """A compiled pattern whose searches share one time budget (`seconds`, from the first search)."""

    def __init__(self, pattern: str, *, ignore_case: bool = False, literal: bool = False,
                 seconds: float) -> None:
        import regex

        flags = regex.IGNORECASE if ignore_case else 0
        try:
            self._compiled: Any = regex.compile(regex.escape(pattern) if literal else pattern, flags)
        except regex.error as exc:
            raise BadPattern(str(exc)) from None
        self.pattern = pattern
        self.seconds = seconds
        self._deadline: float | None = None

    def search(self, text: str) -> bool:
        """Whether `text` holds a match. Raises TooSlow once the budget is spent."""
        now = time.monotonic()
        if self._deadline is None:
            self._deadline = now + self.seconds
        left = self._deadline - now
        if left <= 0:
            raise TooSlow(self.pattern)
        try:
            return self._compiled.search(text, timeout=left, concurrent=True) is not None
        except TimeoutError:
            raise TooSlow(self.pattern) from None
