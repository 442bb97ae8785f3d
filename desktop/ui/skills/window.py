"""The skills manager: see every skill the agent could use, switch them on and off, edit, create,
install and customise them.

All file work runs in worker threads; the list comes from the same loader the agent uses, so what
the window shows is what the next system prompt contains. Questions to the user (name, file,
confirmation) are awaitable attributes, replaceable in tests without nested event loops."""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Awaitable, Callable, Collection, Coroutine
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtGui import QCloseEvent, QDesktopServices, QDragEnterEvent, QDropEvent, QFont, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.kernel.bus import TurnFinished
from desktop.kernel.taskset import TaskSet
from desktop.settings import SettingsError
from desktop.skills import Skills, files
from desktop.skills.install import InstallError, SkillExistsError, install_skill
from desktop.skills.loader import SkillsLoader, SkillStatus, set_skill_enabled
from desktop.ui.bridge import CoreBridge
from desktop.ui.form_widgets import confirm
from desktop.ui.links import open_link
from desktop.ui.save_question import Choice, asked_to_save
from desktop.ui.skills import dialogs
from desktop.ui.skills.details import Notice, SkillDetails, SkillEditor
from desktop.ui.skills.model import (
    AMBER,
    GREEN,
    GREY,
    RED,
    SOURCE_LABELS,
    STATUS_ROLE,
    SkillDelegate,
    SkillFilter,
    SkillListModel,
)

log = logging.getLogger(__name__)
SUCCESS_VISIBLE_MS = 8000


class MessageBar(Notice):
    """The window's one-line feedback: what just happened or why it did not."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        close = QToolButton()
        close.setAutoRaise(True)
        close.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_TitleBarCloseButton))
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        row = self.layout()
        assert row is not None
        row.addWidget(close)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)

    def show_message(self, color: str, text: str) -> None:
        """Success fades after a while; problems stay until dismissed or replaced."""
        self.show_html(color, text)
        if color == GREEN:
            self._timer.start(SUCCESS_VISIBLE_MS)
        else:
            self._timer.stop()


def _esc(text: object) -> str:
    return html.escape(str(text))


class SkillsWindow(QWidget):
    def __init__(self, skills: Skills, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.skills = skills
        self.bridge = bridge
        self.setWindowTitle("Skills")
        self.resize(1100, 720)
        self.setAcceptDrops(True)
        # The questions this window asks; tests replace them with plain coroutines.
        self.ask_name: Callable[[Collection[str]], Awaitable[str | None]] = lambda taken: dialogs.ask_name(
            self, taken, {s.name: s.source for s in self.model.statuses() if s.source != "workspace"})
        self.pick_source: Callable[[str], Awaitable[Path | None]] = lambda kind: dialogs.pick_source(self, kind)
        self.confirm: Callable[[str, str, str], Awaitable[bool]] = (
            lambda title, text, action: confirm(self, title, text, action))
        self.open_url: Callable[[QUrl], object] = QDesktopServices.openUrl
        self._tasks = TaskSet("the skills window", self._failed)
        self._write_lock = asyncio.Lock()  # config.yaml writes, one at a time
        self._scan_lock = asyncio.Lock()  # scans apply in the order they ran
        self._editing: SkillStatus | None = None
        self._closing: asyncio.Future[bool] | None = None  # the editor's close, its question perhaps still open
        self._opened_text: str | None = None  # SKILL.md as it was when opened in the editor or last saved there

        self.model = SkillListModel(self)
        self.model.toggle_requested.connect(lambda name, on: self._spawn(self.set_enabled(name, on)))
        self.proxy = SkillFilter(self)
        self.proxy.setSourceModel(self.model)
        self.list_view = QListView()
        self.list_view.setModel(self.proxy)
        self.list_view.setItemDelegate(SkillDelegate(self.list_view))
        self.list_view.setUniformItemSizes(True)
        self.list_view.setMouseTracking(True)
        self.list_view.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.list_view.setFrameShape(QFrame.Shape.NoFrame)
        self.list_view.setMinimumWidth(360)
        self.list_view.selectionModel().currentChanged.connect(lambda *_: self._show_current())

        self.details = SkillDetails()
        self.details.enable_clicked.connect(self._toggle_current)
        self.details.edit_requested.connect(lambda: self._spawn(self.edit()))
        self.details.copy_requested.connect(lambda: self._spawn(self.copy_to_workspace()))
        self.details.reveal_requested.connect(self.reveal)
        self.details.uninstall_requested.connect(lambda: self._spawn(self.uninstall()))
        self.details.link_clicked.connect(self._open_link)
        self.editor = SkillEditor()
        self.editor.save_requested.connect(lambda: self._spawn(self.save()))
        self.editor.close_requested.connect(lambda: self._spawn(self.close_editor()))
        self.placeholder = QLabel("Select a skill to see what it does.\n\n"
                                  "Drop a skill folder or a .zip/.skill archive here to install it.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet(f"color: {GREY}")
        self.stack = QStackedWidget()
        for page in (self.placeholder, self.details, self.editor):
            self.stack.addWidget(page)

        self.title = QLabel("Skills")
        title_font = QFont(self.font())
        title_font.setPointSizeF(self.font().pointSizeF() * 1.5)
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.summary = QLabel()
        self.summary.setStyleSheet(f"color: {GREY}")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter skills")
        self.search.setClearButtonEnabled(True)
        self.search.setFixedWidth(220)
        self.search.textChanged.connect(self.proxy.setFilterFixedString)
        self.new_button = QPushButton("New skill")
        self.new_button.setToolTip("Create a skill in your workspace from a template")
        self.new_button.clicked.connect(lambda: self._spawn(self.new_skill()))
        self.install_button = QPushButton("Install…")
        self.install_button.setToolTip("Install a skill into your workspace from a folder or a .zip/.skill archive")
        menu = QMenu(self.install_button)
        self.install_folder_action = menu.addAction("From a folder…")
        self.install_folder_action.triggered.connect(lambda: self._spawn(self.install_from("folder")))
        self.install_archive_action = menu.addAction("From an archive (.zip, .skill)…")
        self.install_archive_action.triggered.connect(lambda: self._spawn(self.install_from("archive")))
        self.install_button.setMenu(menu)
        self.refresh_button = QToolButton()
        self.refresh_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_BrowserReload))
        self.refresh_button.setToolTip("Scan the skill folders again")
        self.refresh_button.clicked.connect(lambda: self._spawn(self.refresh()))
        self.banner = MessageBar()

        top = QHBoxLayout()
        top.setSpacing(8)
        top.addWidget(self.title)
        top.addSpacing(6)
        top.addWidget(self.summary, 0, Qt.AlignmentFlag.AlignBottom)
        top.addStretch(1)
        for widget in (self.search, self.new_button, self.install_button, self.refresh_button):
            top.addWidget(widget)
        splitter = QSplitter()
        splitter.addWidget(self.list_view)
        splitter.addWidget(self.stack)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([430, 670])
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.setSpacing(10)
        layout.addLayout(top)
        layout.addWidget(self.banner)
        layout.addWidget(splitter, 1)
        bridge.event.connect(self._on_event)

    # -- state -------------------------------------------------------------------------------

    @property
    def loader(self) -> SkillsLoader:
        return self.skills.loader

    @property
    def skills_dir(self) -> Path:
        return self.skills.folder

    @property
    def editing(self) -> SkillStatus | None:
        return self._editing

    def current(self) -> SkillStatus | None:
        index = self.list_view.currentIndex()
        return index.data(STATUS_ROLE) if index.isValid() else None

    def status_of(self, name: str, source: str) -> SkillStatus | None:
        row = self.model.row_of(name, source)
        return self.model.statuses()[row] if row >= 0 else None

    def select(self, name: str, source: str) -> bool:
        row = self.model.row_of(name, source)
        if row < 0:
            return False
        index = self.proxy.mapFromSource(self.model.index(row))
        if not index.isValid():  # hidden by the filter
            self.search.clear()
            index = self.proxy.mapFromSource(self.model.index(row))
        self.list_view.setCurrentIndex(index)
        self.list_view.scrollTo(index)
        return True

    # -- actions (coroutines; the buttons spawn them, tests await them) --------------------------

    async def refresh(self, select: tuple[str, str] | None = None) -> list[SkillStatus]:
        """Rescan the skill folders (cheap: the loader re-parses only changed files) and redraw."""
        async with self._scan_lock:
            statuses = await asyncio.to_thread(self.loader.scan)
            current = self.current()
            keep = select or ((current.name, current.source) if current else None)
            self.model.set_statuses(statuses)
            self._show_summary(statuses)
            if not (keep and self.select(*keep)) and self.proxy.rowCount():
                self.list_view.setCurrentIndex(self.proxy.index(0, 0))
            self._show_current()
            return statuses

    async def set_enabled(self, name: str, enabled: bool) -> bool:
        """Write skills.disabled; the agent's loader reads the same list, so the next prompt follows."""
        async with self._write_lock:
            try:
                await set_skill_enabled(self.bridge.settings, name, enabled)
                done = True
            except (SettingsError, OSError) as exc:
                self.banner.show_message(RED, f"<b>Could not {'enable' if enabled else 'disable'} “{_esc(name)}”.</b> "
                                              f"{_esc(exc)}")
                done = False
        await self.refresh()
        return done

    async def new_skill(self) -> bool:
        taken = {s.name for s in self.model.statuses() if s.source == "workspace"}
        name = await self.ask_name(taken)
        return bool(name) and await self.create_skill(name or "")

    async def create_skill(self, name: str) -> bool:
        """A valid skeleton in <workspace>/skills/<name>/SKILL.md, opened in the editor."""
        problem = dialogs.name_problem(name, ())
        if problem:
            self.banner.show_message(RED, f"<b>Cannot create “{_esc(name)}”.</b> {_esc(problem)}")
            return False
        try:
            await asyncio.to_thread(files.create_skill, self.skills_dir, name)
        except FileExistsError:
            self.banner.show_message(RED, f"<b>{_esc(self.skills_dir / name)} already exists.</b> Pick another name.")
            return False
        except OSError as exc:
            self.banner.show_message(RED, f"<b>Could not create the skill.</b> {_esc(exc)}")
            return False
        await self.refresh(select=(name, "workspace"))
        await self.edit(self.status_of(name, "workspace"))
        self.banner.show_message(GREEN, f"Created <code>skills/{_esc(name)}/SKILL.md</code>. Describe when to use it, "
                                        "write the steps, then Save.")
        return True

    async def install_from(self, kind: str) -> bool:
        source = await self.pick_source(kind)
        return source is not None and await self.install(source)

    async def install(self, source: Path) -> bool:
        """Install a folder or archive into the workspace, asking before replacing a skill."""
        try:
            doc = await asyncio.to_thread(install_skill, source, self.skills_dir)
        except SkillExistsError as exc:
            if not await self.confirm("Replace skill?", f"Your workspace already has a skill named “{exc.name}”.\n\n"
                                      f"Replace it with the one from {source.name}? Its current folder, including "
                                      "any changes you made, will be deleted.", "Replace"):
                self.banner.show_message(GREY, f"Nothing installed; “{_esc(exc.name)}” was left as it was.")
                return False
            try:
                doc = await asyncio.to_thread(install_skill, source, self.skills_dir, force=True)
            except InstallError as again:
                self.banner.show_message(RED, f"<b>Could not install {_esc(source.name)}.</b> {_esc(again)}")
                return False
        except InstallError as exc:
            self.banner.show_message(RED, f"<b>Could not install {_esc(source.name)}.</b> {_esc(exc)}")
            return False
        await self.refresh(select=(doc.name, "workspace"))
        notes = f" It has {len(doc.diagnostics)} warning(s); see below." if doc.diagnostics else ""
        self.banner.show_message(AMBER if doc.diagnostics else GREEN,
                                 f"Installed “{_esc(doc.name)}” into your workspace.{notes}")
        return True

    async def copy_to_workspace(self, status: SkillStatus | None = None) -> bool:
        """Override a built-in or user skill with an editable copy in the workspace."""
        status = status or self.current()
        if status is None or status.source == "workspace":
            return False
        try:
            await asyncio.to_thread(files.copy_skill, status.doc.path.parent, self.skills_dir)
        except FileExistsError:
            self.banner.show_message(RED, f"<b>Your workspace already has <code>skills/{_esc(status.name)}</code>.</b> "
                                          "Edit that one, or rename it first.")
            return False
        except OSError as exc:
            self.banner.show_message(RED, f"<b>Could not copy “{_esc(status.name)}”.</b> {_esc(exc)}")
            return False
        await self.refresh(select=(status.name, "workspace"))
        await self.edit(self.status_of(status.name, "workspace"))
        self.banner.show_message(GREEN, f"Copied “{_esc(status.name)}” to your workspace; your copy now replaces the "
                                        f"{'built-in' if status.source == 'builtin' else status.source} one.")
        return True

    async def edit(self, status: SkillStatus | None = None) -> bool:
        status = status or self.current()
        if status is None or status.source != "workspace":
            return False
        try:
            text = await asyncio.to_thread(files.read_skill_text, self.skills_dir, status.name)
        except UnicodeDecodeError:
            self.banner.show_message(RED, f"<b>{_esc(status.doc.path)} is not UTF-8 text.</b> Convert it to UTF-8 "
                                          "in another editor first; editing it here could damage it.")
            return False
        except OSError as exc:
            self.banner.show_message(RED, f"<b>Could not open {_esc(status.doc.path)}.</b> {_esc(exc)}")
            return False
        self._set_editing(status)
        self._opened_text = text
        self.editor.open(status.doc.path, text)
        return True

    async def save(self) -> bool:
        """Save what is in the editor, even when it does not validate: the user's text is never
        lost, and the diagnostics say what still keeps the skill from loading."""
        editing = self._editing
        if editing is None or self.editor.path is None:
            return False
        text = self.editor.text()
        doc = self.editor.validate()
        on_disk = await asyncio.to_thread(self._read_on_disk, editing.name)
        if on_disk not in (self._opened_text, text):
            self._opened_text = on_disk  # said once: a second Save, knowingly, replaces that version
            self.banner.show_message(AMBER, f"<b>“{_esc(editing.name)}” was changed on disk since you opened it</b> "
                                            "(by the assistant or another editor). Nothing was saved; your text is "
                                            "still here. Save again to replace that version with yours.")
            return False
        try:
            await asyncio.to_thread(files.save_skill_text, self.skills_dir, editing.name, text)
        except OSError as exc:
            self.banner.show_message(RED, f"<b>Could not save {_esc(self.editor.path)}.</b> {_esc(exc)} "
                                          "Your text is still in the editor.")
            return False
        except files.SkillTooLarge as exc:
            self.banner.show_message(RED, f"<b>Not saved:</b> {_esc(exc)}. Your text is still in the editor.")
            return False
        self._opened_text = text
        if self.editor.text() == text:  # typing during the save keeps the document dirty
            self.editor.mark_saved()
        await self.refresh(select=(editing.name, "workspace"))
        if self.editor.text() != text:  # typed on while it was written: the editor stays, with that typing
            self.banner.show_message(AMBER, f"<b>Saved “{_esc(editing.name)}”.</b> What you typed since is not "
                                            "saved yet.")
            return True
        if not doc.loadable:
            self.banner.show_message(AMBER, f"<b>Saved, but “{_esc(editing.name)}” cannot be loaded.</b> The assistant "
                                            "skips it until the errors shown under the editor are fixed.")
            return True
        self._set_editing(None)
        self._show_current()
        warnings = f" It has {len(doc.diagnostics)} warning(s)." if doc.diagnostics else ""
        self.banner.show_message(AMBER if doc.diagnostics else GREEN,
                                 f"Saved “{_esc(editing.name)}”; the assistant uses it from its next message."
                                 f"{warnings}")
        return True

    def _read_on_disk(self, name: str) -> str | None:
        """A workspace skill's SKILL.md as it is now; None when it is gone or unreadable (changed all the same)."""
        try:
            return files.read_skill_text(self.skills_dir, name)
        except (OSError, UnicodeDecodeError):
            return None

    async def close_editor(self) -> bool:
        """Close the editor, asking first when its changes are unsaved. A close asked for while that question is
        open (the editor's Close, then the window's) waits for its answer: one question, answered once."""
        if self._closing is None or self._closing.done():
            self._closing = asyncio.ensure_future(self._close_editor())
        return await asyncio.shield(self._closing)

    async def _close_editor(self) -> bool:
        if self._editing is None:
            return True
        if self.editor.is_modified():
            choice = await asked_to_save(self, f"Your changes to “{self._editing.name}” are not saved.")
            if choice == Choice.Cancel or choice == Choice.Save and not (await self.save()
                                                                        and not self.editor.is_modified()):
                return False  # a failed save (or typing since) is said in the banner, the text still in the editor
        self._set_editing(None)
        self._show_current()
        return True

    async def uninstall(self, status: SkillStatus | None = None) -> bool:
        """Move a workspace skill's folder to skills/.trash, after the user agreed to exactly that."""
        status = status or self.current()
        if status is None or status.source != "workspace":
            return False
        folder = status.doc.path.parent
        if not await self.confirm(
                "Uninstall skill?", f"Uninstall “{status.name}”?\n\nIts folder {folder} will be moved to "
                f"{self.skills_dir / files.TRASH}, where you can take it back. Nothing is deleted.", "Uninstall"):
            return False
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        try:
            moved = await asyncio.to_thread(files.trash_skill, folder, self.skills_dir, stamp)
        except OSError as exc:
            self.banner.show_message(RED, f"<b>Could not uninstall “{_esc(status.name)}”.</b> {_esc(exc)}")
            return False
        statuses = await self.refresh()
        again = next((s.source for s in statuses if s.name == status.name and s.in_effect), None)
        back = f" The {SOURCE_LABELS.get(again, again)} one is used again." if again else ""
        self.banner.show_message(GREEN, f"Uninstalled “{_esc(status.name)}”; its folder is now "
                                        f"<code>{_esc(moved)}</code>.{back}")
        return True

    def reveal(self) -> None:
        status = self.current()
        if status is not None:
            self.open_url(QUrl.fromLocalFile(str(status.doc.path.parent)))

    # -- plumbing ------------------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        return self._tasks.spawn(coro)

    def _failed(self, exc: BaseException) -> None:
        self.banner.show_message(RED, f"<b>Something went wrong.</b> {_esc(exc)}")

    def _toggle_current(self, enabled: bool) -> None:
        index = self.list_view.currentIndex()
        if index.isValid():  # through the model, like the row's switch: one path for both
            self.proxy.setData(index, Qt.CheckState.Checked if enabled else Qt.CheckState.Unchecked,
                               Qt.ItemDataRole.CheckStateRole)

    def _set_editing(self, status: SkillStatus | None) -> None:
        """While editing, the list and the adding buttons are locked so no edit is silently dropped."""
        self._editing = status
        for widget in (self.list_view, self.search, self.new_button, self.install_button):
            widget.setEnabled(status is None)
        self.stack.setCurrentWidget(self.editor if status else self.details)

    def _show_current(self) -> None:
        if self._editing is not None:
            return
        status = self.current()
        if status is None:
            self.stack.setCurrentWidget(self.placeholder)
            return
        self.details.show_status(status)
        self.stack.setCurrentWidget(self.details)

    def _show_summary(self, statuses: list[SkillStatus]) -> None:
        used = [s for s in statuses if s.in_effect]
        parts = [f"{len({s.name for s in statuses})} skills", f"{len(used)} in use"]
        if unavailable := sum(not s.available for s in used):
            parts.append(f"{unavailable} {'needs' if unavailable == 1 else 'need'} setup")
        if broken := sum(not s.doc.loadable for s in statuses):
            parts.append(f"{broken} with errors")
        self.summary.setText(" · ".join(parts))

    def _open_link(self, url: QUrl) -> None:
        """A link in a skill: a heading of its own, else what desktop/ui/links.py allows, a relative one naming a
        file beside SKILL.md (references/api.md)."""
        status = self.current()
        if not url.scheme() and not url.path() and url.hasFragment():
            self.details.body.scrollToAnchor(url.fragment())
        else:
            open_link(url, status.doc.path.parent if status is not None else self.bridge.workspace)

    def _on_event(self, event: object) -> None:
        """The agent may have written a skill (skill-creator): rescan after each turn."""
        if isinstance(event, TurnFinished) and self.isVisible() and self._editing is None:
            self._spawn(self.refresh())

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._editing is None:
            self._spawn(self.refresh())

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing (Esc, the title bar) with a skill's changes unsaved asks first, as the editor's Close does: they
        are never left in a hidden window that quitting drops."""
        if self._editing is not None and self.editor.is_modified():
            event.ignore()
            self._spawn(self._close_when_answered())
        else:
            super().closeEvent(event)

    async def _close_when_answered(self) -> None:
        if await self.close_editor():
            self.hide()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if len(urls) == 1 and urls[0].isLocalFile() and self._editing is None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        event.acceptProposedAction()
        self._spawn(self.install(Path(event.mimeData().urls()[0].toLocalFile())))
