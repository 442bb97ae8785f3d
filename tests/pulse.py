"""A private PulseAudio sound server for tests that record or play: its own runtime folder and socket, no cards,
and a default source that is a real input to PortAudio (through ALSA's pulse plugin, libasound2-plugins).

`PulseServer(root, source="tone")`: a 440 Hz sine wave (module-sine-source), so something is always heard and
the level meter moves; `source="silence"`: module-null-source, digital silence (a muted microphone).
`speakers=True` adds a default output, a null sink named `speakers`: what is played there can be seen in the
server's list of playing streams (`playing`) and heard on the sink's monitor (`loudest`). Without it the server
has no output at all, as a computer with nothing to play on.
`env` is what a client needs to reach it (PULSE_SERVER); the daemon runs in its own process group, dies with the
test process (setpriv --pdeathsig) and is stopped by `stop` (the test's reaper kills whatever is left).

The fixtures `microphone`, `muted_microphone`, `no_microphone`, `speakers` and `no_speakers` set the test's
environment up for each case (import them into a conftest)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from array import array
from collections.abc import Iterator
from pathlib import Path

import pytest

START_WITHIN = 15.0  # seconds for the daemon to listen
DIE_WITH_US = ["setpriv", "--pdeathsig", "TERM", "--"]
SOURCES = {
    "tone": ["load-module module-sine-source source_name=tone frequency=440 rate=16000",
             "set-default-source tone"],
    "silence": ["load-module module-null-source source_name=quiet rate=16000",
                "set-default-source quiet"],
}
SPEAKERS = ["load-module module-null-sink sink_name=speakers", "set-default-sink speakers"]
ASK_WITHIN = 10.0  # seconds for pactl and parec to answer


def missing() -> str | None:
    """Why no private sound server can run here (None when it can)."""
    if shutil.which("pulseaudio") is None:
        return "pulseaudio is not installed (apt-get install pulseaudio; packaging/apt-packages-test.txt)"
    if not Path("/usr/share/alsa/alsa.conf.d/pulse.conf").exists():
        return "ALSA's pulse plugin is not installed (libasound2-plugins; packaging/apt-packages-test.txt)"
    return None


class PulseServer:
    def __init__(self, root: Path, source: str = "tone", speakers: bool = False) -> None:
        self.root = root
        self.socket = root / "run" / "native"
        self.log = root / "pulseaudio.log"
        self.source = source
        self.speakers = speakers
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        return {"PULSE_SERVER": f"unix:{self.socket}"}

    def start(self) -> PulseServer:
        runtime = self.root / "run"
        runtime.mkdir(parents=True, mode=0o700, exist_ok=True)
        (self.root / "home").mkdir(exist_ok=True)
        script = self.root / "default.pa"
        script.write_text("\n".join([f"load-module module-native-protocol-unix socket={self.socket} auth-anonymous=1",
                                     *SOURCES[self.source], *(SPEAKERS if self.speakers else [])]) + "\n",
                          encoding="utf-8")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.root / "home"),
               "XDG_RUNTIME_DIR": str(runtime), "PULSE_RUNTIME_PATH": str(runtime / "pulse")}
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [*DIE_WITH_US, "pulseaudio", "-n", "-F", str(script), "--daemonize=no", "--exit-idle-time=-1",
                 "--disable-shm=yes", "--use-pid-file=no", "--log-target=stderr"],
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + START_WITHIN
        while not self._listening():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"pulseaudio did not start: {self.log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        return self

    def _listening(self) -> bool:
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(str(self.socket))
            except OSError:
                return False
        return True

    def playing(self) -> list[str]:
        """The programs playing on the server now, by the names they gave it (blocking: pactl)."""
        listed = subprocess.run(["pactl", "list", "sink-inputs"], env={**os.environ, **self.env}, capture_output=True,
                                text=True, timeout=ASK_WITHIN, check=True).stdout
        return [line.split("=", 1)[1].strip().strip('"') for line in listed.splitlines()
                if line.strip().startswith("application.name =")]

    def loudest(self, seconds: float) -> float:
        """How loud the speakers were over the next `seconds`, 0 (silence, or nothing played) to 1 (full scale),
        as heard on their monitor (blocking: parec)."""
        recorder = subprocess.Popen(["parec", "--device=speakers.monitor", "--raw", "--format=s16le", "--channels=1",
                                     "--rate=16000"], env={**os.environ, **self.env}, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL)
        time.sleep(seconds)
        recorder.terminate()
        heard, _ = recorder.communicate(timeout=ASK_WITHIN)
        samples = array("h")
        samples.frombytes(heard[:len(heard) - len(heard) % 2])
        return max((abs(sample) for sample in samples), default=0) / 32768

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def _pulse(root: Path, source: str, monkeypatch: pytest.MonkeyPatch, speakers: bool = False
           ) -> Iterator[PulseServer]:
    reason = missing()
    if reason:
        pytest.fail(reason)
    server = PulseServer(root, source, speakers).start()
    for name, value in server.env.items():
        monkeypatch.setenv(name, value)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def microphone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PulseServer]:
    """The default input hears a steady tone."""
    yield from _pulse(tmp_path / "pulse", "tone", monkeypatch)


@pytest.fixture
def muted_microphone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PulseServer]:
    """The default input gives digital silence."""
    yield from _pulse(tmp_path / "pulse", "silence", monkeypatch)


@pytest.fixture
def speakers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PulseServer]:
    """The default output is a null sink whose monitor hears what is played."""
    yield from _pulse(tmp_path / "pulse", "silence", monkeypatch, speakers=True)


@pytest.fixture
def no_speakers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PulseServer]:
    """A sound server with no output: nothing can be played."""
    yield from _pulse(tmp_path / "pulse", "silence", monkeypatch)


@pytest.fixture
def no_microphone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No sound server, and (checked in a fresh process) no sound input of the machine's own either: the
    recording is refused for real. A machine with a microphone of its own skips the test."""
    monkeypatch.setenv("PULSE_SERVER", f"unix:{tmp_path / 'no-sound-server'}")
    probe = subprocess.run([sys.executable, "-c", "import sounddevice; print(sounddevice.query_devices(kind='input'))"],
                           capture_output=True, text=True, timeout=60, env=dict(os.environ))
    if probe.returncode == 0:
        pytest.skip(f"this machine has a sound input of its own: {probe.stdout.strip()[:200]}")
