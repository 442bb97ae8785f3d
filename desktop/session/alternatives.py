"""Regenerated answers kept as alternatives: when a question is asked again in its place (Regenerate), the answer
it replaces (its assistant messages and tool steps) is kept on the chat's metadata line, under the question's
position, so the person can flip back to it and it survives a restart. Only the answer shown is in the chat's
messages, so only that one is ever sent to the model. Plain functions on metadata and messages; `choose` saves
through the store's `rewrite`, which keeps the branches sharing the old answer whole."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    from desktop.session.session import Session, SessionStore

KEY = "alternatives"  # {"<question's index>": {"question": typed text, "others": [answer, ...], "shown": int}}

Answer = list[dict[str, Any]]


def keep(metadata: dict[str, Any], dropped: Answer, at: int, asked: str | None) -> None:
    """The turn `dropped` (its question first, at message `at`) is being replaced by the question `asked`
    (None: not known). The same question asked again keeps the answer it had, if the person saw one; another
    question (an Edit) starts without alternatives. Turns after `at` are gone, and so are theirs."""
    table = {k: v for k, v in _table(metadata).items() if _index(k) < at}
    entry = _table(metadata).get(str(at))
    question = _asked(dropped[0]) if dropped else None
    if asked is not None and question == asked:
        others: list[Answer] = []
        if _valid(entry) and entry["question"] == asked:
            others = list(entry["others"])
        shown = min(int(entry["shown"]), len(others)) if others and _valid(entry) else 0
        if any(_seen(m) for m in dropped[1:]):
            others.insert(shown, dropped[1:])
        if others:
            table[str(at)] = {"question": asked, "others": others, "shown": len(others)}  # the new answer is last
    if table:
        metadata[KEY] = table
    else:
        metadata.pop(KEY, None)


def of(session: Session) -> tuple[int, int] | None:
    """(which answer is shown, how many there are) for the chat's last question, when it has alternatives and its
    answer is there; None otherwise (earlier questions keep theirs, but only the last answer flips)."""
    found = _last(session)
    if found is None:
        return None
    _at, entry = found
    return int(entry["shown"]), len(entry["others"]) + 1


async def choose(store: SessionStore, session: Session, index: int) -> bool:
    """Show answer `index` of the last question: it becomes the chat's history (what the next request carries)
    and the one shown until now joins the alternatives. False when there is no such answer. Raises OSError when
    the chat cannot be saved; it stays as it was."""
    found = _last(session)
    if found is None or not 0 <= index <= len(found[1]["others"]):
        return False
    at, entry = found
    before_messages, before_meta = list(session.messages), copy.deepcopy(session.metadata)
    answers = list(entry["others"])
    answers.insert(int(entry["shown"]), session.messages[at + 1:])
    chosen = answers.pop(index)
    session.messages[at + 1:] = chosen
    _table(session.metadata)[str(at)] = {**entry, "others": answers, "shown": index}
    try:
        await store.rewrite(session)
    except OSError:
        session.messages[:] = before_messages
        session.metadata.clear()
        session.metadata.update(before_meta)
        raise
    return True


def _last(session: Session) -> tuple[int, dict[str, Any]] | None:
    messages = session.messages
    at = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    entry = _table(session.metadata).get(str(at))
    if at < 0 or at + 1 >= len(messages) or not _valid(entry) or entry["question"] != _asked(messages[at]):
        return None
    if not entry["others"] or int(entry["shown"]) > len(entry["others"]):
        return None
    return at, entry


def _table(metadata: dict[str, Any]) -> dict[str, Any]:
    table = metadata.get(KEY)
    return table if isinstance(table, dict) else {}


def _valid(entry: Any) -> TypeGuard[dict[str, Any]]:
    """An entry as `keep` writes it (the metadata line is a file a person or a crash may have changed)."""
    return (isinstance(entry, dict) and isinstance(entry.get("question"), str)
            and isinstance(entry.get("others"), list) and all(isinstance(a, list) for a in entry["others"])
            and isinstance(entry.get("shown"), int) and entry["shown"] >= 0)


def _index(key: str) -> int:
    return int(key) if key.isdigit() else -1


def _asked(question: dict[str, Any]) -> str:
    """What the person typed (`content` adds the text of attached files)."""
    return str(question.get("typed", question.get("content", "")))


def _seen(message: dict[str, Any]) -> bool:
    """An answer the person read (what came of a failed turn counts; a failure with nothing shown does not)."""
    if message.get("role") != "assistant":
        return False
    return bool(message.get("partial") if message.get("failed") else message.get("content"))
