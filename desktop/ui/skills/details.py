"""The right-hand side of the skills window: a skill's details (rendered SKILL.md) and the editor."""

from __future__ import annotations

import html
import re
from pathlib import Path

from PySide6.QtCore import QRegularExpression, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QKeySequence,
    QShortcut,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from desktop.skills.frontmatter import ERROR, Diagnostic, SkillDoc, parse_skill_text
from desktop.skills.loader import SkillStatus
from desktop.ui.markdown import MarkdownBrowser, prose_document
from desktop.ui.plain_text import plain_tip
from desktop.ui.skills.avatar import avatar_pixmap
from desktop.ui.skills.model import AMBER, GREEN, GREY, RED, SOURCE_COLORS, SOURCE_LABELS

VALIDATE_DELAY_MS = 300
_KIND = {"CLI": "program on PATH", "ENV": "environment variable", "OS": "operating system"}


class Notice(QFrame):
    """A tinted box with an icon and rich text: requirements, diagnostics, read-only notes."""

    ICONS = {RED: QStyle.StandardPixmap.SP_MessageBoxCritical, AMBER: QStyle.StandardPixmap.SP_MessageBoxWarning,
             GREEN: QStyle.StandardPixmap.SP_DialogApplyButton, GREY: QStyle.StandardPixmap.SP_MessageBoxInformation}

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notice")
        self.icon = QLabel()
        self.icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.label.setOpenExternalLinks(True)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 8, 10, 8)
        row.setSpacing(8)
        row.addWidget(self.icon)
        row.addWidget(self.label, 1)
        self.hide()

    def show_html(self, color: str, text: str) -> None:
        tint = QColor(color)
        self.setStyleSheet(f"#notice {{ background: rgba({tint.red()},{tint.green()},{tint.blue()},26);"
                           f" border: 1px solid rgba({tint.red()},{tint.green()},{tint.blue()},90);"
                           " border-radius: 7px; }")
        self.icon.setPixmap(self.style().standardIcon(self.ICONS[color]).pixmap(18, 18))
        self.label.setText(text)
        self.show()

    def text(self) -> str:
        """What the notice says, as plain text ("" while hidden)."""
        return "" if self.isHidden() else _plain(self.label.text())


def _short_path(path: Path) -> str:
    """The path with the home folder as ~, as people read it."""
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def _plain(rich: str) -> str:
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText()


def diagnostics_html(diagnostics: tuple[Diagnostic, ...]) -> tuple[str, str]:
    """(colour, html) for a list of diagnostics; errors first."""
    ordered = sorted(diagnostics, key=lambda d: d.level != ERROR)
    errors = any(d.level == ERROR for d in diagnostics)
    head = ("<b>This SKILL.md cannot be loaded</b>; the assistant skips it until this is fixed:" if errors
            else "<b>Loaded, with warnings</b> (the Agent Skills format asks for this):")
    items = "".join(f"<li><span style='color:{RED if d.level == ERROR else AMBER}'>{d.level.capitalize()}:</span> "
                    f"{html.escape(d.message)}</li>" for d in ordered)
    return (RED if errors else AMBER), f"{head}<ul style='margin:2px 0 0 -20px'>{items}</ul>"


class SkillDetails(QWidget):
    """One skill: header, requirements, diagnostics, actions and the SKILL.md body as Markdown."""

    enable_clicked = Signal(bool)
    edit_requested = Signal()
    copy_requested = Signal()
    reveal_requested = Signal()
    uninstall_requested = Signal()
    link_clicked = Signal(QUrl)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status: SkillStatus | None = None
        self._rendered: QTextDocument | None = None
        self.emoji = QLabel()
        self.emoji.setFixedSize(52, 52)
        self.emoji.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title = QLabel()
        title_font = QFont(self.font())
        # A workspace skill's name and description are a sandboxed command's to write: as markup, a picture they
        # spell (<img src="...">) would be a file Qt reads as the skill is shown, and a named pipe would freeze it
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        title_font.setPointSizeF(self.font().pointSizeF() * 1.45)
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.subtitle = QLabel()
        self.subtitle.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.subtitle.setWordWrap(True)
        self.enabled_box = QCheckBox("Enabled")
        self.enabled_box.setToolTip("Disabled skills are left out of the assistant's prompt "
                                    "(saved as skills.disabled in config.yaml); applies from the next message.")
        self.enabled_box.clicked.connect(self.enable_clicked)
        self.description = QLabel()
        self.description.setTextFormat(Qt.TextFormat.PlainText)  # a command's words, as the title
        self.description.setWordWrap(True)
        self.description.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.facts = QLabel()
        self.facts.setTextFormat(Qt.TextFormat.RichText)
        self.facts.linkActivated.connect(lambda link: self.link_clicked.emit(QUrl(link)))
        self.requirements = Notice()
        self.diagnostics = Notice()
        self.note = Notice()
        self.edit_button = QPushButton("Edit")
        self.edit_button.clicked.connect(self.edit_requested)
        self.copy_button = QPushButton("Copy to workspace to customise")
        self.copy_button.clicked.connect(self.copy_requested)
        self.reveal_button = QPushButton("Reveal in file manager")
        self.reveal_button.clicked.connect(self.reveal_requested)
        self.uninstall_button = QPushButton("Uninstall…")
        self.uninstall_button.setToolTip("Moves the skill's folder to skills/.trash in your workspace")
        self.uninstall_button.clicked.connect(self.uninstall_requested)
        self.body = MarkdownBrowser()
        self.body.anchorClicked.connect(self.link_clicked)
        self.body.setFrameShape(QFrame.Shape.NoFrame)

        header = QHBoxLayout()
        header.setSpacing(12)
        header.addWidget(self.emoji, 0, Qt.AlignmentFlag.AlignTop)
        names = QVBoxLayout()
        names.setSpacing(2)
        names.addWidget(self.title)
        names.addWidget(self.subtitle)
        header.addLayout(names, 1)
        header.addWidget(self.enabled_box, 0, Qt.AlignmentFlag.AlignTop)
        actions = QHBoxLayout()
        for button in (self.edit_button, self.copy_button, self.reveal_button):
            actions.addWidget(button)
        actions.addStretch(1)
        actions.addWidget(self.uninstall_button)
        body_frame = QFrame()
        body_frame.setObjectName("skillBody")
        body_frame.setStyleSheet("#skillBody { border: 1px solid palette(mid); border-radius: 7px;"
                                 " background: palette(base); }")
        inner = QVBoxLayout(body_frame)
        inner.setContentsMargins(1, 1, 1, 1)
        inner.addWidget(self.body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 14)
        layout.setSpacing(10)
        layout.addLayout(header)
        layout.addWidget(self.description)
        layout.addWidget(self.facts)
        for notice in (self.requirements, self.diagnostics, self.note):
            layout.addWidget(notice)
        layout.addLayout(actions)
        layout.addWidget(body_frame, 1)

    def show_status(self, status: SkillStatus) -> None:
        self.status = status
        doc = status.doc
        self.emoji.setPixmap(avatar_pixmap(52, status.name, doc.emoji, self.palette(), self.devicePixelRatioF()))
        self.title.setText(status.name)
        source = SOURCE_LABELS.get(status.source, status.source)
        self.subtitle.setText(f"<span style='color:{SOURCE_COLORS.get(status.source, GREY)}'><b>{source}</b></span>"
                              f" &nbsp;·&nbsp; <span style='color:{GREY}'>{html.escape(_short_path(doc.path))}</span>")
        self.subtitle.setToolTip(plain_tip(str(doc.path)))  # a command may have named its folder
        self.enabled_box.setChecked(status.enabled)
        self.description.setText(doc.description or "(no description)")
        self.description.setVisible(doc.loadable)
        self.facts.setText(self._facts(status))
        self.facts.setVisible(doc.loadable)
        self._show_requirements(status)
        if doc.diagnostics:
            self.diagnostics.show_html(*diagnostics_html(doc.diagnostics))
        else:
            self.diagnostics.hide()
        self._show_note(status)
        writable = status.source == "workspace"
        self.edit_button.setVisible(writable)
        self.uninstall_button.setVisible(writable)
        self.copy_button.setVisible(not writable and status.shadowed_by is None)
        text = doc.body or ("*This SKILL.md has no instructions to show.*" if doc.loadable else
                            "*Nothing to show until the problem above is fixed.*")
        folder = doc.path.parent  # pictures the body names come from the skill's own folder, and only from it
        rendered = prose_document(text, self.body.font(), self.body.palette(), self.body.viewport().width(),
                                  (folder, ""))
        rendered.setDocumentMargin(14)
        rendered.setParent(self.body)  # kept alive by the view, not by Python
        self.body.setDocument(rendered)
        if self._rendered is not None:
            self._rendered.deleteLater()
        self._rendered = rendered

    @staticmethod
    def _facts(status: SkillStatus) -> str:
        doc = status.doc
        parts = [f"<span style='color:{GREEN}'>● Available</span>" if status.available
                 else f"<span style='color:{AMBER}'>● Unavailable on this computer</span>"]
        if doc.always:
            parts.append(f"<span style='color:{GREEN}'>Always on</span>: the whole text is in every prompt")
        else:
            parts.append("Read on demand")
        needs = [*doc.bins, *(f"${e}" for e in doc.env)]
        if needs:
            parts.append("Requires " + ", ".join(f"<code>{html.escape(n)}</code>" for n in needs))
        if doc.homepage:
            parts.append(f"<a href='{html.escape(doc.homepage)}'>Homepage</a>")
        if not status.enabled:
            parts.append(f"<span style='color:{GREY}'>Disabled</span>")
        return " &nbsp;·&nbsp; ".join(parts)

    def _show_requirements(self, status: SkillStatus) -> None:
        if not status.missing:
            self.requirements.hide()
            return
        missing = "".join(f"<li><code>{html.escape(what)}</code> ({_KIND.get(kind, kind)})</li>"
                          for kind, _, what in (m.partition(": ") for m in status.missing))
        text = f"<b>Missing requirements</b><ul style='margin:2px 0 0 -20px'>{missing}</ul>"
        if status.doc.install:
            hints = "".join(f"<li>{html.escape(h)}</li>" for h in status.doc.install)
            text += f"<b>How to install</b><ul style='margin:2px 0 0 -20px'>{hints}</ul>"
        text += "The assistant still sees this skill and can tell you what to install."
        self.requirements.show_html(AMBER, text)

    def _show_note(self, status: SkillStatus) -> None:
        if status.shadowed_by:
            self.note.show_html(GREY, f"Your {SOURCE_LABELS.get(status.shadowed_by, status.shadowed_by)} copy of "
                                      f"<b>{html.escape(status.name)}</b> overrides this one; edit that copy instead.")
        elif status.source == "builtin":
            self.note.show_html(GREY, "Built-in skills ship with the app and are read-only. Copy it to your "
                                      "workspace to customise it: your copy then replaces the built-in one.")
        elif status.source == "user":
            self.note.show_html(GREY, "This skill lives in <code>~/.agents/skills</code>, shared with other AI "
                                      "tools, and is read-only here. Copy it to your workspace to customise it.")
        else:
            self.note.hide()


class FrontmatterHighlighter(QSyntaxHighlighter):
    """Colours the YAML frontmatter's fences and keys, and Markdown headings, in the editor."""

    _KEY = QRegularExpression(r"^\s*[\w-]+(?=:)")
    _IN_FRONTMATTER = 1

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.fence = self._format(GREY, bold=True)
        self.key = self._format("#2563eb", bold=True)
        self.heading = self._format("#7c3aed", bold=True)

    @staticmethod
    def _format(color: str, bold: bool = False) -> QTextCharFormat:
        fmt = QTextCharFormat()
        fmt.setForeground(QColor(color))
        if bold:
            fmt.setFontWeight(QFont.Weight.Bold)
        return fmt

    def highlightBlock(self, text: str) -> None:
        first = self.currentBlock().blockNumber() == 0
        inside = self.previousBlockState() == self._IN_FRONTMATTER
        if re.fullmatch(r"---\s*", text) and (first or inside):
            self.setFormat(0, len(text), self.fence)
            self.setCurrentBlockState(self._IN_FRONTMATTER if first else 0)
            return
        if inside:
            self.setCurrentBlockState(self._IN_FRONTMATTER)
            match = self._KEY.match(text)
            if match.hasMatch():
                self.setFormat(match.capturedStart(), match.capturedLength(), self.key)
        elif text.startswith("#"):
            self.setFormat(0, len(text), self.heading)


class SkillEditor(QWidget):
    """SKILL.md in a plain-text editor, re-validated shortly after each change."""

    save_requested = Signal()
    close_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path: Path | None = None
        self.doc: SkillDoc | None = None
        self.heading = QLabel()
        heading_font = QFont(self.font())
        heading_font.setPointSizeF(self.font().pointSizeF() * 1.25)
        heading_font.setBold(True)
        self.heading.setFont(heading_font)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)  # it names the skill's folder, as a command may have
        self.where = QLabel()
        self.where.setTextFormat(Qt.TextFormat.PlainText)  # its path: that folder too
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.where.setStyleSheet(f"color: {GREY}")
        self.text_edit = QPlainTextEdit()
        self.text_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text_edit.setTabStopDistance(self.text_edit.fontMetrics().horizontalAdvance(" ") * 2)
        self.text_edit.setStyleSheet("QPlainTextEdit { border: 1px solid palette(mid); border-radius: 7px;"
                                     " padding: 6px; background: palette(base); }")
        self.highlighter = FrontmatterHighlighter(self.text_edit.document())
        self.check = Notice()
        self.save_button = QPushButton("Save")
        self.save_button.setDefault(True)
        self.save_button.setToolTip("Save (Ctrl+S)")
        self.save_button.clicked.connect(self.save_requested)
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip("Back to the skill (Esc)")
        self.close_button.clicked.connect(self.close_requested)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(VALIDATE_DELAY_MS)
        self._timer.timeout.connect(self.validate)
        self.text_edit.textChanged.connect(self._timer.start)
        self.text_edit.modificationChanged.connect(self._show_heading)
        QShortcut(QKeySequence.StandardKey.Save, self, self.save_requested.emit)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.close_requested.emit)

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 14)
        layout.setSpacing(8)
        layout.addWidget(self.heading)
        layout.addWidget(self.where)
        layout.addWidget(self.text_edit, 1)
        layout.addWidget(self.check)
        layout.addLayout(buttons)

    def open(self, path: Path, text: str) -> None:
        self.path = path
        self.where.setText(str(path))
        self.text_edit.setPlainText(text)
        self.text_edit.document().setModified(False)
        self._show_heading(False)
        self.validate()
        self.text_edit.setFocus()

    def text(self) -> str:
        return self.text_edit.toPlainText()

    def is_modified(self) -> bool:
        return self.text_edit.document().isModified()

    def mark_saved(self) -> None:
        self.text_edit.document().setModified(False)

    def validate(self) -> SkillDoc:
        """Parse the text as the loader would and show what it thinks; also run right before Save."""
        self._timer.stop()
        assert self.path is not None
        doc = parse_skill_text(self.text(), self.path)
        self.doc = doc
        if doc.diagnostics:
            self.check.show_html(*diagnostics_html(doc.diagnostics))
        else:
            self.check.show_html(GREEN, "<b>Looks good.</b> The frontmatter loads without problems.")
        return doc

    def _show_heading(self, modified: bool) -> None:
        name = self.path.parent.name if self.path else ""
        self.heading.setText(f"Editing {name}" + (" •" if modified else ""))
        self.heading.setToolTip("Unsaved changes" if modified else "")
