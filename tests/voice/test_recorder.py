"""PortAudio is loaded on the first recording, not before: nothing of it is on the app's start path, and the
windows that hold a microphone button do not load it either."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import desktop.core, desktop.ui.app, desktop.ui.quick_prompt, desktop.ui.chat.window, desktop.ui.voice.keys
print(sorted(m for m in sys.modules if m.split('.')[0] in ('sounddevice', '_sounddevice', 'numpy')))
"""


def test_sounddevice_is_not_imported_until_someone_records() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False,
                          env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
