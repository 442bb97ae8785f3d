"""The quick prompt: a Spotlight-like popup to ask one thing and read the answer as it streams. Ctrl+V of a
picture, of copied files or of a long text attaches it, as in the chat's message box (desktop/ui/chat/pasted.py)."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import html
import uuid

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QCursor,
    QFont,
    QGuiApplication,
    QImage,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPixmap,
    QRegion,
    QTextBlockFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QFileDialog, QFrame, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from desktop.agent.attachments import problem as attachment_problem
from desktop.conversation.transcript import CUT_OFF, Kind, Transcript
from desktop.kernel.bus import Event
from desktop.kernel.channels import Channel, channel_of, session_key
from desktop.kernel.paths import home
from desktop.kernel.taskset import spawn
from desktop.ui.approvals.cards import ApprovalCards
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat import pasted
from desktop.ui.chat.draft_keeper import DraftKeeper
from desktop.ui.chat.model_picker import ModelPicker
from desktop.ui.context.shelf import ContextShelf
from desktop.ui.links import open_link
from desktop.ui.markdown import MarkdownBrowser
from desktop.ui.voice.dictate import Dictate

WIDTH = 680
SHADOW = 16  # px around the card for its shadow, where the desktop composites translucent windows
RADIUS = 12  # as in STYLE's #card
HINT = "Enter to ask  ·  Ctrl+Enter to continue in chat  ·  Esc to close"
OFFER = "<a href='continue'>↩ Continue the last quick chat</a>  (Ctrl+↑)"
CONTINUING = "Continuing {what}  ·  <a href='new'>New</a>  (Ctrl+N)"

STYLE = """
#card { background: palette(window); border: 1px solid EDGE; border-radius: 12px; }
#card QLineEdit { border: none; background: transparent; padding: 6px 4px; }
#card #glyph { color: palette(highlight); }
#card #question, #card #context { color: palette(placeholder-text); }
#card QTextBrowser { border: none; background: transparent; }
#card #status { color: palette(placeholder-text); }
#card #status[error="true"] { color: #c0392b; }
#card #rule { color: palette(midlight); }
"""


STILL_ANSWERING = "An answer is still coming: Enter asks this once it is done, Esc stops it."


def new_quick_key() -> str:
    return session_key(Channel.QUICK, uuid.uuid4().hex[:8])


class QuickPrompt(QWidget):
    """Frameless and always on top; Esc stops a running answer, else closes. Answers stream inline; the
    conversation lives in a normal session, so "Open in chat" simply shows that session in the chat window.
    Each hotkey press starts a new quick chat (offering to continue the last one), so an unrelated question
    never drags old context along.

    It draws a rounded card with a border; where the desktop composites translucent windows, also a shadow
    around it, so it stands out over whatever is under it in light and dark themes."""

    open_in_chat = Signal(str, str, list)  # session key, and text and files for the chat window to send there
    settings_requested = Signal()  # the app opens Settings (a failed answer whose cure is there)

    def __init__(self, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        flags = Qt.WindowType.Tool | Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint
        super().__init__(parent, flags)
        self.bridge = bridge
        self.session_key = new_quick_key()
        self._last_quick = ""  # the quick chat asked in last, offered to continue
        self._continuing = False
        self.turn = Transcript()  # the rows of the answer shown, from this chat's events
        self._streamed = ""  # the answer as shown (Markdown)
        self._failed = False  # the turn that just failed, which Retry asks again
        self._asked: tuple[str, list[str]] = ("", [])  # the message last sent, with its files
        self._dialog: QFileDialog | None = None
        self.setObjectName("QuickPrompt")
        self.setWindowTitle("Quick prompt")
        self._shadow = SHADOW if composited() else 0
        if self._shadow:
            self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground, True)
        self.card = QFrame(self)
        self.card.setObjectName("card")
        self.card.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(STYLE.replace("EDGE", edge_colour(self.palette()).name()))
        self.setFixedWidth(WIDTH + 2 * self._shadow)

        glyph = QLabel("✦")
        glyph.setObjectName("glyph")
        glyph.setFont(_scaled(self.font(), 1.5))
        self.input = QLineEdit()
        self.input.setFont(_scaled(self.font(), 1.55))
        self.input.setPlaceholderText("Ask anything…")
        self.input.installEventFilter(self)
        DraftKeeper("quick", self.input.text, self.input.textChanged,
                    lambda kept: None if self.input.text() else self.input.setText(kept), self)
        top = QHBoxLayout()
        top.setContentsMargins(14, 8, 14, 8)
        top.setSpacing(8)
        top.addWidget(glyph)
        top.addWidget(self.input, 1)
        self.model_picker = ModelPicker(bridge)  # the model of this quick chat
        self.shelf = ContextShelf(bridge, self.model_picker)  # what goes with the question (desktop/ui/context)
        self.shelf.setContentsMargins(18, 0, 18, 6)
        self.shelf.changed.connect(self._fit)
        top.addWidget(self.shelf.add_button(self.choose_file))
        self.dictate = Dictate(bridge, self)  # the microphone (desktop/ui/voice)
        self.dictate.heard.connect(self._dictated)
        self.dictate.changed.connect(self._fit)
        self.dictate.settings_requested.connect(self._open_settings)
        self.dictate.bar.setContentsMargins(18, 0, 18, 6)
        top.addWidget(self.dictate.button)
        top.addWidget(self.model_picker)
        self.context = QLabel()  # continue the last quick chat, or start a new one
        self.context.setObjectName("context")
        self.context.setFont(_scaled(self.font(), 0.9))
        self.context.setContentsMargins(18, 0, 18, 6)
        self.context.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.context.linkActivated.connect(lambda link: self.continue_last() if link == "continue"
                                           else self.start_new())

        self.rule = QFrame()
        self.rule.setObjectName("rule")
        self.rule.setFrameShape(QFrame.Shape.HLine)
        self.question = QLabel()
        self.question.setObjectName("question")
        self.question.setWordWrap(True)
        self.question.setTextFormat(Qt.TextFormat.PlainText)  # the person's words as typed: "<b>" is not markup
        self.answer = MarkdownBrowser()  # the answer's Markdown may name files: it loads none
        self.answer.anchorClicked.connect(lambda url: open_link(url, self.bridge.workspace))
        self.answer.setFrameShape(QFrame.Shape.NoFrame)
        self.answer.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.answer.document().setDocumentMargin(0)

        self.status = QLabel(HINT)
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # it quotes a server's error, a tool's title: not markup
        self.status.setObjectName("status")
        self.status.setFont(_scaled(self.font(), 0.9))
        self.open_button = QPushButton("Open in chat")
        self.open_button.setToolTip("Continue this conversation in the chat window (Ctrl+Enter)")
        self.open_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.open_button.clicked.connect(lambda: self.continue_in_chat())
        self.stop_button = QPushButton("Stop (Esc)")  # the status line says what runs: the button names the key
        self.stop_button.setToolTip("Stop the answer; what came so far is kept")
        self.stop_button.clicked.connect(self.stop)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the answer as Markdown")
        self.copy_button.clicked.connect(self.copy_answer)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setToolTip("Ask the same question again in place of the failed answer")
        self.retry_button.clicked.connect(self.retry)
        self.settings_button = QPushButton("Open Settings")
        self.settings_button.clicked.connect(self._open_settings)
        footer = QHBoxLayout()
        footer.setContentsMargins(0, 0, 0, 0)
        footer.addWidget(self.status, 1)
        footer.addWidget(self.retry_button)
        footer.addWidget(self.settings_button)
        footer.addWidget(self.stop_button)
        footer.addWidget(self.copy_button)
        footer.addWidget(self.open_button)

        body = QVBoxLayout()
        body.setContentsMargins(18, 0, 18, 12)
        body.setSpacing(6)
        body.addWidget(self.question)
        body.addWidget(self.answer)
        self.approvals = ApprovalCards(bridge, with_background=False)  # questions before a tool runs
        self.approvals.changed.connect(self._fit)
        self.approvals.focus_freed.connect(self.input.setFocus)
        body.addWidget(self.approvals)
        body.addLayout(footer)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(*[self._shadow] * 4)
        outer.addWidget(self.card)
        self._layout = QVBoxLayout(self.card)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)
        self._layout.addLayout(top)
        self._layout.addWidget(self.dictate.bar)
        self._layout.addWidget(self.shelf)
        self._layout.addWidget(self.context)
        self._layout.addWidget(self.rule)
        self._layout.addLayout(body)
        self._start(self.session_key, continuing=False)
        bridge.event.connect(self._on_event)
        spawn(self._find_last_quick())

    async def _find_last_quick(self) -> None:
        """After a restart, the newest saved quick chat is the one offered to continue."""
        chats = await self.bridge.list_chats()  # most recently active first
        latest = next((info.key for info in chats if channel_of(info.key) is Channel.QUICK), "")
        if latest and not self._last_quick:
            self._last_quick = latest
            if not self._continuing and self.question.isHidden():
                self._start(self.session_key, continuing=False)  # now with the offer

    # ----- what the app calls
    def popup(self, text: str = "", session_key: str | None = None) -> None:
        """Show centred on the screen under the mouse, optionally pre-filled: in a new quick chat, or in
        `session_key` when opened from a chat. While an answer streams it comes back as it was. A question written
        but not asked comes back selected: typing a new one, or `text`, replaces it (Ctrl+Z brings it back)."""
        if session_key is not None and (session_key != self.session_key or not self._busy):
            self._start(session_key, continuing=True)
        elif session_key is None and not self._busy:
            self._start(new_quick_key(), continuing=False)
        if text:  # in place of a question being written, as typing over it would be: Ctrl+Z gives it back
            self.input.selectAll()
            self.input.insert(text)
        self.input.end(False)
        if not text and self.input.text():
            self.input.selectAll()
        self._place()
        self.show()
        self.raise_()
        self.activateWindow()
        self.input.setFocus(Qt.FocusReason.PopupFocusReason)

    def continue_last(self) -> None:
        """Ask the next question in the last quick chat, with what was said there."""
        if self._last_quick and not self._busy:
            self._start(self._last_quick, continuing=True)
            self.input.setFocus()

    def start_new(self) -> None:
        if not self._busy:
            self._start(new_quick_key(), continuing=False)
            self.input.setFocus()

    def submit(self) -> None:
        if self._busy:  # asked now, it would be answered under this question's answer: kept in the field instead
            self.shelf.say(STILL_ANSWERING)
            return
        text = self.input.text().strip()
        if self.shelf.read_first(self.submit):
            return  # sent once what is read when sent (an MCP resource) has been
        message, media = self.shelf.message(text)
        if not message and not media:
            return
        if channel_of(self.session_key) is Channel.QUICK:
            self._last_quick = self.session_key
        if not self._continuing:
            self.context.hide()  # the question shown below says what this chat is about
        self.input.clear()
        self._failed = False
        self.question.setText("\n".join(filter(None, [text, self.shelf.summary()])))
        self.shelf.clear()
        self.question.show()
        self._begin_answer()
        self.open_button.show()
        self.rule.show()
        self._asked = (message, media)
        self.bridge.send(self.session_key, message, media)
        self._fit()

    def _dictated(self, text: str, send: bool) -> None:
        """What was said lands where the cursor is, to edit before asking; or is asked at once."""
        before = self.input.text()[:self.input.cursorPosition()]
        self.input.insert(text if not before or before[-1].isspace() else f" {text}")
        self.input.setFocus()
        if send:
            self.submit()

    def continue_in_chat(self) -> None:
        """Hand the conversation to the chat window, with what is typed and attached for it to send: sent from
        there, the question shows in its transcript before the answer."""
        if self.shelf.read_first(self.continue_in_chat):
            return  # handed over once what is read when sent (an MCP resource) has been
        text = self.input.text().strip()
        message, media = self.shelf.message(text)
        self.input.clear()
        self.shelf.clear()
        self.hide()
        self.open_in_chat.emit(self.session_key, message, media)

    def choose_file(self) -> None:
        """Attach a file from the `+` menu: a non-modal dialog (no nested event loop on the qasync loop)."""
        if self._dialog is None:
            self._dialog = QFileDialog(self, "Attach a file")
            self._dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
            self._dialog.filesSelected.connect(self._add_files)
        self._dialog.open()

    def _add_files(self, paths: list[str]) -> None:
        refused = []
        for path in paths:
            wrong = attachment_problem(path)
            if wrong:
                refused.append(wrong)
            else:
                self.shelf.add_file(path)
        if refused:
            self.shelf.say(f"Not attached: {'; '.join(refused)}")
        self.input.setFocus()

    def paste(self) -> bool:
        """Ctrl+V: copied files, a picture or a long text attach (a picture with its thumbnail, a long text as
        "Pasted text, N lines", kept as a file in the data folder); False for a few lines, which are typed in."""
        found = pasted.attachable(QGuiApplication.clipboard().mimeData())
        if isinstance(found, list):
            self._add_files(found)
        elif isinstance(found, QImage):
            spawn(self.shelf.add_picture(QPixmap.fromImage(found), "Pasted picture"))
        elif found is not None:
            spawn(self._paste_text(found))
        return found is not None

    async def _paste_text(self, text: str) -> None:
        try:
            path = await asyncio.to_thread(pasted.save_text, text, home().pasted_dir)
        except OSError as exc:
            self.shelf.say(f"The pasted text could not be kept: {exc.strerror or exc}")
            return
        self.shelf.add_file(str(path), pasted.text_label(text))

    def stop(self) -> None:
        if self._busy:
            self.bridge.stop(self.session_key)
        self.input.setFocus()

    def retry(self) -> None:
        """Ask the failed question again; the failed turn is replaced, not followed by a second question."""
        if not self._failed or self._busy:
            return
        self._failed = False
        self._begin_answer()
        self.bridge.send(self.session_key, *self._asked, redo=True)
        self.input.setFocus()

    @property
    def _busy(self) -> bool:
        return self.turn.busy

    def _begin_answer(self) -> None:
        self.turn = Transcript()
        self.turn.busy = True  # from the send on, though the turn's start is yet to be heard
        self._streamed = ""
        self.answer.clear()
        self.answer.hide()
        self._set_status("Thinking…")

    def _open_settings(self) -> None:
        self.hide()
        self.settings_requested.emit()

    def copy_answer(self) -> None:
        if self._streamed:
            QGuiApplication.clipboard().setText(self._streamed)
            self._set_status("Copied")
        self.input.setFocus()

    # ----- events
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            key_event: QKeyEvent = event  # type: ignore[assignment]
            ctrl = bool(key_event.modifiers() & Qt.KeyboardModifier.ControlModifier)
            if key_event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if ctrl:
                    self.continue_in_chat()
                else:
                    self.submit()
                return True
            if ctrl and key_event.key() == Qt.Key.Key_Up:
                self.continue_last()
                return True
            if ctrl and key_event.key() == Qt.Key.Key_N:
                self.start_new()
                return True
            if key_event.matches(QKeySequence.StandardKey.Paste) and self.paste():
                return True
        return super().eventFilter(watched, event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape and self._busy:
            self.stop()
        elif event.key() == Qt.Key.Key_Escape:
            self.hide()
        elif (event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
              and event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            self.continue_in_chat()
        else:
            super().keyPressEvent(event)

    def _on_event(self, event: Event) -> None:
        if getattr(event, "session_key", None) != self.session_key:
            return
        was_busy = self._busy
        self.turn.apply(event)
        answer = self.turn.last_answer()
        failed = self.turn.rows[-1] if self.turn.rows and self.turn.rows[-1].kind is Kind.ERROR else None
        if answer is not None and answer.text != self._streamed:
            self._streamed = answer.text
            self._show_answer(answer.text)
        if self._busy:
            self._set_status(activity(self.turn))
            return
        if not was_busy:  # the status line keeps what it says ("Copied") until a turn runs
            return
        if self.shelf.note.text() == STILL_ANSWERING:  # the question kept in the field can be asked now
            self.shelf.say("")
        if failed is not None:
            self._failed = True
            if answer is not None and answer.cut_off:  # what was read so far stays, marked as not whole, as in the chat
                self._show_answer(f"{answer.text}\n\n*{CUT_OFF}*")
            self._set_status(failed.text, error=True, fix_in_settings=failed.fix_in_settings)
        else:
            self._set_status("Stopped" if self.turn.stopped else "Done")

    # ----- look
    def _start(self, key: str, continuing: bool) -> None:
        self.session_key = key
        self._continuing = continuing
        self.turn = Transcript()
        self._reset()
        self.approvals.show_session(key)
        self.model_picker.show_chat(key)
        if continuing:
            quick = channel_of(key) is Channel.QUICK
            what = "the last quick chat" if quick else f"“{html.escape(self.bridge.session_title(key))}”"
            self.context.setText(CONTINUING.format(what=what))
        else:
            self.context.setText(OFFER if self._last_quick else "")
        self.context.setVisible(bool(self.context.text()))
        self._fit()

    def paintEvent(self, event: QPaintEvent) -> None:
        """The shadow: nested rounded rectangles of one faint colour, so it darkens towards the card (cheaper than
        a graphics effect on the streaming answer)."""
        if not self._shadow:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        card = QRectF(self.card.geometry()).translated(0, 4)
        painter.setBrush(QColor(0, 0, 0, 5))
        for step in range(self._shadow, 0, -1):
            painter.drawRoundedRect(card.adjusted(-step, -step, step, step), RADIUS + step, RADIUS + step)
        painter.end()

    def _reset(self) -> None:
        """Clear what the last chat showed. What is being written (the text, its chips) stays: it is cleared only
        when asked or carried to the chat window, so hiding the prompt or switching its chat never loses it."""
        self.question.clear()
        self.question.hide()
        self.answer.clear()
        self.answer.hide()
        self.rule.hide()
        self.open_button.hide()
        self._streamed = ""
        self._failed = False
        self._set_status(HINT)

    def _show_answer(self, markdown: str) -> None:
        self.answer.setMarkdown(markdown)
        _shade_code_blocks(self.answer.document(), self.palette().alternateBase().color())
        self.answer.show()
        self._fit()

    def _set_status(self, text: str, error: bool = False, fix_in_settings: bool = False) -> None:
        self.retry_button.setVisible(bool(self._failed) and not self._busy)
        self.settings_button.setVisible(fix_in_settings)
        self.stop_button.setVisible(self._busy)
        self.copy_button.setVisible(not self._busy and bool(self._streamed))
        self.status.setText(text)
        self.status.setWordWrap(error)
        self.status.setProperty("error", error)
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)
        self._fit()

    def _fit(self) -> None:
        """Grow with the answer up to half the screen; the top edge stays put while it streams."""
        if not self.answer.isHidden():
            doc = self.answer.document()
            doc.setTextWidth(self.answer.viewport().width() or WIDTH - 40)
            limit = int(self._screen_rect().height() * 0.5)
            needed = int(doc.size().height()) + 6
            self.answer.setFixedHeight(max(24, min(needed, limit)))
            policy = Qt.ScrollBarPolicy.ScrollBarAsNeeded if needed > limit else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
            self.answer.setVerticalScrollBarPolicy(policy)
        self._layout.invalidate()
        self._layout.activate()
        # a wrapped line (a chip's note, a dictation problem) is as tall as it is at the card's own width
        height = (self._layout.totalHeightForWidth(WIDTH) if self._layout.hasHeightForWidth()
                  else self._layout.sizeHint().height())
        self.resize(WIDTH + 2 * self._shadow, height + 2 * self._shadow)
        if not self._shadow:  # no compositor: round the corners with a mask
            path = QPainterPath()
            path.addRoundedRect(QRectF(self.rect()), RADIUS, RADIUS)
            self.setMask(QRegion(path.toFillPolygon().toPolygon()))

    def _screen_rect(self) -> QRect:
        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        return screen.availableGeometry()

    def _place(self) -> None:
        self._fit()
        area = self._screen_rect()
        self.move(QPoint(area.center().x() - self.width() // 2, area.top() + int(area.height() * 0.22) - self._shadow))


def activity(turn: Transcript) -> str:
    """What the running turn does now, for the status line: the rows it has added so far say it."""
    last = turn.rows[-1] if turn.rows else None
    if turn.progress:
        return turn.progress
    if last is not None and last.kind is Kind.ASSISTANT:
        return "Answering…"
    if last is not None and last.kind is Kind.REASONING:
        return "Reasoning…"
    if last is not None and last.tool is not None:
        return f"Using {last.tool.title}…"
    return "Thinking…"


def edge_colour(palette: QPalette) -> QColor:
    """The card's 1 px border: a third of the way from its background to its text, so it stands out in light
    and dark themes alike (a dark theme's palette(dark) is about its window colour, and without a compositor
    there is no shadow to show the card's edge)."""
    back, text = palette.window().color(), palette.windowText().color()
    return QColor.fromRgbF(*(b + (t - b) / 3 for b, t in ((back.redF(), text.redF()), (back.greenF(), text.greenF()),
                                                          (back.blueF(), text.blueF()))))


def composited() -> bool:
    """Whether translucent windows show what is under them: always on Wayland, Windows and macOS; on X11
    only while a compositing manager owns the _NET_WM_CM_Sn selection (else they show black)."""
    if QGuiApplication.platformName() != "xcb":
        return QGuiApplication.platformName() not in ("offscreen", "minimal")
    name = ctypes.util.find_library("X11")
    if name is None:
        return False
    x11 = ctypes.CDLL(name)
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XInternAtom.restype = ctypes.c_ulong
    x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x11.XGetSelectionOwner.restype = ctypes.c_ulong
    x11.XGetSelectionOwner.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
    x11.XDefaultScreen.argtypes = [ctypes.c_void_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    display = x11.XOpenDisplay(None)
    if not display:
        return False
    try:
        atom = x11.XInternAtom(display, f"_NET_WM_CM_S{x11.XDefaultScreen(display)}".encode(), 0)
        return bool(x11.XGetSelectionOwner(display, atom))
    finally:
        x11.XCloseDisplay(display)


def _shade_code_blocks(doc: QTextDocument, colour: QColor) -> None:
    """Markdown import marks fenced code but draws it unshaded; give it a background like a code view."""
    shade = QTextBlockFormat()
    shade.setBackground(colour)
    shade.setLeftMargin(6)
    block = doc.begin()
    while block.isValid():
        if block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence):
            QTextCursor(block).mergeBlockFormat(shade)
        block = block.next()


def _scaled(font: QFont, factor: float) -> QFont:
    scaled = QFont(font)
    scaled.setPointSizeF(max(6.0, font.pointSizeF() * factor))
    return scaled
