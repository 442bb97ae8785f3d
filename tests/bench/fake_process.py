"""The scripted model server (tests/fakeserver.py) in a process of its own, for benchmarks that time model calls.

A real model server never runs in the measured process. One that does shares that process's interpreter lock
with what is measured, and streams its chunks only when the lock is free: the more Python a side runs in the
benchmark's process while an answer streams, the slower its server answers. That weighed on the agent core's
turns (which handle each streamed piece in the benchmark's process) against the floor (bare litellm calls)
differently from one run to the next."""

from __future__ import annotations

import importlib
import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

from tests.fakeserver import Step

WAIT = 30.0  # seconds any answer of the server process may take (it only touches memory)


def _serve(connection: Connection, script: str | None, args: tuple[Any, ...]) -> None:
    from tests.fakeserver import FakeOpenAI

    with FakeOpenAI() as fake:
        if script is not None:  # "module:function", called here with `args`: it returns the server's default
            module, name = script.split(":")
            fake.default = getattr(importlib.import_module(module), name)(*args)
        connection.send(fake.base_url)
        while True:
            try:
                operation, argument = connection.recv()
            except EOFError:
                return
            if operation == "add":
                fake.add(*argument)
                connection.send(None)
            elif operation == "requests":
                connection.send(fake.requests[argument:])
            else:
                return


class FakeProcess:
    """`with FakeProcess() as fake:` a FakeOpenAI in a child process: `base_url`, `add`, `new_requests`. A server
    that answers every request by a function of it (FakeOpenAI.default) is named by `script`, "module:function",
    which is called in the child with `args` (picklable) and returns that function."""

    def __init__(self, script: str | None = None, *args: Any) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, script, args), daemon=True)
        self.base_url = ""
        self._seen = 0

    def __enter__(self) -> FakeProcess:
        self._process.start()
        self.base_url = self._answer()
        return self

    def __exit__(self, *exc: object) -> None:
        self._connection.send(("stop", None))
        self._process.join(WAIT)
        if self._process.is_alive():
            self._process.kill()

    def add(self, *steps: Step) -> None:
        self._connection.send(("add", steps))
        self._answer()

    def new_requests(self) -> list[dict[str, Any]]:
        """The request bodies the server received since the last time this was asked."""
        self._connection.send(("requests", self._seen))
        found: list[dict[str, Any]] = self._answer()
        self._seen += len(found)
        return found

    def _answer(self) -> Any:
        if not self._connection.poll(WAIT):
            raise TimeoutError(f"the scripted server process did not answer in {WAIT:.0f} s")
        return self._connection.recv()
