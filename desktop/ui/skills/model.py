"""The skills list: one model row per SKILL.md found, painted by a delegate (no widget per row).

The row's switch edits Qt.CheckStateRole; the model only reports the wish (`toggle_requested`) and
shows it at once, the window writes config.yaml and rescans, which is the final word."""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QIcon, QKeyEvent, QMouseEvent, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from desktop.skills.frontmatter import ERROR
from desktop.skills.loader import SkillStatus
from desktop.ui.plain_text import plain_tip
from desktop.ui.skills.avatar import paint_avatar

STATUS_ROLE = Qt.ItemDataRole.UserRole + 1
SEARCH_ROLE = Qt.ItemDataRole.UserRole + 2
SOURCE_LABELS = {"workspace": "workspace", "builtin": "built-in", "user": "user"}
SOURCE_COLORS = {"workspace": "#2563eb", "builtin": "#64748b", "user": "#7c3aed"}
GREEN, AMBER, RED, GREY = "#16a34a", "#d97706", "#dc2626", "#64748b"
Index = QModelIndex | QPersistentModelIndex


def short_missing(item: str) -> str:
    """'CLI: gh' -> 'gh', 'OS: darwin' -> 'darwin only': pill-sized."""
    kind, _, what = item.partition(": ")
    return f"{what} only" if kind == "OS" else what or item


Icon = QStyle.StandardPixmap | None


def pills(status: SkillStatus) -> list[tuple[str, str, Icon]]:
    """(text, colour, icon) badges after a skill's name, most important first."""
    out: list[tuple[str, str, Icon]] = [
        (SOURCE_LABELS.get(status.source, status.source), SOURCE_COLORS.get(status.source, GREY), None)]
    errors = sum(d.level == ERROR for d in status.doc.diagnostics)
    warnings = len(status.doc.diagnostics) - errors
    if errors:
        out.append(("error", RED, QStyle.StandardPixmap.SP_MessageBoxCritical))
    if status.shadowed_by:
        out.append((f"overridden by {SOURCE_LABELS.get(status.shadowed_by, status.shadowed_by)}", GREY, None))
    if status.doc.always and status.doc.loadable and status.enabled:  # switched off, the agent goes without it
        out.append(("always on", GREEN, None))
    if status.missing:
        extra = f" +{len(status.missing) - 1}" if len(status.missing) > 1 else ""
        out.append((f"needs {short_missing(status.missing[0])}{extra}", AMBER, None))
    if warnings:
        out.append((f"{warnings} warning{'s' * (warnings > 1)}", AMBER, QStyle.StandardPixmap.SP_MessageBoxWarning))
    return out


class SkillListModel(QAbstractListModel):
    toggle_requested = Signal(str, bool)  # skill name, enabled

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[SkillStatus] = []

    def set_statuses(self, statuses: list[SkillStatus]) -> None:
        self.beginResetModel()
        self._rows = list(statuses)
        self.endResetModel()

    def statuses(self) -> list[SkillStatus]:
        return list(self._rows)

    def row_of(self, name: str, source: str) -> int:
        return next((i for i, s in enumerate(self._rows) if s.name == name and s.source == source), -1)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        status = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return status.name
        if role == Qt.ItemDataRole.CheckStateRole:
            return Qt.CheckState.Checked if status.enabled else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tip(f"{status.doc.description or status.name}\n\n{status.doc.path}")  # a command's words
        if role == STATUS_ROLE:
            return status
        if role == SEARCH_ROLE:
            return f"{status.name} {status.doc.description} {SOURCE_LABELS.get(status.source, '')}"
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return (Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsUserCheckable
                if index.isValid() else Qt.ItemFlag.NoItemFlags)

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.CheckStateRole:
            return False
        enabled = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value)
        name = self._rows[index.row()].name
        for row, status in enumerate(self._rows):  # skills.disabled is by name: every copy follows
            if status.name == name:
                self._rows[row] = dataclasses.replace(status, enabled=enabled)
                self.dataChanged.emit(self.index(row), self.index(row))
        self.toggle_requested.emit(name, enabled)
        return True


class SkillFilter(QSortFilterProxyModel):
    """Case-insensitive filter over name, description and source."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFilterRole(SEARCH_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)


class SkillDelegate(QStyledItemDelegate):
    """Paints a row: avatar tile, name with badges, description, and an on/off switch."""

    ROW_HEIGHT = 60
    SWITCH = QSize(34, 18)

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        return QSize(320, self.ROW_HEIGHT)

    def switch_rect(self, rect: QRect) -> QRect:
        return QRect(rect.right() - 14 - self.SWITCH.width(), rect.center().y() - self.SWITCH.height() // 2 + 1,
                     self.SWITCH.width(), self.SWITCH.height())

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        status: SkillStatus = index.data(STATUS_ROLE)
        palette = option.palette
        rect = option.rect
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        card = QRectF(rect.adjusted(4, 2, -4, -2))
        if selected or hovered:
            tint = QColor(palette.color(QPalette.ColorRole.Highlight))
            tint.setAlpha(60 if selected else 22)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(tint)
            painter.drawRoundedRect(card, 7, 7)
        text_color = palette.color(QPalette.ColorRole.Text)
        muted = _mix(text_color, palette.color(QPalette.ColorRole.Base), 0.45)
        fade = 1.0 if option.state & QStyle.StateFlag.State_Enabled else 0.45  # the list is locked while editing
        painter.setOpacity(fade * (1.0 if status.in_effect else 0.55))

        tile = QRectF(rect.left() + 12, rect.center().y() - 19, 38, 38)
        paint_avatar(painter, tile, status.name, status.doc.emoji, palette)

        left = int(tile.right()) + 12
        right = self.switch_rect(rect).left() - 12
        title_font = QFont(option.font)
        title_font.setBold(True)
        title_font.setPointSizeF(option.font.pointSizeF() * 1.05)
        fm = QFontMetrics(title_font)
        baseline = rect.top() + 10 + fm.ascent()
        name = fm.elidedText(status.name, Qt.TextElideMode.ElideRight, max(40, right - left))
        painter.setFont(title_font)
        painter.setPen(text_color)
        painter.drawText(left, baseline, name)
        x = left + fm.horizontalAdvance(name) + 8
        small = QFont(option.font)
        small.setPointSizeF(option.font.pointSizeF() * 0.82)
        for text, color, icon in pills(status):
            width = self._paint_pill(painter, small, x, rect.top() + 10, fm.height(), text, QColor(color), right,
                                     option.widget.style().standardIcon(icon) if icon and option.widget else None)
            if not width:
                break
            x += width + 5

        painter.setFont(option.font)
        errors = [d.message for d in status.doc.diagnostics if d.level == ERROR]
        line = errors[0] if errors else " ".join(status.doc.description.split())
        painter.setPen(QColor(RED) if errors else muted)
        body = QFontMetrics(option.font)
        painter.drawText(left, baseline + 6 + body.height(),
                         body.elidedText(line, Qt.TextElideMode.ElideRight, max(40, right - left)))

        painter.setOpacity(fade * (1.0 if status.shadowed_by is None else 0.55))
        self._paint_switch(painter, self.switch_rect(rect), status.enabled, palette)
        painter.restore()

    def editorEvent(self, event: QEvent, model: Any, option: QStyleOptionViewItem, index: Index) -> bool:
        """A click on the switch or Space on the row flips the skill on or off."""
        kind = event.type()
        if kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonDblClick) and isinstance(event, QMouseEvent):
            return self._on_switch(event, option)
        if kind == QEvent.Type.MouseButtonRelease and isinstance(event, QMouseEvent) and self._on_switch(event, option):
            return self._flip(model, index)
        if kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and event.key() in (Qt.Key.Key_Space,
                                                                                             Qt.Key.Key_Select):
            return self._flip(model, index)
        return False

    def _on_switch(self, event: QMouseEvent, option: QStyleOptionViewItem) -> bool:
        return (event.button() == Qt.MouseButton.LeftButton
                and self.switch_rect(option.rect).adjusted(-6, -8, 6, 8).contains(event.position().toPoint()))

    @staticmethod
    def _flip(model: Any, index: Index) -> bool:
        on = index.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
        return bool(model.setData(index, Qt.CheckState.Unchecked if on else Qt.CheckState.Checked,
                                  Qt.ItemDataRole.CheckStateRole))

    @staticmethod
    def _paint_pill(painter: QPainter, font: QFont, x: int, top: int, line: int, text: str, color: QColor,
                    limit: int, icon: QIcon | None) -> int:
        fm = QFontMetrics(font)
        height = fm.height() + 2
        glyph = height - 4 if icon else 0
        width = fm.horizontalAdvance(text) + 12 + (glyph + 3 if icon else 0)
        if x + width > limit:
            return 0
        box = QRectF(x, top + (line - height) / 2, width, height)
        fill = QColor(color)
        fill.setAlpha(34)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(fill)
        painter.drawRoundedRect(box, height / 2, height / 2)
        if icon:
            icon.paint(painter, QRect(int(box.left()) + 5, int(box.top()) + 2, glyph, glyph))
        painter.setFont(font)
        painter.setPen(color)
        painter.drawText(box.adjusted(glyph + 3 if icon else 0, 0, 0, 0), Qt.AlignmentFlag.AlignCenter, text)
        return width

    @staticmethod
    def _paint_switch(painter: QPainter, box: QRect, on: bool, palette: QPalette) -> None:
        track = QColor(GREEN) if on else _mix(palette.color(QPalette.ColorRole.Text),
                                              palette.color(QPalette.ColorRole.Base), 0.7)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(track)
        radius = box.height() / 2
        painter.drawRoundedRect(QRectF(box), radius, radius)
        knob = box.height() - 4
        kx = box.right() - knob - 1 if on else box.left() + 2
        painter.setBrush(QColor("white"))
        painter.drawEllipse(QRectF(kx, box.top() + 2, knob, knob))


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    """a blended towards b by t (0..1): muted colours that work on light and dark palettes."""
    return QColor(round(a.red() + (b.red() - a.red()) * t), round(a.green() + (b.green() - a.green()) * t),
                  round(a.blue() + (b.blue() - a.blue()) * t))
