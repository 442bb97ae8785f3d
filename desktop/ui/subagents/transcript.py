"""A background task's transcript, read-only and readable: its JSONL file (one message a line) as the task, what
the assistant said, the tools it ran with their results, and how it ended."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QPlainTextEdit, QVBoxLayout, QWidget

RESULT_CHARS = 4000  # a tool's output beyond this is cut here (the file has all of it)


class TranscriptDialog(QDialog):
    def __init__(self, label: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Background task: {label}")
        self.resize(720, 560)
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlaceholderText("Reading…")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text)

    async def load(self, path: Path) -> None:
        """Read the file off the GUI thread; a missing file says so instead of showing nothing."""
        try:
            raw = await asyncio.to_thread(path.read_text, encoding="utf-8", errors="replace")
        except OSError as exc:
            self.text.setPlainText(f"The transcript could not be read: {exc.strerror or exc}\n{path}")
            return
        self.text.setPlainText(readable(raw))


def readable(raw: str) -> str:
    """Plain text for a person; lines that are not JSON (a write cut short) are skipped."""
    parts: list[str] = []
    said = ""  # the assistant's last words: the report, which the end record repeats
    for line in raw.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        if record.get("_type") == "end" and record.get("result") == said:
            parts.append(f"── Ended: {record.get('status', '?')}")
            continue
        if record.get("role") == "assistant":
            said = _text(record.get("content"))
        parts.extend(_record(record))
    return "\n\n".join(parts)


def _record(record: dict[str, Any]) -> list[str]:
    kind, role = record.get("_type"), record.get("role")
    if kind == "task":
        return [f"Task “{record.get('label', '')}”\n{record.get('task', '')}"]
    if kind == "end":
        return [f"── Ended: {record.get('status', '?')}\n{record.get('result', '')}"]
    if role == "assistant":
        said = [f"── Assistant\n{_text(record.get('content'))}"] if _text(record.get("content")).strip() else []
        for call in record.get("tool_calls") or []:
            function = call.get("function") or {}
            said.append(f"── Runs {function.get('name', '?')}\n{_arguments(function.get('arguments'))}")
        return said
    if role == "tool":
        result = _text(record.get("content"))
        cut = f"\n… ({len(result) - RESULT_CHARS} more characters in the file)" if len(result) > RESULT_CHARS else ""
        return [f"── Result of {record.get('name', 'the tool')}\n{result[:RESULT_CHARS]}{cut}"]
    return []  # the system prompt and the task as the model got it: the task line above says it


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _arguments(raw: Any) -> str:
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return str(raw)
    return json.dumps(value, indent=2, ensure_ascii=False)
