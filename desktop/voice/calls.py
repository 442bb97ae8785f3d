"""The speech calls themselves, in the model helper (desktop/providers/helper_main.py names them): litellm's
`speech` and `transcription`, and a failure in plain words that carry the server's own reason: a speech server's
refusals ("audio too short", "input too long") are the person's only clue. The key, and whether to try again with
the stored one, stay in the app (desktop/voice/server.py)."""

from __future__ import annotations

import base64
import re
from typing import Any

from desktop.providers.failures import server_root
from desktop.providers.helper import EventSink
from desktop.providers.litellm_env import litellm
from desktop.providers.lookups import provider_name


async def speech(_emit: EventSink, *, request: dict[str, Any]) -> dict[str, Any]:
    """{"sound": base64 of what the server answered} or {"failure": ...} (see `_failure`)."""
    try:
        response = await litellm().aspeech(**request)
    except Exception as exc:
        return {"failure": _failure(exc, request, "the text", "The answer could not be turned into speech")}
    return {"sound": base64.b64encode(bytes(response.content)).decode()}


async def transcription(_emit: EventSink, *, request: dict[str, Any], wav: str,
                        file_name: str) -> dict[str, Any]:
    """{"text", "usage"} of the recording (`wav`, base64) or {"failure": ...}. `usage` as the server reported
    it: tokens (gpt-4o-transcribe), the sound's seconds (whisper), or nothing."""
    try:
        response = await litellm().atranscription(**request, file=(file_name, base64.b64decode(wav), "audio/wav"))
    except Exception as exc:
        return {"failure": _failure(exc, request, "the recording", "The recording could not be transcribed")}
    usage = getattr(response, "usage", None)
    kind = getattr(usage, "type", None)
    seconds = getattr(usage, "seconds", None) if kind == "duration" else None
    return {"text": str(getattr(response, "text", "") or "").strip(),
            "usage": {"input_tokens": getattr(usage, "input_tokens", None) if kind == "tokens" else None,
                      "output_tokens": getattr(usage, "output_tokens", None) if kind == "tokens" else None,
                      "seconds": float(seconds) if isinstance(seconds, (int, float)) else None}}


def _failure(exc: BaseException, request: dict[str, Any], sent: str, undone: str) -> dict[str, Any]:
    """What the person reads when the speech service did not do its part (`message`, `fix_in_settings`), and
    whether it refused the key (`auth`: the app may have a stored one to try). `sent` names what it was sent
    ("the recording"), `undone` what did not happen ("The recording could not be transcribed")."""
    lm = litellm()
    model, base, timeout = request["model"], request.get("api_base", ""), float(request["timeout"])
    place = where(model, base)
    Place = place[0].upper() + place[1:]
    status = getattr(exc, "status_code", None)
    reason = server_reason(exc)
    found = {"auth": isinstance(exc, lm.AuthenticationError), "fix_in_settings": True}
    if isinstance(exc, (lm.Timeout, TimeoutError)):
        return {**found, "message": f"No answer from {place} within {timeout:g} s.", "fix_in_settings": bool(base)}
    if isinstance(exc, (lm.APIConnectionError, ConnectionError)):
        if base:
            return {**found, "message": f"Can't reach the speech server at {server_root(base)} — is it running? "
                                        f"({reason})"}
        return {**found, "message": f"Can't reach {place}. Check the internet connection. ({reason})",
                "fix_in_settings": False}
    if status in (401, 403):
        name = provider_name(model)
        return {**found, "message": f"{Place} refused the API key (HTTP {status}): {reason}. Check the {name} key "
                                    f"(nanobot-tray keys set {name})."}
    if status == 404:
        return {**found, "message": f"{Place} does not know the speech model '{model}' (HTTP 404): {reason}."}
    if isinstance(status, int):
        return {**found, "message": f"{Place} refused {sent} (HTTP {status}): {reason}.", "fix_in_settings": False}
    return {**found, "message": f"{undone}: {type(exc).__name__}: {reason}.", "fix_in_settings": False}


def server_reason(exc: BaseException) -> str:
    """The server's own words: the error body's message, else litellm's text without its prefixes."""
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else body if isinstance(body, str) else None
    if not message:
        message = str(getattr(exc, "message", "") or exc)
        message = re.sub(r"^(litellm\.\w+:\s*)?(\w+Error:\s*)?(\w*Exception\s*-\s*)?", "", message)
    message = re.sub(r"\s+", " ", str(message)).strip().rstrip(".")
    message = re.sub(r"(sk|key|gsk)[-_][A-Za-z0-9_\-]{8,}", "[redacted]", message)
    return message[:300] or "no reason given"


def where(model: str, base: str) -> str:
    if base:
        return f"the speech server at {server_root(base)}"
    return f"{provider_name(model)}'s speech service"
