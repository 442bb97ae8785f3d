"""The chat window: the list of chats, the transcript of the open one, and the editor.

Every session opened in this run keeps its TranscriptModel, fed by bus events even while another
chat is shown, so switching back to a running chat shows its live answer. Session files are read
off the GUI thread (SessionStore does the I/O in a worker, rows are built in another)."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QDragEnterEvent,
    QDragLeaveEvent,
    QDropEvent,
    QKeyEvent,
    QKeySequence,
    QShortcut,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from desktop.agent.commands import STOP
from desktop.conversation.transcript import ChatRow, Kind, attachment_names, rows_from_messages
from desktop.kernel.bus import ChatSetAside, Event, TurnError, TurnFinished, TurnStarted
from desktop.kernel.channels import Channel, channel_of, session_key
from desktop.kernel.paths import home
from desktop.kernel.taskset import spawn
from desktop.session import alternatives
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.composer import Composer, Draft
from desktop.ui.chat.draft_keeper import DraftKeeper
from desktop.ui.chat.editing import Editing, nearest
from desktop.ui.chat.find_bar import FindBar
from desktop.ui.chat.model import TranscriptModel
from desktop.ui.chat.model_picker import ModelPicker
from desktop.ui.chat.panel import ChatPanel
from desktop.ui.chat.search_all import SearchAll
from desktop.ui.chat.sidebar import NEW_TITLE, SessionList
from desktop.ui.chat.thumbnails import Thumbnails
from desktop.ui.chat.view import MessageView
from desktop.ui.context.shelf import ContextShelf
from desktop.ui.elided_label import ElidedLabel
from desktop.ui.gil import gui_first
from desktop.ui.links import open_link
from desktop.ui.voice.dictate import Dictate

log = logging.getLogger(__name__)
TITLE_MIN_CHARS = 14  # the chat title's least room, in average characters: enough to tell chats apart

_STYLE = """
#sidebar { background: palette(window); }
QSplitter::handle { background: palette(midlight); }
#newChat { text-align: left; padding: 7px 12px; border-radius: 7px; }
#header { border-bottom: 1px solid palette(midlight); background: palette(base); }
#title { font-weight: 600; }
#composer { border: 1px solid palette(mid); border-radius: 12px; background: palette(base); }
#composer[focused="true"] { border: 1px solid palette(highlight); }
#composer[dropping="true"] { border: 2px dashed palette(highlight); }
#composer QPlainTextEdit { background: transparent; }
#hint { color: palette(placeholder-text); }
#hint[error="true"] { color: #c0392b; }
#composerArea { background: palette(base); }
#chip { border: 1px solid palette(midlight); border-radius: 6px; }
#chip QLabel { padding-left: 4px; }
#preview { border: 1px solid palette(midlight); border-radius: 6px; background: palette(alternate-base); }
"""


def new_session_key() -> str:
    return session_key(Channel.DESKTOP, uuid.uuid4().hex[:8])


class ChatWindow(QWidget):
    """Closing hides the window (the app lives in the tray); Esc does the same, or stops the answer while one
    runs in the open chat."""

    settings_requested = Signal()  # the app opens Settings

    def __init__(self, bridge: CoreBridge, panels: Sequence[Callable[[], ChatPanel]] = (),
                 parent: QWidget | None = None) -> None:
        """`panels`: the features' strips above the composer (desktop/ui/host.py add_chat_panel), with what
        they put in the header and beside the transcript."""
        super().__init__(parent)
        self.bridge = bridge
        self.setWindowTitle("Nanobot")
        self.setAcceptDrops(True)
        self.resize(1040, 720)
        self.setStyleSheet(_STYLE)
        self.models: dict[str, TranscriptModel] = {}
        self.current_key = ""
        self._onboarding: QWidget | None = None

        self.sidebar = SessionList(self)
        self.sidebar.selected.connect(self.show_session)
        self.sidebar.new_requested.connect(self.new_chat)
        self.sidebar.rename_requested.connect(lambda key, title: spawn(self.rename_session(key, title)))
        self.sidebar.delete_requested.connect(lambda key: spawn(self.delete_session(key)))
        self.sidebar.pin_requested.connect(lambda key, pinned: spawn(self.pin_session(key, pinned)))

        self.title = ElidedLabel(NEW_TITLE)  # a long title ends in "…": it never squeezes the columns beside the chat
        self.title.setObjectName("title")
        # Room for the title's start however many buttons the features put beside it (Files, Export...): squeezed
        # to nothing, no word would say which chat this is.
        self.title.setMinimumWidth(self.title.fontMetrics().averageCharWidth() * TITLE_MIN_CHARS)
        self.model_picker = ModelPicker(bridge)
        header = QWidget()
        header.setObjectName("header")
        header_layout = QHBoxLayout(header)
        header_layout.setContentsMargins(18, 10, 18, 10)
        header_layout.addWidget(self.title, 1)
        header_layout.addWidget(self.model_picker)

        self.thumbnails = Thumbnails(lambda: bridge.workspace, self)  # of attached pictures
        self.view = MessageView()
        self.view.show_thumbnails(self.thumbnails)
        self.view.retry_requested.connect(self.retry)
        self.view.link_clicked.connect(lambda link: open_link(link, self.bridge.workspace))
        self.view.row_tip = self._row_tip
        actions = self.view.row_actions
        actions.copy_requested.connect(lambda row: QApplication.clipboard().setText(row.text))
        actions.regenerate_requested.connect(self.retry)
        actions.edit_requested.connect(self.edit)
        actions.branch_requested.connect(lambda row: spawn(self.branch_from(row)))
        self._alternatives: dict[str, tuple[int, int] | None] = {}  # per chat: its last answer's, as last read
        actions.alternatives = lambda: self._alternatives.get(self.current_key)
        actions.answer_requested.connect(lambda index: spawn(self.show_answer(index)))
        self.view.settings_requested.connect(self.settings_requested)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.view)

        dictate = Dictate(bridge, self)  # the microphone (desktop/ui/voice)
        dictate.settings_requested.connect(self.settings_requested)
        self.composer = Composer(self._commands, self.thumbnails, home().pasted_dir,
                                 ContextShelf(bridge, self.model_picker), dictate)
        self.composer.submitted.connect(self.send)
        self.composer.stop_requested.connect(self.stop)
        self.editing = Editing(self.composer)  # a question of the person's, edited in the box
        self.sidebar.unsent_edit = self.editing.rewritten
        DraftKeeper("chat", self.editing.unsent, self.composer.input.textChanged, self.editing.give_back_kept, self)
        composer_area = QWidget()
        composer_area.setObjectName("composerArea")
        area_layout = QVBoxLayout(composer_area)
        area_layout.setContentsMargins(18, 6, 18, 14)
        self.panels = [build() for build in panels]
        for panel in self.panels:
            panel.focus_freed.connect(self.composer.input.setFocus)
            panel.attach_requested.connect(self.composer.add_files)
            panel.settings_requested.connect(self.settings_requested)
            if (button := panel.row_button()) is not None:
                actions.add(button, panel.offer_row)
            area_layout.addWidget(panel)
            if (in_header := panel.header_widget()) is not None:
                header_layout.addWidget(in_header)
        area_layout.addWidget(self.composer)

        main = QWidget()
        main_layout = QVBoxLayout(main)
        main_layout.setContentsMargins(0, 0, 0, 0)
        main_layout.setSpacing(0)
        main_layout.addWidget(header)
        self.find_bar = FindBar(self.view)  # Ctrl+F
        self.find_bar.closed.connect(self.composer.input.setFocus)
        main_layout.addWidget(self.find_bar)
        main_layout.addWidget(self.stack, 1)
        main_layout.addWidget(composer_area)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.sidebar)
        splitter.addWidget(main)
        for side in filter(None, (panel.side_widget() for panel in self.panels)):
            side.hide()
            splitter.addWidget(side)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([250, 790])
        splitter.setChildrenCollapsible(False)
        splitter.setHandleWidth(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

        QShortcut(QKeySequence("Ctrl+N"), self, self.new_chat)
        QShortcut(QKeySequence("Ctrl+F"), self, self.find_bar.open)
        self.search_all = SearchAll(bridge, self)  # Ctrl+K
        self.search_all.chosen.connect(self._open_found)
        self.search_all.dismissed.connect(self.composer.input.setFocus)
        QShortcut(QKeySequence("Ctrl+K"), self, self.search_all.open)
        self.sidebar.search_field.opened.connect(self.search_all.open)
        self._transcript_parts = (self.view, self.view.viewport(), self.view.selector, self.view.selector.viewport())
        for widget in (*self._transcript_parts, self.sidebar.list, self.sidebar.new_button, self.model_picker):
            widget.installEventFilter(self)  # clicks and typing in the transcript, typing elsewhere: see eventFilter
        self._refresh_timer = QTimer(self, singleShot=True, interval=150)  # coalesce sidebar refreshes
        self._refresh_timer.timeout.connect(lambda: spawn(self.refresh_sessions()))
        bridge.event.connect(self._on_event)

    # -- public API used by the app

    def show_session(self, key: str) -> None:
        """Open a chat (loading its file in the background); a key without a file is a new chat."""
        if not key:
            return
        if key == self.current_key and key in self.models:
            self.sidebar.select(key)
            return
        self.editing.set_aside(self.current_key, known=self.current_key in self.models)
        self.current_key = key
        self.editing.take_up(key)
        for panel in self.panels:
            panel.show_session(key)
        model = self._model_for(key)
        self.view.set_model(model)
        self.composer.set_busy(model.busy)
        self._update_header()
        self._update_onboarding()
        self.sidebar.select(key)
        self._refresh_timer.start()

    def show_message(self, key: str, message: int) -> None:
        """Open a chat scrolled to saved message `message` (what a clicked notification is about). Rows built
        from live events do not know their place in the file, so a chat showing such rows is read again first,
        unless a turn runs in it (then it just opens)."""
        model = self.models.get(key)
        edited: ChatRow | None = None
        if model is not None and model.loaded and not model.busy and model.row_of_message(message) is None:
            if key == self.current_key:  # an edit there is kept while the chat is read, and taken up at once
                self.editing.set_aside(key, known=True)
            edited = self.editing.aside_row(key)
            place = next((i for i, row in enumerate(model.rows) if edited is not None and row is edited), -1)
            del self.models[key]
            model.deleteLater()
        self.show_session(key)
        model = self.models[key]
        if model.loaded:
            self._reveal_message(model, message)
            return

        def loaded() -> None:
            model.modelReset.disconnect(loaded)
            if edited is not None:
                self.editing.find_again(key, model.rows, edited, place)
            self._reveal_message(model, message)
        model.modelReset.connect(loaded)

    def _reveal_message(self, model: TranscriptModel, message: int) -> None:
        row = model.row_of_message(message)
        if row is not None and self.view.model() is model:
            self.view.reveal(row)

    def _open_found(self, key: str, query: str) -> None:
        """A chat picked in the search over all chats: at its first hit, if the hit is in its messages."""
        self.show_session(key)
        if query:
            self.find_bar.open(query, first=True)
        else:
            self.composer.input.setFocus()

    def focus_input(self) -> None:
        if not self.isVisible():
            self.show()
        self.raise_()
        self.activateWindow()
        self.composer.input.setFocus()

    def new_chat(self) -> None:
        self.show_session(new_session_key())
        self.composer.input.setFocus()

    # -- sending

    def send(self, text: str, media: list[str], names: dict[str, str] | None = None) -> None:
        """Send the message box's text and files; `names`: what files were first sent by (an edited message's
        workspace copies), kept by the message."""
        if not self.current_key:
            self.show_session(new_session_key())
        if self.editing.row is not None and self._is_command(text):  # typed over the edit: it ends as Esc does,
            media = [path for path in media if path not in self.editing.row.media]  # the question keeps its files
            names = {path: name for path, name in (names or {}).items() if path in media}
            self.editing.stop()
            self.editing.give_back_draft()
        if text.strip().lower() == STOP:  # typed: the chat shows no question for it
            self.stop()
            return
        model = self._model_for(self.current_key)
        if self.editing.row is not None and not model.loaded:  # read again (a notification): question not shown yet
            self.composer.put_back(Draft(text, media, dict(names or {}), {}))
            self.composer.say("This chat is still being read: press Enter again in a moment to send the edit")
            return
        edited, redo = self.editing.row, False
        branching = self.editing.branches
        self.editing.stop()
        if edited is not None and branching and edited in model.rows:
            spawn(self._send_in_branch(model, edited, text, media, names))
            return
        if edited is not None and edited in model.rows and not model.busy:
            model.drop_after(edited, inclusive=True)
            redo = True
        model.add_user(text, media, names)
        self.view.scroll_to_bottom()
        self.bridge.send(self.current_key, text, media, redo=redo, names=names)
        self._refresh_timer.start()
        self.editing.give_back_draft()

    def stop(self) -> None:
        if self.current_key:
            self.bridge.stop(self.current_key)
        self.composer.input.setFocus()  # the Stop button hides: the keyboard goes back to writing

    def _is_command(self, text: str) -> bool:
        """Whether `text` is a slash command (which the core runs, never taken as a question)."""
        word = text.split(maxsplit=1)[0].lower() if text.strip() else ""
        return word.startswith("/") and word in {name.lower() for name, _ in self._commands()}

    def _answering(self) -> bool:
        """Whether the open chat's turn runs (what Stop, shown then, ends)."""
        model = self.models.get(self.current_key)
        return model is not None and model.busy

    def retry(self, row: ChatRow) -> None:
        """Retry a failed turn or Regenerate the last answer: the question is asked again, in that turn's place
        (what the turn showed goes, the question stays), its files under the names they were sent by."""
        model = self.view.model()
        last = model.last_user() if model is not None else None
        if model is None or last is None or row not in model.rows or not model.redoable():
            return
        model.drop_after(last)
        model.asked_again(last.text)
        self.bridge.send(self.current_key, last.text, list(last.media), redo=True, names=attachment_names(last))

    def edit(self, row: ChatRow) -> None:
        """Put a question in the composer (Esc leaves it as it was). Sending the last one replaces its turn;
        sending an earlier one asks it in a new chat branched before it, and this chat stays as it is."""
        model = self.view.model()
        self.editing.start(row, branches=model is None or not model.redoable() or row is not model.last_user())
        self.composer.input.setFocus()

    # -- branches (desktop/session/branches.py)

    async def branch_from(self, row: ChatRow) -> None:
        """Branch from here: a new chat sharing this one's history up to and including `row`'s message."""
        model = self.view.model()
        message = await self._message_of(model, row) if model is not None else None
        key = await self._branch(model, message + 1) if model is not None and message is not None else None
        if key is not None:
            self.show_session(key)
            self.composer.input.setFocus()

    async def _send_in_branch(self, model: TranscriptModel, edited: ChatRow, text: str, media: list[str],
                              names: dict[str, str] | None) -> None:
        """An earlier question, edited: asked in a new chat that shares the history before it."""
        message = await self._message_of(model, edited)
        key = await self._branch(model, message) if message is not None else None
        if key is None and self.current_key != model.session_key:  # the person went to another chat meanwhile
            said = self.composer.hint.text().rstrip(".")  # why (the box given back its message shows the keys again)
            self.editing.keep_aside(model.session_key, edited, Draft(text, media, dict(names or {}), {}))
            again = ": Enter there tries again" if message is not None else ""  # else it cannot branch there at all
            self.composer.say(f"{said}. Your edited question waits in the chat you edited it in{again}", error=True)
            return
        if key is None:  # nothing was sent: the edit comes back as it was sent (words and files), Enter tries again
            said = self.composer.hint.text().rstrip(".")  # why (editing it again, and its files, show the keys)
            self.edit(edited)
            self.composer.put_back(Draft(text, media, dict(names or {}), {}))
            self.composer.say(f"{said}. Enter tries again · Esc cancels", error=True)
            return
        session = await self.bridge.load_chat(key)
        branch = self._model_for(key, await asyncio.to_thread(rows_from_messages, list(session.messages)))
        self.show_session(key)
        branch.add_user(text, media, names)
        self.view.scroll_to_bottom()
        self.bridge.send(key, text, media, names=names)
        self.editing.give_back_draft()

    async def _message_of(self, model: TranscriptModel, row: ChatRow) -> int | None:
        """The index of the saved message `row` shows. A row shown live (this run's turns) is matched with the row
        of the saved chat showing the same, nearest its place; None (and the person told) when it is not saved as
        shown."""
        if row.message >= 0:
            return row.message
        position = next((i for i, r in enumerate(model.rows) if r is row), -1)
        session = await self.bridge.load_chat(model.session_key)
        saved = await asyncio.to_thread(rows_from_messages, list(session.messages))
        if position >= 0 and (found := nearest(saved, row, position)) is not None:
            return found.message
        self.composer.say("That message is not saved as shown, so the chat cannot branch there.", error=True)
        return None

    async def _branch(self, model: TranscriptModel, upto: int) -> str | None:
        """A new chat sharing `model`'s chat's first `upto` saved messages; its key, or None when it could not be
        written (the person is told)."""
        key = new_session_key()
        try:
            await self.bridge.load_chat(key, branch_of=model.session_key, upto=upto)
        except OSError as exc:
            self.composer.say(f"The branch could not be saved: {exc.strerror or exc}", error=True)
            return None
        return key

    # -- sessions

    async def refresh_sessions(self) -> None:
        infos = await self.bridge.list_chats()
        if not isValid(self):
            return  # the window went while the list was read (the app quitting)
        self.sidebar.set_sessions(infos, self.current_key, set(self.bridge.conversations.running))
        self.sidebar.set_asking(set(self.bridge.conversations.asking()))
        self._update_header()

    async def rename_session(self, key: str, title: str) -> None:
        await self._change_chat(key, "renamed", title=title)

    async def pin_session(self, key: str, pinned: bool) -> None:
        await self._change_chat(key, "pinned" if pinned else "unpinned", pinned=pinned)

    async def _change_chat(self, key: str, done: str, **change: Any) -> None:
        """A change to how a chat is filed; one its file cannot take is said under the message box, and the list
        shows the chat as it still is."""
        try:
            await self.bridge.update_chat(key, **change)
        except OSError as exc:
            self.composer.say(f"The chat could not be {done}: {exc.strerror or exc}", error=True)
        await self.refresh_sessions()

    async def delete_session(self, key: str) -> None:
        if self.bridge.conversations.busy(key):
            self.bridge.stop(key)
        await self.bridge.delete_chat(key)
        self.models.pop(key, None)
        rewritten = self.editing.chat_deleted(key, current=key == self.current_key)  # those words stay in the box
        if key == self.current_key:
            remaining = [k for k in self.sidebar.session_keys() if k != key]
            self.current_key = ""
            self.show_session(remaining[0] if remaining else new_session_key())
        if rewritten:
            self.editing.say_gone()
        await self.refresh_sessions()

    def _model_for(self, key: str, rows: list[ChatRow] | None = None) -> TranscriptModel:
        """The chat's rows, read from its file unless they are known (`rows`: [] for a chat just emptied)."""
        model = self.models.get(key)
        if model is None:
            model = self.models[key] = TranscriptModel(key, self)
            model.busy = self.bridge.conversations.busy(key)
            model.busy_changed.connect(lambda busy, k=key: self._busy_changed(k, busy))
            if rows is None:
                spawn(self._load(model))
            else:
                model.load(rows)
        return model

    def _chat_set_aside(self, event: ChatSetAside) -> None:
        """/new: the conversation now lives under another key (listed in the sidebar, read from its file when
        opened); this key starts empty. A question edited in it is gone from it: its rewritten words stay in the
        box as a message to send, and the hint says so."""
        old = self.models.pop(event.session_key, None)
        if old is not None:
            old.deleteLater()
        self.editing.history_gone(event.session_key, current=event.session_key == self.current_key)
        fresh = self._model_for(event.session_key, [])
        if event.session_key == self.current_key:
            self.view.set_model(fresh)
            self.composer.set_busy(fresh.busy)
        self._refresh_timer.start()

    async def _load(self, model: TranscriptModel) -> None:
        with gui_first():  # the file is read and its rows built in threads, in Python: the window keeps the GIL
            session = await self.bridge.load_chat(model.session_key)
            messages = list(session.messages)
            rows, answers = await asyncio.to_thread(  # both walk the whole chat: 10,000 messages are 15 ms
                lambda: (rows_from_messages(messages), alternatives.of(session)))
        if self.models.get(model.session_key) is model:
            self._alternatives[model.session_key] = answers
            model.load(rows)

    async def _read_alternatives(self, key: str) -> None:
        """What the last answer's "‹ 2/3 ›" says, read again once a turn ended (Regenerate may have kept one)."""
        self._alternatives[key] = alternatives.of(await self.bridge.load_chat(key))

    async def show_answer(self, index: int) -> None:
        """‹ or ›: the last question's answer `index` is shown in place and becomes the chat's history."""
        model = self.models.get(self.current_key)
        if model is None or model.busy:
            return
        try:
            await self.bridge.update_chat(model.session_key, answer=index)
        except OSError as exc:
            self.composer.say(f"The chat could not be saved: {exc.strerror or exc}", error=True)
            return
        session = await self.bridge.load_chat(model.session_key)
        rows = await asyncio.to_thread(rows_from_messages, list(session.messages))
        question = model.last_user()
        start = max((i for i, r in enumerate(rows) if r.kind is Kind.USER), default=-1) + 1
        if question is None or model.busy or start == 0:
            return
        self._alternatives[model.session_key] = alternatives.of(session)
        model.drop_after(question)  # the question stays where it is; only its answer changes, in place
        for row in rows[start:]:
            model.append(row)
        self.view.offer_actions_at_pointer()

    # -- events

    def _on_event(self, event: Event) -> None:
        key = getattr(event, "session_key", "")
        if isinstance(event, ChatSetAside):
            self._chat_set_aside(event)
            return
        model = self.models.get(key)
        if model is not None:
            model.apply(event)
        if isinstance(event, TurnStarted):
            self.sidebar.set_busy(key, True)
        elif isinstance(event, (TurnFinished, TurnError)):
            self.sidebar.set_busy(key, False)
            spawn(self._read_alternatives(key))
            self._refresh_timer.start()  # titles and order change when a turn ends
        self.sidebar.set_asking(set(self.bridge.conversations.asking()))

    def _busy_changed(self, key: str, busy: bool) -> None:
        if busy:
            self.editing.turn_began(key, current=key == self.current_key)
        if key == self.current_key:
            self.composer.set_busy(busy)
            if self.editing.row is not None:  # the hint says what Enter does now
                self.editing.say()

    def _row_tip(self, rows: Sequence[ChatRow], index: int) -> str:
        """A hovered row's tooltip: what the features' strips say about it (what an answer cost)."""
        return "\n\n".join(filter(None, (panel.row_tip(rows, index) for panel in self.panels)))

    def _commands(self) -> list[tuple[str, str]]:
        return self.bridge.commands()

    # -- first run

    def _update_header(self) -> None:
        self.title.setText(self.sidebar.title_of(self.current_key) or NEW_TITLE)
        self.model_picker.show_chat(self.current_key)

    def _update_onboarding(self) -> None:
        """Without a model the transcript area shows the onboarding panel (or a pointer to Settings)."""
        needed = not self.bridge.settings.config.model
        if needed and self._onboarding is None:
            self._onboarding = _onboarding_panel(self.bridge, self._configured)
            self.stack.addWidget(self._onboarding)
        self.stack.setCurrentWidget(self._onboarding if needed and self._onboarding else self.view)
        self.composer.setEnabled(not needed)

    def _configured(self) -> None:
        self._update_onboarding()
        self._update_header()
        self.composer.input.setFocus()

    # -- window behaviour

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._update_onboarding()
        self._update_header()
        if not self.current_key:
            spawn(self._open_latest())
        else:
            self._refresh_timer.start()

    async def _open_latest(self) -> None:
        """After a start, the conversation the person had last, begun here or in the quick prompt (Open in chat
        carries it here, and it is listed here either way); not a terminal's or the app's own background chats."""
        infos = await self.bridge.list_chats()
        if not self.current_key:
            theirs = [i.key for i in infos if channel_of(i.key) in (Channel.DESKTOP, Channel.QUICK)]
            self.show_session(theirs[0] if theirs else new_session_key())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The transcript keeps the keyboard only while text in it is selected (for Ctrl+C): a plain click
        gives it back to the composer, and typing there is typing in the composer. Typing in the sidebar or on
        the model picker goes to the composer too; arrows, Enter and Space keep working there."""
        kind = event.type()
        transcript = watched in self._transcript_parts
        if kind == QEvent.Type.MouseButtonRelease and transcript and not self.view.selector.selecting():
            QTimer.singleShot(0, self._focus_composer_after_click)
        elif (kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and _is_typing(event)
              and (transcript or event.text().strip()) and self.composer.isEnabled()):
            self.composer.input.setFocus()
            QApplication.sendEvent(self.composer.input, event)
            return True
        return super().eventFilter(watched, event)

    def _focus_composer_after_click(self) -> None:
        if not self.view.selector.selecting() and self.composer.isEnabled():
            self.composer.input.setFocus()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape and self.find_bar.isVisible():
            self.find_bar.close_bar()
        elif event.key() == Qt.Key.Key_Escape and self.editing.row is not None:
            self.editing.cancel()
        elif event.key() == Qt.Key.Key_Escape and self._answering():
            self.stop()
        elif event.key() == Qt.Key.Key_Escape:
            self.hide()
        else:
            super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        event.ignore()
        self.hide()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(url.isLocalFile() for url in event.mimeData().urls()) and self.composer.isEnabled():
            event.acceptProposedAction()
            self.composer.show_drop_target(True)

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        self.composer.show_drop_target(False)

    def dropEvent(self, event: QDropEvent) -> None:
        self.composer.show_drop_target(False)
        self.composer.add_files([url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()])
        event.acceptProposedAction()
        self.composer.input.setFocus()


def _is_typing(event: QKeyEvent) -> bool:
    """A key that writes a character (not a shortcut, arrow or page key)."""
    shortcut = event.modifiers() & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
                                    | Qt.KeyboardModifier.MetaModifier)
    return not shortcut and bool(event.text()) and event.text().isprintable()


def _onboarding_panel(bridge: CoreBridge, configured: Callable[[], None]) -> QWidget:
    """The first-run panel (imported only when needed), or a pointer to Settings in builds without it."""
    if importlib.util.find_spec("desktop.ui.onboarding") is not None:
        from desktop.ui.onboarding import OnboardingPanel

        panel = OnboardingPanel(bridge)
        panel.configured.connect(configured)
        return panel
    label = QLabel("No model is configured yet.\nOpen Settings from the tray menu to choose one.")
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setObjectName("hint")
    return label
