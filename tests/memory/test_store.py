"""history.jsonl and the Dream cursor: append-only, increasing cursors, tolerant of a torn last line."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from desktop.memory.store import MemoryStore, format_messages


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_cursors_increase_across_restarts_and_skip_a_torn_line(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    assert [store.append_history("desktop:a", f"entry {i}").cursor for i in range(3)] == [1, 2, 3]
    with open(store.history_file, "a", encoding="utf-8") as fh:
        fh.write('{"cursor": 4, "timestamp": "2026-01-01", "content": "half wri')  # crash mid-write
    reopened = MemoryStore(tmp_path)
    assert [e.content for e in reopened.read_history()] == ["entry 0", "entry 1", "entry 2"]
    entry = reopened.append_history("desktop:b", "after the crash")
    assert entry.cursor == 4
    assert json.loads(lines(store.history_file)[-1])["content"] == "after the crash"  # not glued to the torn line
    assert [e.cursor for e in reopened.read_history(since=2)] == [3, 4]
    record = json.loads(lines(store.history_file)[-1])
    assert set(record) == {"cursor", "timestamp", "session_key", "content"}
    assert record["session_key"] == "desktop:b"


def test_concurrent_appends_get_unique_cursors(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    threads = [threading.Thread(target=lambda n=n: [store.append_history(f"s:{n}", "x") for _ in range(50)])
               for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    cursors = [e.cursor for e in store.read_history()]
    assert cursors == list(range(1, 201))


def test_compaction_keeps_the_last_thousand_and_everything_unprocessed(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    for i in range(1500):
        store.append_history("s:1", f"entry {i}")
    store.set_dream_cursor(200)  # entries 201.. are unprocessed: nothing may go
    assert store.compact_history() == 200
    assert store.read_history()[0].cursor == 201
    store.set_dream_cursor(1400)
    assert store.compact_history() == 300
    kept = store.read_history()
    assert len(kept) == 1000 and kept[0].cursor == 501 and kept[-1].cursor == 1500
    assert store.append_history("s:1", "next").cursor == 1501  # cursors keep increasing after compaction


def test_cursor_stays_above_the_dream_cursor_when_history_was_removed(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.set_dream_cursor(41)
    assert store.append_history("s:1", "new").cursor == 42
    assert store.has_unprocessed()
    store.set_dream_cursor(42)
    assert not store.has_unprocessed()


def test_format_messages_names_roles_tools_and_calls() -> None:
    text = format_messages([
        {"role": "user", "content": "list files", "timestamp": "2026-05-01T10:00:00+02:00"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "list_dir", "arguments": '{"path": "."}'}}]},
        {"role": "tool", "name": "list_dir", "tool_call_id": "1", "content": "a.txt"},
    ])
    assert text.splitlines() == ["[2026-05-01 10:00] USER: list files",
                                 'ASSISTANT: [calls list_dir({"path": "."})]',
                                 "TOOL list_dir: a.txt"]


def test_compaction_keeps_lines_it_cannot_read_byte_for_byte(tmp_path: Path) -> None:
    """Compacting after a Dream wrote back only the entries it could read: a line broken by hand or by a disk
    fault, which no Dream had read either, was gone for good."""
    store = MemoryStore(tmp_path)
    for i in range(3):
        store.append_history("s:1", f"entry {i}")
    damaged = [b'{"cursor": 9, "content": "notes about the \xff\xfe trip', b'{"cursor": "four", "content": "kept?"}']
    with open(store.history_file, "ab") as fh:
        fh.write(b"".join(line + b"\n" for line in damaged))
    for i in range(3, 6):
        store.append_history("s:1", f"entry {i}")
    store.set_dream_cursor(6)
    assert store.compact_history(keep=2) == 4
    assert [e.content for e in store.read_history()] == ["entry 4", "entry 5"]
    assert store.history_file.read_bytes().splitlines()[:2] == damaged
