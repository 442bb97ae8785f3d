"""A line typed at the terminal (or piped in), awaited without keeping the program alive.

`input()` blocks its thread until Enter. In asyncio's default executor that thread is joined when the program
ends, so Ctrl+C at the chat's prompt (or at an approval's) left the program waiting, frozen, for one more
line; and in a thread the interpreter does not wait for, `input()` holds stdin's lock, which aborts the
interpreter's exit. So each line is read here from the file descriptor itself, in a daemon thread holding no
lock: Ctrl+C ends the program at once and the unfinished read goes with it.

Bytes the terminal's encoding cannot decode (a Latin-1 terminal under a UTF-8 locale) arrive escaped, for the
caller to mend with `well_formed`, where `input()` raised UnicodeDecodeError and ended the chat."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

_unread = bytearray()  # what the last read got past its line's end (a pipe gives many lines at once)


async def read_line(prompt: str) -> str:
    """What the person typed after `prompt`, without its line end. EOFError at the end of input (Ctrl+D, a
    pipe that ran dry, stdin closed)."""
    print(prompt, end="", flush=True)
    loop = asyncio.get_running_loop()
    typed: asyncio.Future[str | None] = loop.create_future()

    def settle(line: str | None) -> None:
        if not typed.done():  # else the await was cancelled meanwhile
            typed.set_result(line)

    def read() -> None:
        line = _next_line()
        try:
            loop.call_soon_threadsafe(settle, line)
        except RuntimeError:  # the program ended while this line was being typed: nobody waits for it
            pass

    threading.Thread(target=read, name="terminal-input", daemon=True).start()
    line = await typed
    if line is None:
        raise EOFError
    return line.removesuffix("\n").removesuffix("\r")


def _next_line() -> str | None:
    """The next line of stdin with its "\n" (the last one may have none); None at the end of input. From its
    descriptor when it has one; a stdin that is no file (a test's text) is read as it is."""
    stdin = sys.stdin
    if stdin is None:
        return None
    try:
        fd = stdin.fileno()
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return stdin.readline() or None
    line = _line_of(fd)
    return None if line is None else line.decode(stdin.encoding or "utf-8", "surrogateescape")


def _line_of(fd: int) -> bytes | None:
    while b"\n" not in _unread:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # descriptor 0 is not open
            chunk = b""
        if not chunk:
            if not _unread:
                return None
            break
        _unread.extend(chunk)
    end = _unread.find(b"\n") + 1 or len(_unread)
    line = bytes(_unread[:end])
    del _unread[:end]
    return line
