"""A chat session as a Markdown document (the memory window's "Export as Markdown")."""

from __future__ import annotations

from typing import Any

from desktop.session.session import Session, now_iso

_SPEAKERS = {"user": "You", "assistant": "Nanobot"}
TOOL_PREVIEW = 300


def session_markdown(session: Session) -> str:
    lines = [f"# {session.title}", "", f"*{session.key} · exported {now_iso()[:16].replace('T', ' ')}*", ""]
    for message in session.messages:
        block = _message_block(message)
        if block:
            lines += [block, ""]
    return "\n".join(lines).rstrip() + "\n"


def _message_block(message: dict[str, Any]) -> str:
    role = message.get("role")
    stamp = str(message.get("timestamp", ""))[:16].replace("T", " ")
    text = _text(message.get("content"))
    if role == "tool":
        preview = text if len(text) <= TOOL_PREVIEW else text[:TOOL_PREVIEW] + " …"
        quoted = "\n".join(f"> {line}" for line in preview.splitlines() or [""])
        return f"> **Tool `{message.get('name', '?')}`**\n{quoted}"
    if role not in _SPEAKERS:
        return ""
    calls = [c.get("function", {}).get("name", "?") for c in message.get("tool_calls") or []]
    if calls:
        text = f"{text}\n\n*Used {', '.join(f'`{c}`' for c in calls)}*".strip()
    if not text:
        return ""
    heading = f"**{_SPEAKERS[role]}**" + (f" · {stamp}" if stamp else "")
    return f"{heading}\n\n{text}"


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "[image]")) for p in content if isinstance(p, dict)).strip()
    return str(content or "").strip()
