"""What will go with the question, shown before it is sent: a chip for each piece of desktop context (text
with its first lines, expandable; a screenshot as a thumbnail; a file by name), each removable. The quick
prompt and the chat composer each hold one, and its `+` button adds to it by mouse.

Text reaches the model quoted under the question (desktop/context/quoting.py). A screenshot goes as an image
only when litellm lists the chat's model as reading images; otherwise its chip says it will not be sent.

Other features add submenus (an MCP server's resources: desktop/ui/context/sources.py). What they offer is
listed when the menu opens and read only when the message is sent: the composer asks `read_first`, which
reads the chips still to be read and sends again once they are."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QAction, QGuiApplication, QImage, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from desktop.agent.attachments import pdf_pages
from desktop.context.captures import keep_capture
from desktop.context.portal import PORTAL, portal_screenshot, screenshot_route
from desktop.context.quoting import Snippet, preview, snippet, with_context
from desktop.context.sources import Fetched, Offer, Source
from desktop.context.vision import sees_images
from desktop.context.x11 import WindowRef, window_behind
from desktop.kernel.paths import home
from desktop.kernel.taskset import spawn
from desktop.ui.bridge import CoreBridge
from desktop.ui.context.capture import grab_screen, grab_window, hidden_while, png_bytes, read_clipboard, read_selection
from desktop.ui.context.region import RegionPicker
from desktop.ui.context.sources import offered
from desktop.ui.plain_text import plain_tip

log = logging.getLogger(__name__)
THUMB_HEIGHT = 56
FULL_HEIGHT = 200  # px of an expanded text chip; a longer text scrolls in it
TITLE = "Window title"
PORTAL_ENTRY = "Screenshot (window or region)…"  # on Wayland: the desktop's dialog offers both
STYLE = """
#contextChip { border: 1px solid palette(midlight); border-radius: 6px; background: palette(base); }
#contextChip #source { font-weight: bold; }
#contextChip #detail { color: palette(placeholder-text); }
#contextChip #warning { color: #c0392b; }
#contextChip QToolButton { border: none; padding: 0 4px; }
"""


class _Chip(QFrame):
    removed = Signal(object)  # the chip

    def __init__(self, source: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextChip")
        self.source = QLabel(source)
        self.source.setObjectName("source")
        self.source.setTextFormat(Qt.TextFormat.PlainText)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Remove: it will not be sent")
        self.close_button.clicked.connect(lambda: self.removed.emit(self))
        self.head = QHBoxLayout()
        self.head.setContentsMargins(0, 0, 0, 0)
        self.head.addWidget(self.source, 1)
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(8, 4, 4, 6)
        self.body.setSpacing(2)


class TextChip(_Chip):
    """A snippet: where it came from and its first lines; "Show all" shows the whole text that will be sent."""

    def __init__(self, item: Snippet, parent: QWidget | None = None) -> None:
        super().__init__(f"{item.source} · {item.lines} line{'s' if item.lines != 1 else ''}", parent)
        self.snippet = item
        self.preview = QLabel(preview(item.text))
        self.preview.setObjectName("detail")
        self.preview.setTextFormat(Qt.TextFormat.PlainText)
        self.full = QPlainTextEdit(item.text)
        self.full.setReadOnly(True)
        line = self.full.fontMetrics().lineSpacing()
        self.full.setFixedHeight(min(FULL_HEIGHT, (item.lines + 2) * line + 8))
        self.full.hide()
        self.expand_button = QToolButton()
        self.expand_button.setText("Show all")
        self.expand_button.setToolTip("Show the whole text that will be sent")
        self.expand_button.clicked.connect(self.toggle)
        self.expand_button.setVisible(preview(item.text) != item.text.strip())
        self.head.addWidget(self.expand_button)
        self.head.addWidget(self.close_button)
        self.body.addLayout(self.head)
        self.body.addWidget(self.preview)
        self.body.addWidget(self.full)

    def toggle(self) -> None:
        expanded = self.full.isHidden()
        self.full.setVisible(expanded)
        self.preview.setVisible(not expanded)
        self.expand_button.setText("Show less" if expanded else "Show all")
        self.body.activate()  # the new height now, for the window that fits itself to it
        self.updateGeometry()


class ImageChip(_Chip):
    """A screenshot: a thumbnail, what it shows, and a warning when the chat's model cannot read images."""

    def __init__(self, path: Path, picture: QPixmap, source: str, parent: QWidget | None = None) -> None:
        super().__init__(source, parent)
        self.path = path
        self.sent = True
        thumb = QLabel()
        thumb.setPixmap(picture.scaledToHeight(THUMB_HEIGHT, Qt.TransformationMode.SmoothTransformation))
        thumb.setToolTip(plain_tip(f"{picture.width()}×{picture.height()} px, kept at {path}"))
        self.size_label = QLabel(f"{picture.width()}×{picture.height()} px")
        self.size_label.setObjectName("detail")
        self.warning = QLabel()
        self.warning.setObjectName("warning")
        self.warning.setWordWrap(True)
        self.warning.hide()
        self.head.addWidget(self.close_button)
        text = QVBoxLayout()
        text.addLayout(self.head)
        text.addWidget(self.size_label)
        text.addWidget(self.warning)
        text.addStretch(1)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(thumb)
        row.addLayout(text, 1)
        self.body.addLayout(row)

    def show_model(self, model: str, sees: bool) -> None:
        """Whether `model` gets the picture, said on the chip before anything is sent."""
        self.warning.setText(no_vision(model, sees))
        self.sent = not self.warning.text()
        self.warning.setVisible(not self.sent)


def no_vision(model: str, sees: bool) -> str:
    """Why a picture will not be sent to `model` ("" when it will); `sees`: whether it reads images."""
    if not model:
        return "No model is set, so this picture will not be sent."
    if not sees:
        return (f"{model} does not read images (as litellm lists it), so this picture will not be sent. Pick a "
                "model that does to send it.")
    return ""


class OfferChip(_Chip):
    """Something another feature offers (an MCP resource): its name, its type, and that it is read when the
    message is sent; a picture says so when the chat's model will not get it."""

    def __init__(self, source: Source, offer: Offer, parent: QWidget | None = None) -> None:
        super().__init__(offer.label, parent)
        self.offer_source = source
        self.offer = offer
        self.sent = True
        self.fetched: Fetched | None = None  # once read, for the message being sent
        self.source.setToolTip(plain_tip(offer.where))  # an MCP server names it, and its type
        self.detail = QLabel(f"{offer.mime_type or 'type not given'} · read when you send")
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setObjectName("detail")
        self.warning = QLabel()
        self.warning.setObjectName("warning")
        self.warning.setWordWrap(True)
        self.warning.hide()
        self.head.addWidget(self.close_button)
        self.body.addLayout(self.head)
        self.body.addWidget(self.detail)
        self.body.addWidget(self.warning)

    def show_model(self, model: str, sees: bool) -> None:
        if self.offer.image:
            self.warning.setText(no_vision(model, sees))
            self.sent = not self.warning.text()
            self.warning.setVisible(not self.sent)

    async def read(self, images: bool) -> None:
        try:
            self.fetched = await self.offer_source.fetch(self.offer, images)
        except Exception as exc:  # a source's fault: the question still goes, saying what did not
            log.exception("reading %s for a message failed", self.offer.label)
            self.fetched = Fetched(notes=[f"[Not attached: {self.offer.label}: it could not be read ({exc}).]"])


class FileChip(_Chip):
    def __init__(self, path: str, label: str = "", parent: QWidget | None = None) -> None:
        """`label`: what the chip calls the file ("Pasted text, 80 lines"); else its name."""
        super().__init__(label or f"File · {os.path.basename(path) or path}", parent)
        self.path = path
        self.source.setToolTip(plain_tip(path))  # a sandboxed command may have named its folders
        self.head.addWidget(self.close_button)
        self.body.addLayout(self.head)


class ContextShelf(QWidget):
    """The chips of one composer (the quick prompt's or the chat's) and the `+` menu that adds to them."""

    changed = Signal()  # a chip came or went: the window fits itself again

    def __init__(self, bridge: CoreBridge, model_picker: QComboBox, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._picker = model_picker
        self.chips: list[_Chip] = []
        self._reading = False  # chips are being read for a message (`read_first`)
        self.setStyleSheet(STYLE)
        self.note = QLabel()  # what could not be added, and why
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # it names resources as their MCP server named them
        self.note.setObjectName("warning")
        self.note.setWordWrap(True)
        self.note.hide()
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self._layout.addWidget(self.note)
        model_picker.currentTextChanged.connect(lambda _text: spawn(self._show_model()))
        self.hide()

    # ----- adding
    def add_snippet(self, item: Snippet) -> None:
        chip = TextChip(item)
        chip.expand_button.clicked.connect(self.changed)  # it grew or shrank: the window fits it
        self._add(chip)

    async def add_picture(self, picture: QPixmap, source: str) -> None:
        """Keep the picture in the data folder (encoded and written off the GUI thread), then show its chip."""
        if picture.isNull():
            self.say("The screenshot came out empty (the window may have closed).")
            return
        image = picture.toImage()
        data = await asyncio.to_thread(png_bytes, image)
        await self._keep_picture(data, ".png", picture, source)

    async def add_picture_file(self, data: bytes, suffix: str, source: str) -> None:
        """A picture another program wrote (the screenshot portal's), kept as it came: read off the GUI thread,
        then the same chip as a screenshot taken here."""
        image = await asyncio.to_thread(QImage.fromData, data)
        if image.isNull():
            self.say("The screenshot the desktop portal gave is not a picture this app can read.")
            return
        await self._keep_picture(data, suffix, QPixmap.fromImage(image), source)

    async def _keep_picture(self, data: bytes, suffix: str, picture: QPixmap, source: str) -> None:
        try:
            path = await asyncio.to_thread(keep_capture, home().data_dir, data, suffix=suffix)
        except OSError as exc:
            self.say(f"The screenshot could not be saved: {exc.strerror or exc}")
            return
        chip = ImageChip(path, picture, source)
        self._add(chip)
        await self._show_model()

    def add_file(self, path: str, label: str = "") -> None:
        chip = FileChip(path, label)
        self._add(chip)
        if not label and os.path.splitext(path)[1].lower() == ".pdf":
            spawn(self._count_pages(chip))

    async def _count_pages(self, chip: FileChip) -> None:
        """A PDF's page count (or why its text cannot be read) on its chip, read off the GUI thread."""
        said = await asyncio.to_thread(pdf_pages, chip.path, self._bridge.workspace)
        if said is not None and isValid(chip.source):
            chip.source.setText(f"{chip.source.text()} · {said}")

    def add_offer(self, source: Source, offer: Offer) -> None:
        chip = OfferChip(source, offer)
        self._add(chip)
        spawn(self._show_model())

    def say(self, text: str) -> None:
        """A line above the chips: what was asked for but could not be added."""
        self.note.setText(text)
        self.note.setVisible(bool(text))
        self.setVisible(bool(self.chips) or bool(text))
        self.changed.emit()

    # ----- sending
    @property
    def empty(self) -> bool:
        return not self.chips

    def read_first(self, send: Callable[[], None]) -> bool:
        """True when chips are still to be read (they are read when the message is sent): they are read now,
        without holding up the window, and `send` is called again once they are; meanwhile the caller sends
        nothing (and a second press of Send while they are read does nothing more)."""
        unread = [c for c in self.chips if isinstance(c, OfferChip) and c.sent and c.fetched is None]
        if not unread:
            return False
        if not self._reading:
            self._reading = True
            spawn(self._read(unread, send))
        return True

    async def _read(self, chips: list[OfferChip], send: Callable[[], None]) -> None:
        self.say(f"Reading {', '.join(chip.offer.label for chip in chips)}…")
        images = await sees_images(self._picker.currentText())
        try:
            await asyncio.gather(*(chip.read(images) for chip in chips))
        finally:
            self._reading = False
        self.say("")
        send()

    def message(self, question: str) -> tuple[str, list[str]]:
        """The text and the files (media) to send for `question` with what the chips hold (those read when the
        message is sent have been: `read_first`)."""
        snippets: list[Snippet] = []
        fetched: list[Fetched] = []
        for chip in self.chips:
            if isinstance(chip, TextChip):
                snippets.append(chip.snippet)
            elif isinstance(chip, OfferChip) and chip.sent and chip.fetched is not None:
                snippets += chip.fetched.snippets
                fetched.append(chip.fetched)
        notes = [note for got in fetched for note in got.notes]  # in the message: the chat shows them too
        text = "\n\n".join(filter(None, [with_context(question, snippets), *notes]))
        media = [str(c.path) for c in self.chips if isinstance(c, ImageChip) and c.sent]
        media += [str(path) for got in fetched for path in got.images]
        media += [c.path for c in self.chips if isinstance(c, FileChip)]
        return text, media

    def summary(self) -> str:
        """What went with the question, in a few words ("with Selected text, a screenshot")."""
        names = []
        for chip in self.chips:
            if isinstance(chip, TextChip):
                names.append(chip.snippet.source)
            elif isinstance(chip, ImageChip) and chip.sent:
                names.append("a screenshot")
            elif isinstance(chip, FileChip):
                names.append(os.path.basename(chip.path))
            elif isinstance(chip, OfferChip) and chip.fetched is not None:
                sent = chip.fetched.snippets or chip.fetched.images
                names.append(chip.offer.label if sent else f"{chip.offer.label} (not sent)")
        return f"with {', '.join(names)}" if names else ""

    def clear(self) -> None:
        for chip in self.chips:
            chip.deleteLater()
        self.chips.clear()
        self.say("")

    # ----- the `+` menu
    def add_button(self, choose_file: Callable[[], None]) -> QToolButton:
        """The `+` button: the same things the hotkeys bring, by mouse, and a file (`choose_file`)."""
        button = QToolButton()
        button.setText("+")
        button.setStyleSheet("QToolButton::menu-indicator { image: none; }")
        button.setToolTip("Add the selection, the clipboard, a screenshot or a file")
        button.setAutoRaise(True)
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(button)
        menu.addAction("Selected text", lambda: self.take(read_selection, "Nothing is selected, and the "
                                                          "clipboard holds no text."))
        menu.addAction("Clipboard", lambda: self.take(read_clipboard, "The clipboard holds no text."))
        screenshot = menu.addAction("Screenshot of a window", lambda: spawn(self.take_screenshot()))
        region = menu.addAction("Pick a region…", lambda: spawn(self.take_region()))
        title = menu.addAction(TITLE, self.take_title)
        files = menu.addSeparator()
        menu.addAction("File…", choose_file)
        submenus: dict[str, _SourceMenu] = {}  # other features' (desktop/ui/context/sources.py), by title

        def named() -> None:
            behind = window_behind()
            shown = f"“{_short(behind.title)}”" if behind is not None and behind.title else "a window"
            title.setText(f"{TITLE}: {shown}" if behind is not None and behind.title else TITLE)
            title.setEnabled(behind is not None)
            portal = screenshot_route() == PORTAL  # the desktop's dialog offers a window or a region: one entry
            screenshot.setText(PORTAL_ENTRY if portal else f"Screenshot of {shown}")
            screenshot.setEnabled(portal or behind is not None)
            region.setVisible(not portal)
            region.setEnabled(QGuiApplication.platformName() == "xcb")
            for source in offered():
                if source.title not in submenus:
                    submenus[source.title] = _SourceMenu(source.title, menu, files, self.add_offer)
                submenus[source.title].refresh(source)
        menu.aboutToShow.connect(named)
        button.setMenu(menu)
        return button

    def take(self, read: Callable[[], Snippet | None], nothing: str) -> None:
        found = read()
        if found is None:
            self.say(nothing)
        else:
            self.add_snippet(found)

    def take_title(self) -> None:
        behind = window_behind()
        if behind is None or not behind.title:
            self.say("No window with a title is open behind this one.")
        else:
            self.add_snippet(snippet(TITLE, behind.title))

    async def take_screenshot(self) -> None:
        """The `+` menu's screenshot: on Wayland through the desktop's own dialog, else of the window behind."""
        if screenshot_route() == PORTAL:
            await self.take_from_portal()
        else:
            await self.take_window()

    async def take_from_portal(self) -> None:
        """Whatever the person picks in the portal's dialog; ours is hidden meanwhile, as on X11, so a picture
        of the whole screen does not have it in front. A cancelled dialog adds nothing and says nothing."""
        async with hidden_while(self.window()):
            shot = await portal_screenshot()
        if not shot.data:
            self.say(shot.problem)
            return
        await self.add_picture_file(shot.data, shot.suffix, "Screenshot")

    async def take_window(self, window: WindowRef | None = None) -> None:
        """A screenshot of `window`, else of the window behind ours; ours is hidden meanwhile."""
        async with hidden_while(self.window()):
            target = window or window_behind()
            picture = grab_window(target.wid) if target is not None else QPixmap()
        if target is None:
            self.say("No window to take a picture of: this needs X11 with a window manager.")
            return
        await self.add_picture(picture, f"Screenshot of “{_short(target.title)}”" if target.title else "Screenshot")

    async def take_region(self) -> None:
        """The person drags a rectangle over the frozen screen; ours is hidden meanwhile."""
        async with hidden_while(self.window()):
            screen, origin = grab_screen()
            picked = None if screen.isNull() else await pick_region(screen, origin)
        if picked is not None:
            await self.add_picture(picked, "Region of the screen")

    # ----- inside
    def _add(self, chip: _Chip) -> None:
        chip.removed.connect(self._remove)
        self.chips.append(chip)
        self._layout.addWidget(chip)
        self.say("")

    def _remove(self, chip: _Chip) -> None:
        if chip in self.chips:
            self.chips.remove(chip)
        chip.deleteLater()
        self.say("")

    async def _show_model(self) -> None:
        """Say on each picture's chip whether the chat's model will get it (litellm's list, in the model
        helper: asked once per model)."""
        model = self._picker.currentText()
        sees = await sees_images(model)
        if not isValid(self) or model != self._picker.currentText():
            return  # closed meanwhile, or another model was picked (its own call says)
        for chip in self.chips:
            if isinstance(chip, ImageChip | OfferChip):
                chip.show_model(model, sees)
        self.changed.emit()


class _SourceMenu:
    """One source's submenu in a `+` menu: there only while the source has something to offer, and listed
    afresh each time the menu opens (a line saying so while the listing comes)."""

    def __init__(self, title: str, menu: QMenu, before: QAction, choose: Callable[[Source, Offer], None]) -> None:
        self.menu = QMenu(title, menu)
        menu.insertMenu(before, self.menu)
        self._choose = choose
        self._asked = 0  # the latest listing asked for: an older one that comes late is dropped

    def refresh(self, source: Source) -> None:
        shown = source.available()
        self.menu.menuAction().setVisible(shown)
        if not shown:
            return
        self._asked += 1
        self.menu.clear()
        self.menu.addAction(source.waiting).setEnabled(False)
        spawn(self._fill(source, self._asked))

    async def _fill(self, source: Source, asked: int) -> None:
        listing = await source.listing()
        if asked != self._asked or not isValid(self.menu):  # opened again meanwhile, or its window is gone
            return
        self.menu.clear()
        for offer in listing.offers:
            self.menu.addAction(offer.label, self._chosen(source, offer)).setToolTip(plain_tip(offer.where))
        for note in listing.notes:
            self.menu.addAction(note).setEnabled(False)

    def _chosen(self, source: Source, offer: Offer) -> Callable[[], None]:
        return lambda: self._choose(source, offer)


async def pick_region(screen: QPixmap, origin: QPoint) -> QPixmap | None:
    """Show the picker over `screen` and wait for the rectangle (None: cancelled)."""
    done: asyncio.Future[QPixmap | None] = asyncio.get_running_loop().create_future()
    picker = RegionPicker(screen, origin)

    def settle(region: QPixmap | None) -> None:
        if not done.done():
            done.set_result(region)

    picker.picked.connect(settle)
    picker.cancelled.connect(lambda: settle(None))
    picker.destroyed.connect(lambda: settle(None))
    picker.show()
    picker.raise_()
    picker.activateWindow()
    return await done


def _short(title: str, limit: int = 48) -> str:
    return title if len(title) <= limit else title[:limit - 1] + "…"
