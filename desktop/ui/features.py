"""Every feature's Qt half, in the order their tray entries and Settings pages appear (desktop/ui/host.py
says what each one gets). Adding a feature's UI is one more entry here."""

from __future__ import annotations

from desktop.ui import (
    approvals,
    chats,
    checkpoints,
    context,
    mcp,
    memory,
    notifications,
    providers,
    reminders,
    skills,
    subagents,
    usage,
    voice,
)
from desktop.ui.host import UiFeature

UI_FEATURES: tuple[UiFeature, ...] = (skills.UI_FEATURE, memory.UI_FEATURE, reminders.UI_FEATURE, mcp.UI_FEATURE,
                                     subagents.UI_FEATURE, approvals.UI_FEATURE, notifications.UI_FEATURE,
                                     checkpoints.UI_FEATURE, context.UI_FEATURE, voice.UI_FEATURE, usage.UI_FEATURE,
                                     chats.UI_FEATURE, providers.UI_FEATURE)
