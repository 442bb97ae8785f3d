"""Branches on disk (desktop/session/branches.py, SessionStore.branch): a branch's file holds only its own
messages and reads the start it shares from its parent's file; it keeps its whole history through a restart,
through the parent being deleted, retried or moved by /new, and the parent never changes because of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from desktop.chats.archive import write_archive
from desktop.chats.export import export
from desktop.session.search import scan
from desktop.session.session import Session, SessionStore


def said(session: Session) -> list[str]:
    return [str(m.get("content")) for m in session.messages]


def lines(store: SessionStore, key: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in store.path_for(key).read_text(encoding="utf-8").splitlines()]


async def a_chat(store: SessionStore, key: str = "desktop:parent") -> Session:
    session = await store.load(key)
    session.metadata["title"] = "Trip planning"
    await store.append(session, {"role": "user", "content": "one"}, {"role": "assistant", "content": "answer one"},
                       {"role": "user", "content": "two"}, {"role": "assistant", "content": "answer two"})
    return session


async def test_a_branch_reads_its_start_from_the_parent_and_stores_it_once(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    parent = await a_chat(store)
    parent_file = store.path_for(parent.key).read_bytes()
    branch = await store.branch(parent.key, 2, "desktop:branch")
    await store.append(branch, {"role": "user", "content": "three"}, {"role": "assistant", "content": "answer 3"})

    assert said(branch) == ["one", "answer one", "three", "answer 3"]
    own = lines(store, "desktop:branch")
    assert [r.get("content") for r in own[1:]] == ["three", "answer 3"]  # the shared start is not copied
    assert own[0]["branch_of"] == parent.key and own[0]["shared"] == 2
    assert store.path_for(parent.key).read_bytes() == parent_file  # the original stays untouched
    assert said(parent) == ["one", "answer one", "two", "answer two"]

    restarted = SessionStore(tmp_path)
    again = await restarted.load("desktop:branch")
    assert said(again) == ["one", "answer one", "three", "answer 3"]
    assert [m["content"] for m in again.history()] == ["one", "answer one", "three", "answer 3"]
    infos = {i.key: i for i in await restarted.list()}
    assert infos["desktop:branch"].branch_of == parent.key and infos["desktop:branch"].message_count == 4
    assert infos[parent.key].branch_of == ""


async def test_deleting_the_parent_leaves_the_branch_its_whole_history(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    parent = await a_chat(store)
    branch = await store.branch(parent.key, 4, "desktop:branch")
    await store.append(branch, {"role": "user", "content": "three"})
    loaded_elsewhere = await store.branch("desktop:branch", 5, "desktop:grandchild")  # a branch of the branch

    fresh = SessionStore(tmp_path)  # nothing loaded: the branches are materialised from their files
    await fresh.delete(parent.key)
    assert not fresh.path_for(parent.key).exists()
    assert "branch_of" not in lines(fresh, "desktop:branch")[0]
    assert said(await SessionStore(tmp_path).load("desktop:branch")) == [
        "one", "answer one", "two", "answer two", "three"]
    assert lines(fresh, "desktop:grandchild")[0]["branch_of"] == "desktop:branch"  # its parent still has it all
    assert said(await SessionStore(tmp_path).load(loaded_elsewhere.key)) == said(loaded_elsewhere)

    await store.delete("desktop:branch")  # the live store: the grandchild, loaded there, keeps all too
    await store.append(loaded_elsewhere, {"role": "assistant", "content": "answer 3"})
    assert said(await SessionStore(tmp_path).load(loaded_elsewhere.key)) == [
        "one", "answer one", "two", "answer two", "three", "answer 3"]


async def test_a_retry_in_the_parent_does_not_change_the_branch(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    parent = await a_chat(store)
    await store.branch(parent.key, 4, "desktop:branch")
    early = await store.branch(parent.key, 2, "desktop:early")  # shares only the first turn
    early_file = store.path_for(early.key).read_bytes()
    await store.drop_last_turn(parent)  # Regenerate in the parent: "two" and its answer go there
    await store.append(parent, {"role": "user", "content": "two, again"})

    restarted = SessionStore(tmp_path)
    assert said(await restarted.load("desktop:branch")) == ["one", "answer one", "two", "answer two"]
    assert store.path_for(early.key).read_bytes() == early_file  # what it shares did not change: still a link
    assert said(await restarted.load(early.key)) == ["one", "answer one"]


async def test_a_retry_in_the_branch_reaching_into_the_shared_part_keeps_the_parent(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    parent = await a_chat(store)
    branch = await store.branch(parent.key, 4, "desktop:branch")
    await store.drop_last_turn(branch)  # the last turn is one it shares: the branch now keeps its own history
    await store.append(branch, {"role": "user", "content": "two, put differently"})
    assert said(await SessionStore(tmp_path).load(branch.key)) == ["one", "answer one", "two, put differently"]
    assert said(await SessionStore(tmp_path).load(parent.key)) == ["one", "answer one", "two", "answer two"]


async def test_new_in_the_parent_moves_it_and_the_branch_follows(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    parent = await a_chat(store)
    await store.branch(parent.key, 2, "desktop:branch")
    await store.set_aside(parent)  # /new: the conversation moves to another key
    restarted = SessionStore(tmp_path)
    assert said(await restarted.load("desktop:branch")) == ["one", "answer one"]
    assert (await restarted.list())[0].key in ("desktop:branch", parent.key)
    assert {i.key: i.branch_of for i in await restarted.list()}["desktop:branch"] == parent.key


async def test_a_branch_ends_after_the_results_of_the_step_it_stops_at(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = await store.load("desktop:tools")
    call = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    await store.append(session, {"role": "user", "content": "read it"},
                       {"role": "assistant", "content": "Reading.", "tool_calls": [call]},
                       {"role": "tool", "tool_call_id": "c1", "content": "text"},
                       {"role": "assistant", "content": "It says text."})
    branch = await store.branch(session.key, 2, "desktop:branch")
    assert [m["role"] for m in branch.messages] == ["user", "assistant", "tool"]


async def test_export_archive_and_search_see_a_branch_whole(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    store.directory.mkdir()
    parent = await a_chat(store)
    branch = await store.branch(parent.key, 2, "desktop:branch")
    await store.append(branch, {"role": "user", "content": "a zebra question"})
    fresh = SessionStore(store.directory)

    text = export("Branch", (await fresh.snapshot(branch.key)).messages, "md", tmp_path)
    assert "answer one" in text and "a zebra question" in text and "answer two" not in text
    archive = tmp_path / "all.zip"
    assert await write_archive(fresh, await fresh.list(), tmp_path, archive) == 2

    hit = next(h for h in scan(store.directory, "zebra") if h.key == branch.key)
    assert hit.message == 2  # its place in the whole history, where the chat window scrolls to
