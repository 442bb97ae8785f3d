"""Logging set-up: stderr, plus a rotating file in the data dir for the tray app; secrets scrubbed."""

from __future__ import annotations

import logging
import logging.handlers
import re
from pathlib import Path

_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,})")
_NOISY = {"qasync": logging.INFO,  # logs every to_thread call's arguments and results at DEBUG
          "LiteLLM": logging.WARNING, "litellm": logging.WARNING, "httpx": logging.WARNING,
          "httpcore": logging.WARNING, "openai": logging.WARNING, "keyring": logging.INFO}


# Every key this process read from the keyring (desktop/kernel/secrets.py hands them in). The set lives here, not
# there, so logging is set up without importing keyring: 20 ms less before the tray icon shows.
_hidden: set[str] = set()


def hide(value: str) -> None:
    """Scrub `value` from every log line from now on."""
    _hidden.add(value)


class ScrubSecrets(logging.Filter):
    """Replace every key this process read from the keyring, and anything shaped like a key."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        for value in set(_hidden):
            message = message.replace(value, "[redacted]")
        record.msg, record.args = _KEY_SHAPES.sub("[redacted]", message), None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = _KEY_SHAPES.sub("[redacted]", logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def setup_logging(verbose: bool, log_dir: Path | None = None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    handlers[0].setLevel(logging.DEBUG if verbose else logging.WARNING)
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        file_handler = logging.handlers.RotatingFileHandler(log_dir / "nanobot-tray.log", maxBytes=2_000_000,
                                                            backupCount=3, encoding="utf-8")
        file_handler.setLevel(logging.DEBUG if verbose else logging.INFO)
        handlers.append(file_handler)
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.addFilter(ScrubSecrets())
        root.addHandler(handler)
    for name, level in _NOISY.items():
        logging.getLogger(name).setLevel(max(level, root.level))
