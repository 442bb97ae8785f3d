"""One streamed chat answer, in the model helper (desktop/providers/helper_main.py): the request to litellm,
its chunks into text, reasoning and tool calls (each piece sent to the app as it arrives), the bounds on a
stream that stalls or never ends, and a failure put in words with whether a retry may help. The app keeps the
retry policy, the keys and the meter (desktop/providers/llm.py)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from desktop.kernel.wellformed import ends_in_high_surrogate, well_formed
from desktop.providers.failures import classify, is_quota
from desktop.providers.litellm_env import litellm

RETRY_STATUS = {408, 409, 429}
DeltaSink = Callable[[str], None]
Emit = Callable[[dict[str, Any]], None]

class _CutOff(Exception):
    """The stream ended without the model saying it was done (no finish_reason)."""


class _Empty(Exception):
    """The model finished with neither text nor tool calls."""


class _TooLong(Exception):
    """The stream outlasted its bound while content kept arriving."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no end after {seconds:.0f} s")
        self.seconds = seconds


class _Stalled(Exception):
    """The stream stayed open but brought no content (only keep-alives or empty chunks) for `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no content for {seconds:g} s")
        self.seconds = seconds


# A stream may take `provider.timeout` for each piece of content, and this many times that in all: a stream
# that keeps sending content and never finishes must still end.
WHOLE_ANSWER_FACTOR = 10




async def attempt(emit: Emit, *, request: dict[str, Any], allow_empty: bool) -> dict[str, Any]:
    """One try of a call: `request` is litellm's arguments (the key among them). Sends {"text": piece} and
    {"reasoning": piece} as they stream; returns {"response": ...} or {"failure": ...} (see `_failure`)."""
    acc = _Accumulator(lambda piece: emit({"text": piece}), lambda piece: emit({"reasoning": piece}))
    try:
        return {"response": await _stream(request, acc, allow_empty)}
    except Exception as exc:
        return {"failure": await _failure(exc, acc, request)}


async def _stream(request: dict[str, Any], acc: _Accumulator, allow_empty: bool) -> dict[str, Any]:
    stream = await litellm().acompletion(**request)
    await _drain(stream, acc, float(request["timeout"]))
    # litellm reports a made-up "stop" when the stream ends without one; its wrapper keeps what was received
    if not (getattr(stream, "received_finish_reason", None) or getattr(stream, "intermittent_finish_reason", None)):
        raise _CutOff()
    response = acc.result()
    if not (response["content"] or response["tool_calls"] or allow_empty):
        raise _Empty()
    # When the server reports no usage, litellm makes up its own count for the last chunk; the server's chunks,
    # which it keeps, show which it was. A count nobody reported is left to the meter to estimate (and say so)
    kept = getattr(stream, "chunks", None)
    if kept is not None and not any(getattr(chunk, "usage", None) for chunk in kept):
        response["usage"] = {}
    return response


async def _failure(exc: Exception, acc: _Accumulator, request: dict[str, Any]) -> dict[str, Any]:
    """What the app needs of a failed try: the sentence for the person and what can help (`kind`), whether text
    had reached them (`emitted`: no retry then) and what (`partial`, when the answer broke off), whether a retry
    may help and after how long the server asked, and whether it was a refused key (the app may have one)."""
    timeout = float(request["timeout"])
    found: dict[str, Any] = {"emitted": acc.emitted, "partial": None, "retryable": _retryable(exc),
                             "retry_after": _retry_after(exc), "describe": _describe(exc), "kind": "answer",
                             "auth": isinstance(exc, litellm().AuthenticationError)}
    if isinstance(exc, _CutOff):
        found["message"] = "The answer broke off: the model server closed the stream before the answer was finished."
    elif isinstance(exc, _Empty):
        found["message"] = "The model finished without an answer (it sent no text)."
    elif isinstance(exc, _TooLong):
        found["message"] = (f"The model kept streaming for {exc.seconds:.0f} s without finishing its answer, so it "
                            "was stopped (the bound is ten times provider.timeout).")
    elif isinstance(exc, _Stalled):
        found["message"] = (f"The model server kept the stream open but sent nothing for {exc.seconds:g} s, so the "
                            "call was stopped (provider.timeout).")
    else:
        kind, found["message"] = await classify(exc, request.get("api_base"), request["model"], timeout)
        found["kind"] = kind.value
    if acc.emitted and isinstance(exc, (_CutOff, _TooLong, _Stalled)):
        found["partial"] = acc.text
    return found


async def _drain(stream: Any, acc: _Accumulator, limit: float) -> None:
    """Feed the stream to `acc` while content keeps coming. Keep-alives and empty chunks hold the connection
    (so the HTTP read timeout never fires) but are no progress: provider.timeout without content ends the
    call, and so does the whole-answer bound. The stream is closed in any case, so the server sees the
    client leave and stops generating."""
    loop = asyncio.get_running_loop()
    whole = loop.time() + limit * WHOLE_ANSWER_FACTOR
    try:
        async with asyncio.timeout(limit) as deadline:
            async for chunk in stream:
                if acc.feed(chunk):
                    deadline.reschedule(min(loop.time() + limit, whole))
    except TimeoutError as exc:
        if not deadline.expired():
            raise
        if (deadline.when() or 0) >= whole:  # the last stretch was cut short by the whole-answer bound
            raise _TooLong(limit * WHOLE_ANSWER_FACTOR) from exc
        raise _Stalled(limit) from exc
    except Exception as exc:
        # litellm's word for a connection that ended or broke mid-stream, before the model said it was done
        if isinstance(getattr(exc, "original_exception", None) or exc, litellm().APIConnectionError):
            raise _CutOff() from exc
        raise
    finally:
        await stream.aclose()


class _Accumulator:
    """Builds one response from stream chunks: text, reasoning, tool calls arriving in fragments."""

    def __init__(self, on_text: DeltaSink | None, on_reasoning: DeltaSink | None) -> None:
        self._think = ThinkSplitter(on_text or (lambda s: None), on_reasoning or (lambda s: None))
        self._text, self._reasoning = _Mender(), _Mender()
        self._calls: dict[int, dict[str, str]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, int] = {}

    @property
    def emitted(self) -> bool:
        return bool(self._think.text or self._think.reasoning)

    @property
    def text(self) -> str:
        return self._think.text + ("" if self._think.inside else self._think.pending)

    def feed(self, chunk: Any) -> bool:
        """Take one chunk; True when it brought content (text, reasoning, a tool call's name or arguments)."""
        content = False
        usage = getattr(chunk, "usage", None)
        if usage:
            self.usage = {k: int(getattr(usage, k, 0) or 0)
                          for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
            # part of prompt_tokens the server read from its cache (OpenAI's field; litellm maps others to it)
            cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", 0)
            self.usage["cached_tokens"] = int(cached or 0)
        for choice in getattr(chunk, "choices", None) or []:
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            delta = choice.delta
            reasoning = getattr(delta, "reasoning_content", None)
            if reasoning:
                self._think.reasoning_delta(self._reasoning.mend(reasoning))
            if delta.content:
                self._think.feed(self._text.mend(delta.content))
            content = content or bool(reasoning or delta.content)
            for part in getattr(delta, "tool_calls", None) or []:
                slot = self._calls.setdefault(part.index or 0, {"id": "", "name": "", "arguments": ""})
                if part.id:
                    slot["id"] = part.id
                fn = part.function
                if fn is not None:
                    if fn.name:
                        slot["name"] = fn.name
                    if fn.arguments:
                        slot["arguments"] += fn.arguments
                    content = content or bool(fn.name or fn.arguments)
        return content

    def result(self) -> dict[str, Any]:
        """The answer as the app's LLMResponse takes it (desktop/providers/llm.py)."""
        self._think.reasoning_delta(self._reasoning.flush())
        self._think.feed(self._text.flush())
        self._think.flush()
        calls = [{"id": well_formed(c["id"]) or f"call_{i}", "name": well_formed(c["name"]),
                  "arguments": well_formed(c["arguments"])} for i, c in sorted(self._calls.items())]
        return {"content": self._think.text.strip(), "tool_calls": calls, "reasoning": self._think.reasoning or None,
                "finish_reason": self.finish_reason, "usage": self.usage}


class _Mender:
    """Streamed pieces made well formed (desktop/kernel/wellformed.py). A piece that ends in the first half of a
    surrogate pair keeps it back: some servers send one character's two escapes in two chunks."""

    def __init__(self) -> None:
        self._held = ""

    def mend(self, piece: str) -> str:
        piece = self._held + piece
        self._held = piece[-1] if ends_in_high_surrogate(piece) else ""
        return well_formed(piece[:len(piece) - len(self._held)])

    def flush(self) -> str:
        held, self._held = self._held, ""
        return well_formed(held)


class ThinkSplitter:
    """Routes `<think>...</think>` spans of streamed text to reasoning, the rest to the answer."""

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self, on_text: DeltaSink, on_reasoning: DeltaSink) -> None:
        self._on_text, self._on_reasoning = on_text, on_reasoning
        self._pending = ""
        self._inside = False
        self.text = ""
        self.reasoning = ""

    @property
    def inside(self) -> bool:
        return self._inside

    @property
    def pending(self) -> str:
        return self._pending

    def reasoning_delta(self, piece: str) -> None:
        if not piece:
            return
        self.reasoning += piece
        self._on_reasoning(piece)

    def feed(self, piece: str) -> None:
        self._pending += piece
        while self._pending:
            tag = self.CLOSE if self._inside else self.OPEN
            at = self._pending.find(tag)
            if at >= 0:
                self._emit(self._pending[:at])
                self._pending = self._pending[at + len(tag):]
                self._inside = not self._inside
                continue
            keep = _partial_suffix(self._pending, tag)
            self._emit(self._pending[:len(self._pending) - keep])
            self._pending = self._pending[len(self._pending) - keep:]
            break

    def flush(self) -> None:
        self._emit(self._pending)
        self._pending = ""

    def _emit(self, piece: str) -> None:
        if not piece:
            return
        if self._inside:
            self.reasoning_delta(piece)
        else:
            if not self.text:
                piece = piece.lstrip("\n")
                if not piece:
                    return
            self.text += piece
            self._on_text(piece)


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of text that could start `tag` (held back until we know)."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0


def _status(exc: Exception) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, (_CutOff, _Empty, _Stalled)):
        return True  # nothing reached the user yet (else no retry is asked): a fresh try may well work
    if isinstance(exc, _TooLong):
        return False
    lm = litellm()
    if is_quota(exc):
        return False
    if isinstance(exc, (lm.Timeout, lm.APIConnectionError, asyncio.TimeoutError, ConnectionError)):
        return True
    status = _status(exc)
    return status is not None and (status in RETRY_STATUS or status >= 500)


def _retry_after(exc: Exception) -> float:
    for source in (getattr(exc, "litellm_response_headers", None),
                   getattr(getattr(exc, "response", None), "headers", None)):
        try:
            value = source.get("retry-after") if source is not None else None
        except Exception:
            value = None
        if value:
            try:
                return min(float(value), 60.0)
            except ValueError:
                return 0.0
    return 0.0


def _describe(exc: Exception) -> str:
    message = re.sub(r"\s+", " ", str(exc)).strip()
    message = re.sub(r"(sk|key)-[A-Za-z0-9_\-]{8,}", "[redacted]", message)
    status = _status(exc)
    prefix = f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "")
    return f"{prefix}: {message[:300]}"
