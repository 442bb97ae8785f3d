"""`nanobot-tray` as a process of its own, with Ctrl+C as a terminal delivers it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.fakeserver import FakeOpenAI

# A child inherits an ignored SIGINT (a test run started in the background), and Python then installs no handler
# of its own: this puts back the one every interactive start has.
WITH_CTRL_C = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
               "from desktop.cli import main; sys.exit(main())")


def process_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a command run against `home`, with no keys."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(NANOBOT_TRAY_HOME=str(home), PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring", **extra)
    return env


def ctrl_c_during_a_model_call(home: Path, fake: FakeOpenAI, answer: str,
                               *argv: str) -> subprocess.CompletedProcess[str]:
    """`nanobot-tray ARGV`, sent Ctrl+C once its first request reached the model, whose `answer` waits for it."""
    asked = threading.Event()
    fake.add({"content": answer, "after": asked})
    command = subprocess.Popen([sys.executable, "-c", WITH_CTRL_C, *argv], env=process_env(home),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 60
        while not fake.requests and time.monotonic() < end and command.poll() is None:
            time.sleep(0.05)
        assert fake.requests, f"{argv} never asked the model"
        command.send_signal(signal.SIGINT)
        out, err = command.communicate(timeout=20)
    finally:
        asked.set()
        command.kill()
        command.communicate()
    return subprocess.CompletedProcess(command.args, command.returncode, out, err)
