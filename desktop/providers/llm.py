"""Streaming chat completions through litellm, with our own retry policy and key lookup."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from desktop.config import Config
from desktop.kernel import secrets
from desktop.providers.failures import FailureKind, classify, is_quota
from desktop.providers.litellm_env import litellm
from desktop.providers.model_thread import run_on_model_thread, to_caller

log = logging.getLogger(__name__)

RETRY_STATUS = {408, 409, 429}
NO_KEY = "no-key-needed"
DeltaSink = Callable[[str], None]
RetrySink = Callable[[int, int, float], None]  # try number, tries in all, seconds until it


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it


@dataclass
class LLMResponse:
    content: str
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    reasoning: str | None = None
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)  # as the server reported it; empty when it did not


@dataclass(frozen=True)
class AudioCall:
    """A speech model's call (dictation's transcription, reading aloud's speech) as its server reported it, for
    the meter: what it said, and what to estimate from when it said nothing."""

    speech: bool  # text made into sound; False: sound made into text
    text: str  # the text read aloud, or the transcript
    api_base: str | None  # where it was sent (a server on this computer or the network costs nothing)
    prompt_tokens: int | None = None  # as reported; None when the server reported no tokens
    completion_tokens: int | None = None
    seconds: float | None = None  # the sound's length (whisper is billed by it): reported, else as recorded


class Meter(Protocol):
    """What sees every model call (desktop/usage): it may refuse one before it starts, and counts each answer."""

    def admit(self, model: str) -> None: ...  # raises ProviderError to refuse the call (a budget reached)

    async def count(self, model: str, messages: list[dict[str, Any]], response: LLMResponse) -> None: ...

    async def count_audio(self, model: str, call: AudioCall) -> None: ...


class ProviderError(RuntimeError):
    """The model could not be reached or refused; the message is for the user, `kind` says what can help."""

    def __init__(self, message: str, kind: FailureKind = FailureKind.OTHER) -> None:
        super().__init__(message)
        self.kind = kind


class StreamBroken(ProviderError):
    """The stream failed after text reached the user: retrying would repeat it."""


class IncompleteAnswer(StreamBroken):
    """The answer stopped before its end; `partial` is what arrived, never to be taken for a whole answer."""

    def __init__(self, message: str, partial: str) -> None:
        super().__init__(message, FailureKind.ANSWER)
        self.partial = partial


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


def provider_name(model: str) -> str:
    """The provider as litellm spells it (the part before the first '/')."""
    if "/" in model:
        return model.split("/", 1)[0]
    try:
        return str(litellm().get_llm_provider(model)[1])
    except Exception:
        return "openai"


class LLMProvider:
    def __init__(self, config: Config, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.config = config
        self._sleep = sleep
        self._refused_without_key: set[str] = set()  # api_base servers that answered 401 to no key
        self.meter: Meter | None = None  # the one place every call passes (a feature sets it)

    def api_key(self, model: str) -> str | None:
        """The key to send to the chat's server (`api_base`). Blocking: call it on the model thread."""
        return self.key_for(model, self.config.api_base)

    def key_for(self, model: str, base: str | None) -> str | None:
        """The key to send for `model` at `base` (None: the provider's own servers). The OS keyring is asked
        only when a key is really needed: not when the provider's environment variable is set or the provider
        takes none, and for a server at `base` (usually local, keyless) only once it refused a request without
        one (`refused_without_key`). Blocking: call it on the model thread."""
        provider = provider_name(model)
        missing = litellm().validate_environment(model=model).get("missing_keys") or []
        if not missing or any(os.environ.get(m) is not None for m in missing):
            return None  # litellm finds it itself (or needs none)
        if base and base not in self._refused_without_key:
            known = secrets.get_key(provider) if secrets.known_key(provider) else None  # known: no keyring call
            return known or NO_KEY  # the client wants some key; keyless servers ignore it
        try:
            key = secrets.get_key(provider)
        except secrets.KeyringUnavailable as exc:
            if base:
                return NO_KEY  # the server's refusal is the error the user sees
            raise ProviderError(f"No API key for provider '{provider}': {exc}", FailureKind.KEY) from exc
        if key or base:
            return key or NO_KEY
        raise ProviderError(f"No API key for provider '{provider}'. Add it in Settings, run "
                            f"`nanobot-tray keys set {provider}` or set {missing[0]}.", FailureKind.KEY)

    async def prepare(self) -> None:
        """Load the model library (seconds, once) on a worker thread: a turn that first waits for something else
        (MCP servers connecting) loads it meanwhile instead of after. Every call does this anyway."""
        await asyncio.to_thread(litellm)

    def refused_without_key(self, base: str) -> None:
        """The server at `base` answered 401 to a request without a key: from now on it gets the stored one."""
        self._refused_without_key.add(base)

    async def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, *,
                   on_text: DeltaSink | None = None, on_reasoning: DeltaSink | None = None,
                   model: str | None = None, max_tokens: int | None = None,
                   allow_empty: bool = False, on_retry: RetrySink | None = None) -> LLMResponse:
        """One answer, retried on transient failures. Raises ProviderError with a message for the user, also when
        the answer is empty (unless allow_empty), was cut off, or outlasted the call's bound."""
        model = model or self.config.model
        if not model:
            raise ProviderError("No model is configured. Set `model` in config.yaml or open Settings.")
        if self.meter is not None:
            self.meter.admit(model)
        delays = list(self.config.provider.retry_delays)
        attempt = 0
        while True:
            live = threading.Event()
            live.set()
            streamed = _Accumulator(to_caller(on_text, live), to_caller(on_reasoning, live))
            try:
                response = await run_on_model_thread(
                    self._stream_once(model, messages, tools, streamed, max_tokens, allow_empty))
            except asyncio.CancelledError:
                live.clear()  # deltas still in flight must not reach a stopped turn
                raise
            except ProviderError:
                raise
            except Exception as exc:
                if streamed.emitted or attempt >= len(delays) or not _retryable(exc):
                    raise await self._failure(exc, streamed, model) from exc
                wait = max(delays[attempt], _retry_after(exc))
                attempt += 1
                # not a warning: a retry is routine, and callers show it their way (on_retry); the log keeps why
                log.info("model call failed (%s); retry %d in %.1fs", _describe(exc), attempt, wait)
                if on_retry is not None:
                    on_retry(attempt + 1, len(delays) + 1, wait)
                await self._sleep(wait)
            else:
                if self.meter is not None:
                    await self.meter.count(model, messages, response)
                return response

    async def _failure(self, exc: Exception, streamed: _Accumulator, model: str) -> ProviderError:
        """The error the user sees for a call that will not be tried again."""
        partial = IncompleteAnswer if streamed.emitted else None
        if isinstance(exc, _CutOff):
            message = "The answer broke off: the model server closed the stream before the answer was finished."
            return partial(message, streamed.text) if partial else ProviderError(message, FailureKind.ANSWER)
        if isinstance(exc, _Empty):
            return (StreamBroken if streamed.emitted else ProviderError)(
                "The model finished without an answer (it sent no text).", FailureKind.ANSWER)
        if isinstance(exc, _TooLong):
            message = (f"The model kept streaming for {exc.seconds:.0f} s without finishing its answer, so it was "
                       "stopped (the bound is ten times provider.timeout).")
            return partial(message, streamed.text) if partial else ProviderError(message, FailureKind.ANSWER)
        if isinstance(exc, _Stalled):
            message = (f"The model server kept the stream open but sent nothing for {exc.seconds:g} s, so the call "
                       "was stopped (provider.timeout).")
            return partial(message, streamed.text) if partial else ProviderError(message, FailureKind.ANSWER)
        kind, message = await classify(exc, self.config, model, self.config.provider.timeout)
        return (StreamBroken if streamed.emitted else ProviderError)(message, kind)

    async def _stream_once(self, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                           acc: _Accumulator, max_tokens: int | None, allow_empty: bool) -> LLMResponse:
        kwargs: dict[str, Any] = {
            "model": model, "messages": messages, "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": self.config.temperature,
            "max_tokens": max_tokens or self.config.max_tokens,
            "timeout": self.config.provider.timeout,
            "num_retries": 0, "max_retries": 0,
        }
        if tools:
            kwargs["tools"] = tools
        if self.config.api_base:
            kwargs["api_base"] = self.config.api_base
        key = self.api_key(model)
        if key:
            kwargs["api_key"] = key
        try:
            stream = await litellm().acompletion(**kwargs)
        except litellm().AuthenticationError:
            if key != NO_KEY or not self.config.api_base:
                raise
            self.refused_without_key(self.config.api_base)
            kwargs["api_key"] = self.api_key(model)
            if kwargs["api_key"] == NO_KEY:
                raise
            stream = await litellm().acompletion(**kwargs)
        await self._drain(stream, acc)
        # litellm reports a made-up "stop" when the stream ends without one; its wrapper keeps what was received
        if not (getattr(stream, "received_finish_reason", None) or getattr(stream, "intermittent_finish_reason", None)):
            raise _CutOff()
        response = acc.result()
        if not (response.content or response.tool_calls or allow_empty):
            raise _Empty()
        # When the server reports no usage, litellm makes up its own count for the last chunk; the server's chunks,
        # which it keeps, show which it was. A count nobody reported is left to the meter to estimate (and say so)
        kept = getattr(stream, "chunks", None)
        if kept is not None and not any(getattr(chunk, "usage", None) for chunk in kept):
            response.usage = {}
        return response

    async def _drain(self, stream: Any, acc: _Accumulator) -> None:
        """Feed the stream to `acc` while content keeps coming. Keep-alives and empty chunks hold the connection
        (so the HTTP read timeout never fires) but are no progress: provider.timeout without content ends the
        call, and so does the whole-answer bound. The stream is closed in any case, so the server sees the
        client leave and stops generating."""
        limit = self.config.provider.timeout
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
                self._think.reasoning_delta(reasoning)
            if delta.content:
                self._think.feed(delta.content)
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

    def result(self) -> LLMResponse:
        self._think.flush()
        calls = [ToolCallRequest(c["id"] or f"call_{i}", c["name"], c["arguments"])
                 for i, c in sorted(self._calls.items())]
        return LLMResponse(self._think.text.strip(), calls, self._think.reasoning or None,
                           self.finish_reason, self.usage)


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
