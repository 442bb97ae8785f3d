"""A private speech-dispatcher for tests that read aloud with the computer's own voice: its own socket, speaking
with espeak-ng into a private PulseAudio server's speakers (tests/pulse.py), so what it says can be heard on
their monitor. The app's spd-say reaches it through SPEECHD_ADDRESS.

The fixtures: `speech_dispatcher` (running, its voice going to the `speakers` server) and `no_speech_dispatcher`
(spd-say is not on the PATH, as on a computer without the package)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pulse import DIE_WITH_US, PulseServer

START_WITHIN = 15.0  # seconds for the daemon to listen
STOP_WITHIN = 10.0
INSTALL = "apt-get install speech-dispatcher speech-dispatcher-espeak-ng; packaging/apt-packages-test.txt"


class SpeechDispatcher:
    def __init__(self, root: Path, pulse: PulseServer) -> None:
        self.root = root
        self.socket = root / "run" / "speechd.sock"
        self.log = root / "speech-dispatcher.log"
        self.pulse = pulse
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        return {"SPEECHD_ADDRESS": f"unix_socket:{self.socket}"}

    def start(self) -> SpeechDispatcher:
        (self.root / "run").mkdir(parents=True, mode=0o700, exist_ok=True)
        (self.root / "home").mkdir(exist_ok=True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.root / "home"),
               "XDG_RUNTIME_DIR": str(self.root / "run"), **self.pulse.env}
        with self.log.open("wb") as log:  # -s: in the foreground; -t 0: it stays until stopped
            self.proc = subprocess.Popen(
                [*DIE_WITH_US, "speech-dispatcher", "-s", "-t", "0", "-c", "unix_socket", "-S", str(self.socket)],
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + START_WITHIN
        while not self.socket.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"speech-dispatcher did not start: {self.log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """The daemon and its speech modules (in its process group)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                proc.wait(STOP_WITHIN)
                return
            except subprocess.TimeoutExpired:
                continue


@pytest.fixture
def speech_dispatcher(tmp_path: Path, speakers: PulseServer, monkeypatch: pytest.MonkeyPatch
                      ) -> Iterator[SpeechDispatcher]:
    if shutil.which("speech-dispatcher") is None or shutil.which("spd-say") is None:
        pytest.fail(f"speech-dispatcher is not installed ({INSTALL})")
    if not Path("/usr/lib/speech-dispatcher-modules/sd_espeak-ng").exists():
        pytest.fail(f"speech-dispatcher has no voice: its espeak-ng module is not installed ({INSTALL})")
    daemon = SpeechDispatcher(tmp_path / "speechd", speakers).start()
    for name, value in daemon.env.items():
        monkeypatch.setenv(name, value)
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def no_speech_dispatcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """spd-say is nowhere on the PATH."""
    empty = tmp_path / "no-programs"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
