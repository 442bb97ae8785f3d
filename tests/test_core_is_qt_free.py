"""The core never imports Qt: every module outside desktop/ui imports in a fresh interpreter without it."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import desktop

CORE_MODULES = sorted(m.name for m in pkgutil.walk_packages(desktop.__path__, "desktop.")
                      if not m.name.startswith("desktop.ui") and m.name != "desktop.__main__")
PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules
                        if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync') or m.startswith('desktop.ui'))))
"""


def test_core_modules_import_without_qt() -> None:
    assert "desktop.agent.loop" in CORE_MODULES and "desktop.core" in CORE_MODULES
    done = subprocess.run([sys.executable, "-c", PROBE, *CORE_MODULES], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"the core pulled in Qt: {done.stdout}"
