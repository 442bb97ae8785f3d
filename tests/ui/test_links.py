"""Links clicked in the app's windows (desktop/ui/links.py, desktop/workspace/opening.py): an answer's links are the
model's words, which a web page, an MCP server or a workspace file can steer, and the desktop's opener runs
outside the sandbox. Clicked in the chat, in the quick prompt and in the memory window, web and mail links open,
and so does a file of the workspace that nothing could run; a launcher, a script, a program, a link out, a file
elsewhere and another program's handler (ssh:, vscode:, smb:) do not, and the click says why."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QToolTip

from desktop.memory import Memory
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.view import MessageView
from desktop.ui.memory.files_tab import MemoryFilesTab
from desktop.ui.quick_prompt import QuickPrompt
from tests.fakeserver import FakeOpenAI
from tests.pipes import watched_pipe
from tests.ui.conftest import Opener, hover_tip, open_chat, tip_words, until

TURN = 90  # seconds: the first model call imports litellm, slow on a loaded machine

OPENS = ["https://example.org/a", "mailto:sam@example.org", "notes.md", "file://{ws}/notes.md"]
REFUSED = {  # link: what the click says
    "file://{ws}/run.desktop": "a desktop launcher",
    "run.desktop": "a desktop launcher",
    "tool.sh": "a script",
    "file://{ws}/report.txt": "marked executable",
    "file://{ws}/elf.dat": "a program (by its first bytes)",
    "file://{ws}/linked.md": "a link",
    "file:///etc/hostname": "only files in",
    "../outside.md": "only files in",
    "file://{ws}/../outside.md": "only files in",
    "file://other-host/share/notes.md": "another computer",
    "ssh://host.example": "“ssh:”",
    "vscode://command/workbench.action.terminal.new": "“vscode:”",
    "smb://nas/share": "“smb:”",
    "javascript:alert(1)": "“javascript:”",
}


def _plant(workspace: Path) -> None:
    """What a sandboxed command could have left in the workspace."""
    (workspace / "notes.md").write_text("# Notes\n")
    (workspace / "run.desktop").write_text("[Desktop Entry]\nType=Application\nExec=sh -c 'touch /tmp/x'\n")
    (workspace / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (workspace / "report.txt").write_text("quarterly figures\n")
    (workspace / "report.txt").chmod(0o755)
    (workspace / "elf.dat").write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 64)
    (workspace / "linked.md").symlink_to(workspace / "notes.md")
    (workspace.parent / "outside.md").write_text("not the workspace's\n")


def _answer(workspace: Path) -> str:
    links = [*OPENS, *REFUSED]
    return "\n".join(f"- [link {i}]({link.replace('{ws}', str(workspace))})" for i, link in enumerate(links))


def _expected(workspace: Path) -> tuple[list[str], dict[str, str]]:
    opened = [link.replace("{ws}", str(workspace)) for link in OPENS]
    opened = [f"file://{workspace}/{link}" if ":" not in link else link for link in opened]
    return opened, {link.replace("{ws}", str(workspace)): said for link, said in REFUSED.items()}


def _link_points(view: MessageView) -> dict[str, QPoint]:
    """Where each link of the transcript is painted (viewport coordinates), found by asking the view's own layout."""
    found: dict[str, QPoint] = {}
    viewport = view.viewport()
    for y in range(2, viewport.height(), 4):
        for x in range(2, viewport.width(), 6):
            hit = view._hit(QPointF(x, y))
            if hit is not None:
                link = hit[1].link_at(hit[2])
                if link and link not in found:
                    found[link] = QPoint(x, y)
    return found


async def _clicked(qtbot, opener: Opener, link: str, click) -> str:  # type: ignore[no-untyped-def]
    """What a click on `link` did: the URL the opener got, or the tooltip saying why not (its words as read)."""
    QToolTip.hideText()
    await until(lambda: not QToolTip.isVisible(), message="the last click's tooltip gone")
    before = len(opener.opened)
    click()
    await until(lambda: len(opener.opened) > before or QToolTip.isVisible(), message=f"an answer to a click on {link}")
    return opener.opened[-1] if len(opener.opened) > before else tip_words()


async def _answered(bridge: CoreBridge, qtbot):  # type: ignore[no-untyped-def]
    """The chat window once the scripted model has answered a question, tall enough to show the answer whole."""
    window = await open_chat(bridge, qtbot, "desktop:test", [])
    qtbot.keyClicks(window.composer.input, "where are my files?")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await until(lambda: not window.models["desktop:test"].busy and len(window.models["desktop:test"].rows) == 2,
                timeout=TURN)
    window.resize(900, 1200)
    return window


def _markup_links(target: str) -> list[str]:
    """Link addresses that spell a picture of `target`, both ways Qt reads one."""
    return [f'<img src="{target}">', f"<IMG SRC='{target}'>"]


def _as_markdown(links: list[str]) -> str:
    """`links` in an answer, each written whole: in <...>, its own < and > escaped (CommonMark)."""
    escaped = (link.replace("<", "\\<").replace(">", "\\>") for link in links)
    return "\n\n".join(f"[link {i}](<{link}>)" for i, link in enumerate(escaped))


async def test_in_a_chat_web_mail_and_plain_workspace_files_open_and_nothing_that_could_run(
        bridge: CoreBridge, fake: FakeOpenAI, opener: Opener, qtbot) -> None:  # type: ignore[no-untyped-def]
    workspace = bridge.workspace
    _plant(workspace)
    fake.add({"content": _answer(workspace)})
    window = await _answered(bridge, qtbot)
    points = _link_points(window.view)
    opens, refused = _expected(workspace)
    assert set(points) == {*(link.replace("{ws}", str(workspace)) for link in OPENS), *refused}
    for link, point in points.items():
        said = await _clicked(qtbot, opener, link, lambda p=point: qtbot.mouseClick(
            window.view.viewport(), Qt.MouseButton.LeftButton, pos=p))
        if link in refused:
            assert said.startswith("Not opened: ") and refused[link] in said, (link, said)
        else:
            assert said in opens, (link, said)
    assert sorted(opener.opened) == sorted(opens)


async def test_a_links_address_that_spells_markup_shows_on_hover_as_words_and_loads_no_file(
        bridge: CoreBridge, fake: FakeOpenAI, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A link's address is the model's words, shown in a tooltip as the pointer rests on the link: an address
    spelling <img src="/a/pipe"> was read as markup, and Qt read the file it named as the tooltip was shown (a
    named pipe froze the app for good). The tooltip shows the address as it is."""
    pipe = tmp_path / "pipe"
    links = _markup_links(str(pipe))
    fake.add({"content": _as_markdown(links)})
    window = await _answered(bridge, qtbot)
    viewport = window.view.viewport()
    points = _link_points(window.view)
    assert set(points) == set(links)
    with watched_pipe(pipe) as opened:
        tips = {}
        for link, point in points.items():
            QApplication.sendEvent(viewport, QMouseEvent(
                QEvent.Type.MouseMove, QPointF(point), viewport.mapToGlobal(QPointF(point)), Qt.MouseButton.NoButton,
                Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))
            tips[link] = hover_tip(viewport, point)
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert tips == {link: link for link in links}
    assert opened == [], "the link's tooltip read the pipe its address named"


async def test_a_refused_link_to_folders_that_spell_markup_says_why_in_words_and_loads_no_file(
        bridge: CoreBridge, fake: FakeOpenAI, opener: Opener, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A link to a folder inside folders a sandboxed command made, nested to spell <img src="/a/pipe">, is not
    opened, and the tooltip saying why names them: read as markup, Qt read the file it named as the tooltip was
    shown (a named pipe froze the app for good). The tooltip says it in words."""
    pipe = tmp_path / "pipe"
    spelled = _markup_links(str(pipe))
    links = [f"{folders}/inside" for folders in spelled]
    for link in links:
        (bridge.workspace / link).mkdir(parents=True)
    fake.add({"content": _as_markdown(links)})
    window = await _answered(bridge, qtbot)
    points = _link_points(window.view)
    assert set(points) == set(links)
    with watched_pipe(pipe) as opened:
        said = [await _clicked(qtbot, opener, link, lambda p=points[link]: qtbot.mouseClick(
            window.view.viewport(), Qt.MouseButton.LeftButton, pos=p)) for link in links]
        QToolTip.hideText()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    for folders, why in zip(spelled, said, strict=True):
        assert why.startswith(f"Not opened: {folders}") and "is a folder" in why, why
    assert opener.opened == []
    assert opened == [], "the tooltip saying why read the pipe the link named"


async def test_the_quick_prompt_s_answer_and_the_memory_window_follow_the_same_rule(
        bridge: CoreBridge, opener: Opener, qtbot) -> None:  # type: ignore[no-untyped-def]
    workspace = bridge.workspace
    _plant(workspace)
    quick = QuickPrompt(bridge)
    memory = MemoryFilesTab(bridge.core.get(Memory), bridge)
    for widget in (quick, memory):
        qtbot.addWidget(widget)
    for browser in (quick.answer, memory.view):
        for link, expected in (("https://example.org/a", "https://example.org/a"),
                               ("tool.sh", "Not opened: it is a script"),
                               ("vscode://command/x", "Not opened: links “vscode:”")):
            said = await _clicked(qtbot, opener, link, lambda b=browser, u=link: b.anchorClicked.emit(QUrl(u)))
            assert said.startswith(expected), (browser, link, said)
