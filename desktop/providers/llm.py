"""Chat completions as the agent asks for them: the retry policy, the key for each call and the meter, in the
app; the call itself (litellm, streaming) in the model helper (desktop/providers/streaming.py, reached through
desktop/providers/helper.py)."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from desktop.config import Config
from desktop.kernel import secrets
from desktop.providers.failures import FailureKind
from desktop.providers.helper import EventSink, HelperFailed, HelperGone, ask, model_helper, warm
from desktop.providers.model_thread import run_on_model_thread, to_caller

log = logging.getLogger(__name__)

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


class LLMProvider:
    def __init__(self, config: Config, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.config = config
        self._sleep = sleep
        self._refused_without_key: set[str] = set()  # api_base servers that answered 401 to no key
        self._needs: dict[str, dict[str, Any]] = {}  # model -> its provider and the variables its key may be in
        self.meter: Meter | None = None  # the one place every call passes (a feature sets it)

    async def key_needs(self, model: str) -> dict[str, Any]:
        """{"provider": litellm's name for the model's provider, "missing": the environment variables that would
        hold its key and are unset}; asked of the helper once per model."""
        found = self._needs.get(model)
        if found is None:
            found = self._needs[model] = await ask("key_needs", model=model)
        return found

    async def key_for(self, model: str, base: str | None) -> str | None:
        """The key to send for `model` at `base` (None: the provider's own servers). The OS keyring is asked
        only when a key is really needed: not when the provider's environment variable is set or the provider
        takes none, and for a server at `base` (usually local, keyless) only once it refused a request without
        one (`refused_without_key`). Blocking: call it on the model thread."""
        needs = await self.key_needs(model)
        provider, missing = needs["provider"], needs["missing"]
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

    def prepare(self) -> None:
        """Start the model helper ahead of a call (it loads litellm, seconds): a turn that first waits for
        something else (MCP servers connecting), or a person still typing, loads it meanwhile."""
        warm(self.config.provider.model_idle_exit)

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
            shown = _Shown(on_text, on_reasoning)
            try:
                outcome = await run_on_model_thread(self._try(model, messages, tools, max_tokens, allow_empty,
                                                              to_caller(shown.take, live)))
            except asyncio.CancelledError:
                live.clear()  # pieces still in flight must not reach a stopped turn
                raise
            except HelperGone as exc:
                outcome = {"failure": shown.lost(str(exc))}
            except HelperFailed as exc:
                raise ProviderError(f"The model helper failed: {exc}") from exc
            if "response" in outcome:
                response = _response(outcome["response"])
                if self.meter is not None:
                    await self.meter.count(model, messages, response)
                return response
            failure = outcome["failure"]
            if failure["emitted"] or attempt >= len(delays) or not failure["retryable"]:
                raise _error(failure)
            wait = max(delays[attempt], failure["retry_after"])
            attempt += 1
            # not a warning: a retry is routine, and callers show it their way (on_retry); the log keeps why
            log.info("model call failed (%s); retry %d in %.1fs", failure["describe"], attempt, wait)
            if on_retry is not None:
                on_retry(attempt + 1, len(delays) + 1, wait)
            await self._sleep(wait)

    async def _try(self, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                   max_tokens: int | None, allow_empty: bool, sink: EventSink | None,
                   ) -> dict[str, Any]:
        """One try in the helper, on the model thread (`call_keyed`)."""
        request: dict[str, Any] = {
            "model": model, "messages": messages, "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": self.config.temperature,
            "max_tokens": max_tokens or self.config.max_tokens,
            "timeout": self.config.provider.timeout,
            "num_retries": 0, "max_retries": 0,
        }
        if tools:
            request["tools"] = tools
        if self.config.api_base:
            request["api_base"] = self.config.api_base
        return await self.call_keyed("chat", request, sink, allow_empty=allow_empty)

    async def call_keyed(self, op: str, request: dict[str, Any], sink: EventSink | None = None,
                         **extra: Any) -> dict[str, Any]:
        """The helper's `op` (a chat try, a speech call) with litellm's arguments `request` and the key they need,
        on the model thread (the keyring may be asked). A server at the request's `api_base` that refused it
        without a key, before anything streamed, is asked once more at once with the stored one."""
        model, base = request["model"], request.get("api_base")
        model_helper().idle_exit = self.config.provider.model_idle_exit
        key = await self.key_for(model, base)
        outcome: dict[str, Any] = await ask(op, sink, request=_keyed(request, key), **extra)
        failure = outcome.get("failure")
        if failure and failure["auth"] and not failure.get("emitted") and key == NO_KEY and base:
            self.refused_without_key(base)  # a local server that wants a key: the stored one, if any
            key = await self.key_for(model, base)
            if key != NO_KEY:
                outcome = await ask(op, sink, request=_keyed(request, key), **extra)
        return outcome


class _Shown:
    """What of one try reached the person: the pieces go on to the callers, the text is kept in case the helper
    dies mid-answer (then it is all the app has)."""

    def __init__(self, on_text: DeltaSink | None, on_reasoning: DeltaSink | None) -> None:
        self._on_text, self._on_reasoning = on_text, on_reasoning
        self.text = ""
        self.any = False

    def take(self, event: dict[str, Any]) -> None:
        self.any = True
        if "text" in event:
            self.text += event["text"]
            if self._on_text is not None:
                self._on_text(event["text"])
        elif self._on_reasoning is not None:
            self._on_reasoning(event["reasoning"])

    def lost(self, why: str) -> dict[str, Any]:
        """The failure of a try whose helper went away: retried like a dropped connection if nothing was shown."""
        return {"message": f"{why} The answer was lost; try again.", "kind": FailureKind.OTHER.value,
                "emitted": self.any, "partial": self.text if self.any else None, "retryable": True,
                "retry_after": 0.0, "describe": why, "auth": False}


def _keyed(request: dict[str, Any], key: str | None) -> dict[str, Any]:
    return {**request, "api_key": key} if key else request


def _response(found: dict[str, Any]) -> LLMResponse:
    calls = [ToolCallRequest(c["id"], c["name"], c["arguments"]) for c in found["tool_calls"]]
    return LLMResponse(found["content"], calls, found["reasoning"], found["finish_reason"], found["usage"])


def _error(failure: dict[str, Any]) -> ProviderError:
    """The error the user sees for a call that will not be tried again."""
    if failure["partial"] is not None:
        return IncompleteAnswer(failure["message"], failure["partial"])
    kind = FailureKind(failure["kind"])
    return (StreamBroken if failure["emitted"] else ProviderError)(failure["message"], kind)
