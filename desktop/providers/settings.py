"""The `provider` section of config.yaml: waiting for the model and retrying (desktop/config.py says how a
section is declared). The model itself (`model`, `api_base`, ...) is among the app-wide keys."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.config import MINUTES, SECONDS, setting


@dataclass
class ProviderConfig:
    timeout: float = setting(120.0, low=0, above=True, unit=SECONDS, label="Wait for the model",
                             help="Seconds to wait for the answer to start or go on; a whole answer may take "
                             "ten times as long.")
    retry_delays: list[float] = setting(factory=lambda: [1.0, 2.0, 4.0], low=0, label="Retry after",
                                        help="Seconds before each retry of a request that failed before any "
                                        "text arrived; one retry per entry.")
    model_idle_exit: float = setting(120.0, low=0, above=True, unit=MINUTES, label="Unload the model library after",
                                     help="Minutes without a model call before the helper holding the model library "
                                     "(about 200 MB) exits; it starts again when you open the chat or press the "
                                     "hotkey.")
