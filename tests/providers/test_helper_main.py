"""The helper's side of the socket (desktop/providers/helper_main.py), driven in this process over a socket pair:
every request is answered, even when its answer cannot be sent as it is."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from desktop.providers import helper_main, wire


async def _answer(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message that answers a call (log lines the helper sends for the app's log go by)."""
    while (message := await asyncio.wait_for(wire.read(reader), 10)) is not None and "id" not in message:
        pass
    return message


async def _loaded() -> None:
    """The library counts as loaded at once: loading litellm here would put it in this test process."""


async def test_an_answer_the_socket_cannot_carry_ends_its_call_as_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, the call waited for ever: the result failed to encode after the operation's own error handling,
    and a chat turn has no time limit of its own."""
    async def unsendable(emit: Any) -> Any:
        return {"names": {"a set", "JSON has no sets"}}

    monkeypatch.setattr(helper_main, "_load_library", _loaded)
    monkeypatch.setitem(helper_main.OPS, "odd", unsendable)
    app, helper = socket.socketpair()
    serving = asyncio.create_task(helper_main._serve(helper))
    reader, writer = await asyncio.open_unix_connection(sock=app)
    try:
        writer.write(wire.frame({"id": 7, "op": "odd", "args": {}}))
        answer = await _answer(reader)
        assert answer == {"id": 7, "error": "TypeError: Object of type set is not JSON serializable"}
        writer.write(wire.frame({"id": 8, "op": "nothing", "args": {}}))  # and the helper still serves
        assert await _answer(reader) == {"id": 8, "error": "no such operation: nothing"}
    finally:
        writer.close()
        await asyncio.wait_for(serving, 10)
