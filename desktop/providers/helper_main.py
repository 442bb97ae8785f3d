"""The model helper process: litellm and tiktoken live here, not in the tray app (desktop/providers/helper.py
starts it). Together they are two thirds of the app's memory (litellm alone about 190 MB); the app at rest keeps
none of it and a helper comes and goes with use.

It answers the app's requests on the socket it was given, each in a task of its own, so calls overlap (a chat, a
background task, Dream). It runs only the operations named in OPS, and exits when the app closes the socket (at
once, also while the library is still loading)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from desktop.kernel.wellformed import well_formed_json
from desktop.providers import lookups, streaming, wire
from desktop.providers.litellm_env import FORCED, offline_environment
from desktop.usage import pricing
from desktop.voice import calls

# What the app may ask for, by name: each `async def f(emit, **args)` with JSON arguments and a JSON result;
# `emit` sends an event (a piece of a streamed answer) ahead of the result. The helper is the one process that
# imports these modules (they load litellm and tiktoken when first used).
OPS: dict[str, Callable[..., Awaitable[Any]]] = {
    "chat": streaming.attempt,
    "key_needs": lookups.key_needs,
    "knows_provider": lookups.knows_provider,
    "chat_models": lookups.chat_models,
    "sees_images": lookups.sees_images,
    "price_call": pricing.price_call,
    "price_audio": pricing.price_audio,
    "speech": calls.speech,
    "transcription": calls.transcription,
}

log = logging.getLogger("desktop.providers.helper")


def run(fd: str) -> int:
    """Serve the app on socket `fd` until it closes it."""
    sock = socket.socket(fileno=int(fd))
    try:
        asyncio.run(_serve(sock))
    except KeyboardInterrupt:
        pass
    return 0


async def _serve(sock: socket.socket) -> None:
    reader, writer = await asyncio.open_unix_connection(sock=sock)
    # Started on the person's first sign of intent (the hotkey, the chat window): the library loads while they
    # type, on a thread, so a cancel or a cheap request is read meanwhile.
    loading = asyncio.create_task(_load_library())
    running: dict[int, asyncio.Task[None]] = {}

    def send(message: dict[str, Any]) -> None:
        """Everything the app gets from here is made well formed on its way out: a server's words (a refusal's
        reason, a transcript) may hold a lone surrogate, which the frame cannot carry (the call never answered)."""
        if not writer.is_closing():
            writer.write(wire.frame(well_formed_json(message)))

    to_app = _ToApp(send)
    logging.getLogger().addHandler(to_app)
    logging.getLogger().setLevel(logging.WARNING)

    async def answer(number: int, name: str, args: dict[str, Any]) -> None:
        try:
            await asyncio.shield(loading)
            result = await OPS[name](lambda event: send({"id": number, "event": event}), **args)
            send({"id": number, "result": result})  # in here: a result no frame can carry still ends the call
        except Exception as exc:  # a bug here, not a failed call (ops say those in their results)
            log.exception("%s failed", name)
            send({"id": number, "error": f"{type(exc).__name__}: {exc}"})
        finally:
            running.pop(number, None)
        await writer.drain()

    while (message := await wire.read(reader)) is not None:
        if "environment" in message:  # the app's, as it is now (desktop/providers/helper.py)
            _adopt(message["environment"])
        if "cancel" in message:
            task = running.get(message["cancel"])
            if task is not None:
                task.cancel()
            continue
        number, name = message["id"], message["op"]
        if name not in OPS:
            send({"id": number, "error": f"no such operation: {name}"})
            continue
        running[number] = asyncio.create_task(answer(number, name, message.get("args") or {}))
    for task in list(running.values()):
        task.cancel()
    await asyncio.gather(*running.values(), return_exceptions=True)
    logging.getLogger().removeHandler(to_app)
    writer.close()
    if not loading.done():
        # The app closed the socket while the library still loads (it quit soon after a window took the focus, or a
        # command line stopped at a mistake). An import cannot be stopped, and leaving normally waits for it:
        # seconds the app's quit waits for this process, which it kills after EXIT_WAIT. Nothing is left to do.
        os._exit(0)


class _ToApp(logging.Handler):
    """The helper's log lines (its own and litellm's warnings, a failed operation's traceback), sent to the app to
    write in its log file. Its standard error goes wherever the desktop sends the app's: often nowhere, so a
    helper's trouble would be missing from the log a person finds or sends. The app scrubs keys there, as from
    any line. Lines from the loop's thread go out at once, in order with the answers; litellm's threads hand
    theirs to the loop."""

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        super().__init__()
        self._send = send
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = {"log": {"level": record.levelno, "name": record.name, "text": self.format(record)}}
            if threading.get_ident() == self._thread:
                self._send(message)
            else:
                self._loop.call_soon_threadsafe(self._send, message)
        except Exception:  # the loop has closed, or the record cannot be formatted: standard error says so
            self.handleError(record)


def _adopt(environment: dict[str, str]) -> None:
    """The app's environment, keeping the offline settings where the app sets none. Changed variable by variable,
    never emptied first: litellm may be importing on its thread meanwhile, and an import that found the cost-map
    setting missing for a moment fetched the map from GitHub (and retried for seconds when offline)."""
    wanted = {**offline_environment(), **environment, **FORCED}
    for name in [name for name in os.environ if name not in wanted]:
        del os.environ[name]
    os.environ.update(wanted)


async def _load_library() -> None:
    """Import litellm, then walk one streamed call through it with a made-up answer (litellm's mock_response: no
    request leaves the process): the first real call would otherwise load another 65 modules first (0.15 s)."""
    from desktop.providers.litellm_env import litellm

    module = await asyncio.to_thread(litellm)
    try:
        stream = await module.acompletion(model="openai/warm-up", messages=[{"role": "user", "content": "-"}],
                                          stream=True, mock_response="-", api_key="unused")
        async for _chunk in stream:
            pass
    except Exception:  # only a head start: the real call goes its own way
        log.debug("the warm-up call failed", exc_info=True)
