"""The GUI thread first while another thread runs Python.

Python threads take turns on one lock (the GIL). A thread busy in Python lets it go only when another has waited
the switch interval (5 ms by default), and the GUI thread takes it again for every slot, timer and event it
handles in Python: while a thread compiles a Pygments lexer's regular expressions or builds a long chat's rows,
each of those can wait 5 ms, and a frame that runs a few of them stalls past 16 ms though it does 3 ms of work
(opening a 10,000-message chat with code in it: 20-30 ms). While such work runs (`gui_first`) the interval is
1 ms; the thread's work takes a little longer, the window does not wait for it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

SWITCH_S = 0.001

_held = 0  # `gui_first` blocks running now; entered and left on the GUI thread only
_usual = sys.getswitchinterval()


@contextmanager
def gui_first() -> Iterator[None]:
    """The GIL handed over every SWITCH_S while the block runs (it may await a thread's work); back to the usual
    interval once no such block runs."""
    global _held, _usual
    if not _held:
        _usual = sys.getswitchinterval()
        sys.setswitchinterval(min(SWITCH_S, _usual))
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if not _held:
            sys.setswitchinterval(_usual)
