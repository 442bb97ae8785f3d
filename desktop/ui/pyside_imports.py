"""Keep PySide6's import hook from running other modules' code in the middle of an import.

PySide6 replaces `__import__` and, after every import, asks whether the module's source names PySide6 (for its
`from __feature__ import ...` switches, which this app never uses) with `inspect.getsource`. That call unwraps
the module first: `hasattr(module, "__wrapped__")` runs a module-level `__getattr__`, and pydantic's imports
more of pydantic from there. The hook also skips modules imported on one thread while it is busy on another, so
when the GUI thread imported its windows while litellm loaded on its worker thread, `pydantic.errors` could go
unchecked until `pydantic._internal._validators` imported it, and the check, run then, imported that
half-made module again: "cannot import name 'import_string' from partially initialized module", and the app
had no model library until it was restarted (seen at a first start under Xvfb; tests/ui/test_pyside_imports.py
reproduces it).

The check is replaced by one that reads the module's file and never touches the module's attributes: the same
answer (does the source name PySide6), and none of the module's code runs.
"""

from __future__ import annotations

import sys
from types import ModuleType


def import_without_running_modules() -> None:
    """Install the file-reading check; a PySide6 without this hook is left as it is."""
    feature = sys.modules.get("shibokensupport.feature")
    if feature is not None and callable(getattr(feature, "_mod_uses_pyside", None)):
        setattr(feature, "_mod_uses_pyside", _source_names_pyside)  # noqa: B010  (looked up at each call)


def _source_names_pyside(module: ModuleType) -> bool:
    spec = vars(module).get("__spec__")  # vars(): no module __getattr__ runs for a missing name
    origin = getattr(spec, "origin", None)
    if not isinstance(origin, str) or not origin.endswith(".py"):
        return False  # built in, compiled, or made in memory: no source to name anything
    try:
        with open(origin, "rb") as source:
            return b"PySide6" in source.read()
    except OSError:
        return False
