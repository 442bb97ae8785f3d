"""Attached files reach the model through real turns: copied into the workspace, text put in the message,
the rest named by its workspace path, and every file that cannot go named with why."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from desktop.agent.attachments import INLINE_LIMIT
from desktop.core import Core, build_core
from desktop.kernel.bus import TurnFinished
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI, last_user_text
from tests.pdfs import pdf


def saved_user(core: Core, key: str) -> dict:
    lines = [json.loads(line) for line in core.sessions.path_for(key).read_text().splitlines()[1:]]
    return [m for m in lines if m.get("role") == "user"][-1]


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_a_text_file_from_outside_is_copied_in_and_read_by_the_model(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path) -> None:
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    csv = downloads / "sales 2026.csv"
    csv.write_text("month,total\njan,120\nfeb,95\n", encoding="utf-8")
    fake.add({"content": "Sales went down."})
    end = await chat.ask("what happened to sales?", media=[str(csv)])
    assert isinstance(end, TurnFinished) and end.content == "Sales went down."
    copy = core.workspace / "attachments" / "cli_test" / "sales_2026.csv"
    assert copy.read_bytes() == csv.read_bytes()
    said = last_user_text(fake.requests[-1])
    assert said.startswith("what happened to sales?\n\n[Attached file “sales 2026.csv”")
    assert "attachments/cli_test/sales_2026.csv" in said and "jan,120\nfeb,95" in said
    saved = saved_user(core, chat.key)
    assert saved["typed"] == "what happened to sales?" and saved["media"] == [str(copy)]
    assert saved["names"] == ["sales 2026.csv"]  # the chat names it as sent, also when it reads the chat again
    assert "jan,120" in saved["content"]  # the next turns still have the file's text

    fake.add({"content": "Feb was lower."})
    await chat.ask("which month was lower?")
    assert "jan,120" in json.dumps(fake.requests[-1]["messages"])


async def test_a_long_file_stays_in_the_workspace_where_the_file_tools_reach_it(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("".join(f"line {n}: all fine\n" for n in range(INLINE_LIMIT // 10)) + "THE ERROR\n")
    where = "attachments/cli_test/server.log"
    fake.add({"tool_calls": [{"name": "grep", "arguments": {"pattern": "ERROR", "path": where}}]},
             {"content": "Found it."})
    await chat.ask("find the error", media=[str(log)])
    said = last_user_text(fake.requests[0])
    assert f"in the workspace at {where}" in said and "too long to include" in said
    assert "all fine" not in said
    assert "THE ERROR" in tool_results(fake.requests[-1])[0]  # restricted to the workspace, and still readable


async def test_binary_missing_and_unreadable_files_are_named_with_why(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path) -> None:
    archive = tmp_path / "photos.zip"
    archive.write_bytes(b"PK\x03\x04\x00\x00binary")
    pipe = tmp_path / "feed.txt"
    os.mkfifo(pipe)  # would block a reader forever
    fake.add({"content": "ok"})
    await chat.ask("look", media=[str(archive), str(tmp_path / "gone.txt"), str(pipe)])
    said = last_user_text(fake.requests[-1])
    assert "“photos.zip”" in said and "It is not text" in said
    assert (core.workspace / "attachments" / "cli_test" / "photos.zip").read_bytes() == archive.read_bytes()
    assert "[Not attached: “gone.txt”: it was not found. Tell the user.]" in said
    assert "[Not attached: “feed.txt”: it is not a regular file. Tell the user.]" in said


async def test_the_same_file_again_is_not_copied_twice_and_another_of_that_name_gets_its_own(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "notes.txt", tmp_path / "b" / "notes.txt"
    for path, text in ((first, "first"), (second, "second")):
        path.parent.mkdir()
        path.write_text(text)
    for media in ([first], [first], [second]):
        fake.add({"content": "ok"})
        await chat.ask("here", media=[str(m) for m in media])
    folder = core.workspace / "attachments" / "cli_test"
    assert sorted(p.name for p in folder.iterdir()) == ["notes-2.txt", "notes.txt"]
    assert (folder / "notes-2.txt").read_text() == "second"
    assert "attachments/cli_test/notes-2.txt" in last_user_text(fake.requests[-1])


async def test_a_link_planted_in_the_workspace_never_carries_the_copy_out(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (core.workspace / "attachments").symlink_to(outside)  # as a sandboxed command could
    source = tmp_path / "todo.txt"
    source.write_text("buy milk")
    fake.add({"content": "ok"})
    await chat.ask("plan my day", media=[str(source)])
    assert list(outside.iterdir()) == []
    said = last_user_text(fake.requests[-1])
    assert "[Not attached: “todo.txt”:" in said and "buy milk" not in said


async def test_a_file_already_in_the_workspace_is_used_where_it_is(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    (core.workspace / "plan.md").write_text("# Plan\n- ship it")
    fake.add({"content": "ok"})
    await chat.ask("review", media=[str(core.workspace / "plan.md")])
    said = last_user_text(fake.requests[-1])
    assert "in the workspace at plan.md" in said and "- ship it" in said
    assert not (core.workspace / "attachments").exists()


async def test_the_persons_link_into_the_workspace_cannot_be_led_back_out(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_ed25519"
    secret.parent.mkdir(parents=True)
    secret.write_text("PRIVATE KEY")
    (core.workspace / "report.txt").symlink_to(secret)  # left by a sandboxed command
    shortcut = tmp_path / "home" / "report-shortcut.txt"
    shortcut.symlink_to(core.workspace / "report.txt")  # the person's own link, into the workspace
    plain = tmp_path / "home" / "mine.txt"
    plain.write_text("my notes")
    own_link = tmp_path / "home" / "notes-link.txt"
    own_link.symlink_to(plain)  # a link that stays outside is the person's choice: followed
    fake.add({"content": "ok"})
    await chat.ask("read these", media=[str(shortcut), str(own_link)])
    said = last_user_text(fake.requests[-1])
    assert "PRIVATE KEY" not in said and "[Not attached: “report-shortcut.txt”:" in said
    assert "my notes" in said
    copies = core.workspace / "attachments" / "cli_test"
    assert [p.read_text() for p in copies.iterdir()] == ["my notes"]


async def test_a_pdfs_text_reaches_the_model_with_its_page_count(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path) -> None:
    report = tmp_path / "Q3 report.pdf"
    report.write_bytes(pdf(["Revenue rose 12 percent.", None, "Costs (mostly travel) fell."]))
    fake.add({"content": "Revenue rose."})
    await chat.ask("summarise this", media=[str(report)])
    said = last_user_text(fake.requests[-1])
    assert said.startswith("summarise this\n\n[Attached PDF “Q3 report.pdf” (")
    assert ", 3 pages), in the workspace at attachments/cli_test/Q3_report.pdf." in said
    assert "[Page 1]\nRevenue rose 12 percent.\n\n[Page 3]\nCosts (mostly travel) fell.\n[End of Q3 report.pdf]" in said
    assert (core.workspace / "attachments" / "cli_test" / "Q3_report.pdf").read_bytes() == report.read_bytes()


async def test_a_pdf_whose_font_maps_to_lone_surrogates_is_read_mended_and_the_chat_goes_on(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path) -> None:
    """A PDF's font says which characters its codes stand for, in UTF-16 code units; pypdf passes lone halves on,
    which once kept the message from being saved or sent."""
    letter = tmp_path / "letter.pdf"
    letter.write_bytes(pdf(["lone H, low L, reversed SH, whole HS"], {"H": "D83D", "L": "DCFF", "S": "DE00"}))
    fake.add({"content": "Read it."}, {"content": "Still here."})
    end = await chat.ask("what does it say?", media=[str(letter)])
    assert isinstance(end, TurnFinished) and end.content == "Read it."
    shown = "[Page 1]\nlone \ufffd, low \ufffd, reversed \ufffd\ufffd, whole \U0001f600\n[End of letter.pdf]"
    assert shown in last_user_text(fake.requests[-1])
    assert shown in saved_user(core, chat.key)["content"]
    end = await chat.ask("and now?")
    assert isinstance(end, TurnFinished) and end.content == "Still here."


async def test_a_long_pdf_is_read_from_its_text_file_and_a_scan_or_a_broken_one_is_named(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path) -> None:
    book = tmp_path / "manual.pdf"
    book.write_bytes(pdf([f"Page {n} says: {'word ' * 150}" for n in range(1, 120)] + ["THE ANSWER is 42"]))
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(pdf([None, None]))
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(pdf(["whatever"])[:60])
    where = "attachments/cli_test/manual.pdf.txt"
    fake.add({"tool_calls": [{"name": "grep", "arguments": {"pattern": "ANSWER", "path": where}}]},
             {"content": "It is 42."})
    await chat.ask("what is the answer?", media=[str(book), str(scan), str(broken)])
    said = last_user_text(fake.requests[0])
    assert f"120 pages), in the workspace at attachments/cli_test/manual.pdf. Its text is too long to include " \
           f"here; it was extracted to {where}" in said and "word word" not in said
    assert "THE ANSWER is 42" in tool_results(fake.requests[-1])[0]  # the file tools read the extracted text
    assert "“scan.pdf” (" in said and "2 pages), in the workspace at attachments/cli_test/scan.pdf. It has no " \
           "text to extract (a scan, or pictures only)" in said
    assert "“broken.pdf” (60 bytes), in the workspace at attachments/cli_test/broken.pdf. Its text could not be " \
           "read: it is damaged or not a PDF pypdf can read. Tell the user.]" in said


async def test_a_file_sent_while_a_turn_runs_reaches_the_model_and_stays_in_the_chat(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path) -> None:
    """A message with a file, sent while a turn of its chat ran, joined that turn as its text alone: the model
    never read the file, and after a restart the person's attachment was gone from the chat. Now it joins with its
    file, as a message that starts a turn does."""
    csv = tmp_path / "sales.csv"
    csv.write_text("month,total\njan,120\nfeb,95\n", encoding="utf-8")
    held = threading.Event()
    try:
        fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "after": held},
                 {"content": "Read both."})
        await chat.send("look at my folder")
        for _ in range(500):
            if fake.requests:
                break
            await asyncio.sleep(0.02)
        await chat.send("and this file", media=[str(csv)])
        await asyncio.sleep(0.2)
    finally:
        held.set()
    end = await chat.wait_end()
    assert isinstance(end, TurnFinished) and end.content == "Read both."
    assert len(fake.requests) == 2  # the file joined the running turn: no turn of its own
    said = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "user"][-1]
    assert said.startswith("and this file\n\n[Attached file “sales.csv”") and "jan,120" in said
    copy = core.workspace / "attachments" / "cli_test" / "sales.csv"
    saved = saved_user(build_core(), chat.key)  # the app started again
    assert saved["typed"] == "and this file" and saved["media"] == [str(copy)]


ATTACH_READS = """
import sys
from pathlib import Path
from desktop.agent.attachments import prepare
def read_so_far():
    with open("/proc/self/io") as io:
        return int(next(line for line in io if line.startswith("rchar:")).split()[1])
before = read_so_far()
attached = prepare("here", [sys.argv[1]], Path(sys.argv[2]), "cli:test")
print(read_so_far() - before)
print(attached.media[0])
"""


def test_a_file_attached_beside_many_of_its_size_and_name_is_not_compared_with_each(tmp_path: Path) -> None:
    """A file attached again is found among the chat's attachments of its name and used, not copied once more.
    Each taken name of that size was read whole to compare: a sandboxed command leaving 999 of them (report-2.csv
    to report-999.csv, 50 MB each) made one attachment read 50 GB in the app. Here 200 of 128 KB stand in."""
    size = 128 * 1024
    folder = tmp_path / "ws" / "attachments" / "cli_test"
    folder.mkdir(parents=True)
    for number in range(1, 201):
        name = "notes.txt" if number == 1 else f"notes-{number}.txt"
        (folder / name).write_bytes(f"{number:08}".encode().ljust(size, b"x"))
    source = tmp_path / "notes.txt"
    source.write_bytes(b"the person's own".ljust(size, b"y"))
    reads, where = subprocess.check_output([sys.executable, "-c", ATTACH_READS, str(source), str(tmp_path / "ws")],
                                           text=True, timeout=60).split()
    assert Path(where).read_bytes() == source.read_bytes() and Path(where).parent == folder  # attached all the same
    assert int(reads) < 20 * size, f"{int(reads) / 2**20:.1f} MB read"
