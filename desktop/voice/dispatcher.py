"""Reading aloud with the computer's own voice when no read-aloud model is set: speech-dispatcher, through its
command `spd-say` (Debian and Ubuntu: the package speech-dispatcher), which starts the speech-dispatcher
service itself when none runs.

The text goes on spd-say's standard input (`--pipe-mode`, a message a line), never on its command line, where
every user of the computer could read it in /proc, and never through a shell; `--wait` keeps spd-say running
until the text has been said or cancelled, so its end is the reading's end. A stop asks speech-dispatcher to
cancel what it is saying (`spd-say --cancel`: spd-say has no way to cancel one message of another connection,
so whatever else speech-dispatcher was saying at that moment stops too), which also ends the waiting spd-say;
one that does not end is killed."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from desktop.voice.problems import VoiceError
from desktop.workspace.programs import program_outside

log = logging.getLogger(__name__)

PROGRAM = "spd-say"
INSTALL = "Debian and Ubuntu: sudo apt install speech-dispatcher"
CANCEL_WITHIN = 5.0  # seconds for `spd-say --cancel`
EXIT_WITHIN = 1.0  # seconds for the waiting spd-say to end once its text is cancelled
CANCELS = 3  # a text still on its way to speech-dispatcher escapes a cancel that arrives before it


def find(workspace: Path) -> str | None:
    """Where spd-say is (the file that will run), or None when speech-dispatcher is not installed. Raises
    InWorkspace for one in the workspace (desktop/workspace/programs.py). Looks at the disk: not on the GUI
    thread."""
    return program_outside(PROGRAM, workspace, cwd=Path("/"))


async def say(program: str, text: str) -> None:
    """Until speech-dispatcher has said `text`; when the awaiting task is cancelled, silenced at once. Raises
    VoiceError when spd-say fails (no speech-dispatcher service, no voice)."""
    spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
        program, "--wait", "--pipe-mode", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE))
    try:
        proc = await asyncio.shield(spawn)  # cancelled while starting: it still gets silenced
    except asyncio.CancelledError:
        await asyncio.shield(_silence(program, spawn))
        raise
    except OSError as exc:
        raise VoiceError(f"speech-dispatcher could not be started ({PROGRAM}: {exc.strerror or exc}).") from exc
    try:
        _, err = await proc.communicate(text.encode("utf-8") + b"\n")
    except asyncio.CancelledError:
        await asyncio.shield(_silence(program, spawn))
        raise
    if proc.returncode:
        said = " ".join(err.decode("utf-8", "replace").split())[:300] or f"exit status {proc.returncode}"
        raise VoiceError(f"speech-dispatcher could not read the answer aloud ({PROGRAM}: {said}).")


async def _silence(program: str, spawn: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """Cancel what speech-dispatcher says until the waiting spd-say ends; killed if it does not."""
    try:
        proc = await spawn
    except OSError:
        return
    for _ in range(CANCELS):
        if proc.returncode is not None:
            return
        await _cancel(program)
        try:
            async with asyncio.timeout(EXIT_WITHIN):
                await proc.wait()
            return
        except TimeoutError:
            continue
    log.warning("spd-say did not end when its text was cancelled; killing it")
    proc.kill()
    await proc.wait()
    await _cancel(program)


async def _cancel(program: str) -> None:
    try:
        cancel = await asyncio.create_subprocess_exec(program, "--cancel", stdin=asyncio.subprocess.DEVNULL,
                                                      stdout=asyncio.subprocess.DEVNULL,
                                                      stderr=asyncio.subprocess.DEVNULL)
    except OSError as exc:
        log.warning("could not ask speech-dispatcher to stop: %s", exc)
        return
    try:
        async with asyncio.timeout(CANCEL_WITHIN):
            await cancel.wait()
    except TimeoutError:
        cancel.kill()
        await cancel.wait()
