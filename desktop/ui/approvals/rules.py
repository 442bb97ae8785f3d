"""Settings' list of what runs without asking: the rules "Always allow" saved, and trusted MCP servers.

Each row can be removed (the rule deleted, or the trust withdrawn) at once through the settings writer;
the list follows config.yaml, so a card's "Always allow" appears here while Settings is open."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.approvals import remove_rule
from desktop.approvals.settings import ApprovalsConfig
from desktop.config import Config
from desktop.kernel.taskset import spawn
from desktop.mcp.settings import McpConfig, set_trusted
from desktop.ui.bridge import CoreBridge
from desktop.ui.form_widgets import note_label

EMPTY = "Nothing yet. Choose “Always allow” when the assistant asks, and it is listed here."


class ApprovalRules(QWidget):
    def __init__(self, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self.rows: list[QWidget] = []
        unsubscribe = bridge.settings.subscribe(("approvals", "mcp"), self._changed)
        self.destroyed.connect(lambda: unsubscribe())

    def _changed(self, _keys: frozenset[str]) -> None:
        spawn(self.reload())

    async def reload(self) -> None:
        self.load((await self.bridge.settings.read()).config)

    def load(self, config: Config) -> None:
        for row in self.rows:
            row.deleteLater()
        self.rows = []
        for rule in config.section(ApprovalsConfig).rules:
            where = rule.get("workspace")
            text = f"{rule.get('tool', '?')}: <code>{_escape(rule.get('what', ''))}</code>"
            if where:
                text += f" <span style='color: palette(placeholder-text)'>in {_escape(where)}</span>"
            self._add(text, "Remove", partial(remove_rule, self.bridge.settings, dict(rule)))
        for name, server in config.section(McpConfig).servers.items():
            if server.trusted:
                self._add(f"MCP server <b>{_escape(name)}</b>: trusted, its tools run without asking",
                          "Stop trusting", partial(set_trusted, self.bridge.settings, name, False))
        if not self.rows:
            empty = note_label(EMPTY)
            self.rows.append(empty)
            self._layout.addWidget(empty)

    def _add(self, text: str, action: str, remove: Callable[[], Awaitable[None]]) -> None:
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        label = QLabel(text)
        label.setWordWrap(True)
        button = QPushButton(action)
        button.clicked.connect(lambda: spawn(remove()))
        line.addWidget(label, 1)
        line.addWidget(button)
        self.rows.append(row)
        self._layout.addWidget(row)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
