"""The `schedules` section of config.yaml: when the scheduler's background work runs (desktop/config.py
says how a section is declared)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.config import MINUTES, SECONDS, Section, setting


@dataclass
class SchedulesConfig:
    dream_interval: int = setting(7200, low=0, unit=MINUTES, zero="Off", label="Dream (tidy memory) every",
                                  help="Seconds between scheduled Dreams, which tidy long-term memory; 0 turns "
                                  "them off.")
    heartbeat_interval: int = setting(1800, low=0, unit=MINUTES, zero="Off", label="Heartbeat (HEARTBEAT.md) every",
                                      help="Seconds between looks at the active tasks in HEARTBEAT.md; 0 turns "
                                      "the heartbeat off.")
    heartbeat_allow: list[str] = setting(factory=list, label="Heartbeat may use without asking",
                                         help="Tools the heartbeat may use where they would ask, since nobody is "
                                         "there to answer: tool names (exec, web_fetch) or mcp:SERVER for the "
                                         "tools of one MCP server. Anything else that would ask fails at once.")
    keep_awake: bool = setting(True, label="Keep the computer awake during background work",
                               help="While a reminder, the heartbeat, Dream or a background task runs, ask the "
                               "system (logind) not to sleep; released as soon as the work ends.")
    missed_grace: int = setting(3600, low=0, unit=SECONDS, label="Run late reminders within",
                                help="Seconds: a reminder that came due while the app was closed still runs if "
                                "it is at most this late.")


SECTION = Section("schedules", SchedulesConfig, label="Schedules", help="When background work runs.")
