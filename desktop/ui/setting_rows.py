"""A setting's row in the Settings window, made from its declaration (desktop/config.py): the widget for a simple
setting, and a feature's section as a page of such rows (`SettingsGroup`). Apart from the window itself so that
a feature's settings page (desktop/ui/<feature>/) and the window's Save build on rows without importing the
window."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from desktop.config import Declared, declared, lookup
from desktop.ui.form_widgets import note_label, with_note


class SettingsGroup(QWidget):
    """A feature's section as a page of generated rows: each simple setting in it, in declared order, with
    its help under it. What is not simple (a list, a mapping) stays for config.yaml or a widget of its own."""

    def __init__(self, section: str) -> None:
        super().__init__()
        form = form_layout()
        self.setLayout(form)
        cls = lookup(section).section
        if cls is None:
            raise TypeError(f"'{section}' is not a section of settings")
        self.rows = {f"{section}.{spec.name}": add_row(form, f"{section}.{spec.name}", note=True)
                     for spec in declared(cls) if SettingRow.simple(spec)}


def add_row(form: QFormLayout, key: str, note: QLabel | bool = False) -> SettingRow:
    row = SettingRow(lookup(key))
    shown = note_label(row.spec.setting.help) if note is True else note if isinstance(note, QLabel) else None
    field = with_note(row.widget, shown) if shown is not None else row.widget
    if isinstance(row.widget, QCheckBox):
        form.addRow(field)
    else:
        form.addRow(row.spec.setting.label, field)
    return row


def form_layout() -> QFormLayout:
    form = QFormLayout()
    form.setContentsMargins(0, 0, 0, 0)
    form.setVerticalSpacing(8)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    return form


class SettingRow:
    """The widget of one simple setting, made from its declaration: a checkbox for true or false, a list of
    the labelled choices, a spin box held within the bounds, with the unit after the number (and the
    unit's scale: seconds shown as minutes) and the meaning of 0 in its place ("Off"), or a line of text (a
    list of names as one line, separated by commas)."""

    @staticmethod
    def simple(spec: Declared) -> bool:
        """Whether a setting gets a generated row."""
        return spec.hint in (bool, int, float, str, list[str])

    def __init__(self, spec: Declared) -> None:
        self.spec = spec
        meta = spec.setting
        self.per = meta.unit.per if meta.unit else 1
        self.widget: QCheckBox | QComboBox | QSpinBox | QDoubleSpinBox | QLineEdit
        if spec.hint is bool:
            self.widget = QCheckBox(meta.label)
        elif meta.choices:
            self.widget = QComboBox()
            for value, label in meta.choices:
                self.widget.addItem(label, value)
        elif spec.hint is int:
            self.widget = QSpinBox()
            self.widget.setGroupSeparatorShown(True)
        elif spec.hint is float:
            self.widget = QDoubleSpinBox()
            self.widget.setDecimals(2)
            self.widget.setSingleStep(meta.step or 1.0)
        elif spec.hint is str or spec.hint == list[str]:
            self.widget = QLineEdit()  # a list as its items separated by commas
        else:
            raise TypeError(f"'{spec.name}' is not a simple setting; it needs a widget of its own")
        self.widget.setToolTip(meta.help)
        if isinstance(self.widget, (QSpinBox, QDoubleSpinBox)):
            self._bound(self.widget)

    def _bound(self, box: QSpinBox | QDoubleSpinBox) -> None:
        meta = self.spec.setting
        bounds = meta.bounds
        smallest = 1 if isinstance(box, QSpinBox) else 10 ** -box.decimals()
        low = (bounds.low + (smallest if bounds.above else 0)) if bounds and bounds.low is not None else 0
        high = bounds.high if bounds and bounds.high is not None else _LARGEST
        if isinstance(box, QSpinBox):
            box.setRange(math.ceil(low / self.per), int(high // self.per))
        else:
            box.setRange(low, high)
        if meta.unit:
            box.setSuffix(f" {meta.unit.suffix}")
        if meta.zero:
            box.setSpecialValueText(meta.zero)
        box.setMaximumWidth(180)

    def show(self, value: Any) -> None:
        widget = self.widget
        if isinstance(widget, QCheckBox):
            widget.setChecked(bool(value))
        elif isinstance(widget, QComboBox):
            widget.setCurrentIndex(max(widget.findData(value), 0))
        elif isinstance(widget, QSpinBox):
            widget.setValue(int(value) // self.per)
        elif isinstance(widget, QLineEdit):
            widget.setText(", ".join(value) if isinstance(value, list) else str(value))
        else:
            widget.setValue(float(value))

    def value(self) -> Any:
        widget = self.widget
        if isinstance(widget, QCheckBox):
            return widget.isChecked()
        if isinstance(widget, QComboBox):
            return str(widget.currentData())
        if isinstance(widget, QSpinBox):
            return widget.value() * self.per
        if isinstance(widget, QLineEdit) and self.spec.hint == list[str]:
            return [item.strip() for item in widget.text().split(",") if item.strip()]
        if isinstance(widget, QLineEdit):
            return widget.text().strip()
        return round(widget.value(), widget.decimals())


_LARGEST = 2**31 - 1  # a spin box's own limit, for a number with no upper bound
