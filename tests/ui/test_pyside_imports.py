"""PySide6's import hook never runs a module's code in the middle of an import (desktop/ui/pyside_imports.py).

Each case runs in a fresh interpreter: the hook acts on a module's first import only."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, tmp_path: Path) -> str:
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=90, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_litellm_loads_when_the_hook_skipped_pydantic_errors_as_it_does_when_busy_on_another_thread(
        tmp_path: Path) -> None:
    # The app's log at a first start: litellm's import on its worker thread failed with "cannot import name
    # 'import_string' from partially initialized module 'pydantic._internal._validators'" after the hook,
    # busy with the GUI thread's imports, had let pydantic.errors by. Skipping it here is that, made certain.
    out = _python("""
        import sys
        import desktop.ui  # what every window, the app and the tests import first
        feature = sys.modules["shibokensupport.feature"]
        checked = feature.feature_imported

        def busy_elsewhere(module):
            if getattr(module, "__name__", "") == "pydantic.errors" and "pydantic.fields" not in sys.modules:
                return None
            return checked(module)

        feature.feature_imported = busy_elsewhere
        from desktop.providers.litellm_env import litellm
        print(litellm().__name__)
    """, tmp_path)
    assert out == "litellm"


def test_a_module_imported_after_pyside_is_checked_by_its_file_and_none_of_its_code_runs(tmp_path: Path) -> None:
    (tmp_path / "lazy_names.py").write_text(textwrap.dedent("""
        asked = []

        def __getattr__(name):
            asked.append(name)
            raise AttributeError(name)
    """))
    (tmp_path / "qt_user.py").write_text("import PySide6.QtCore\n")
    out = _python("""
        import sys
        import desktop.ui
        import lazy_names, qt_user
        verdicts = sys.modules["shibokensupport.feature"].pyside_feature_dict
        print(lazy_names.asked, verdicts["lazy_names"], verdicts["qt_user"])
    """, tmp_path)
    assert out == "[] -1 0"  # nothing asked of the module; the one naming PySide6 is still told apart
