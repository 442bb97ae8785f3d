"""Runs inside `dbus-run-session` with an unlocked gnome-keyring (see test_keyring_settings.py).

`save KEY`: type KEY into Settings, save, then send one message (the request must carry the key);
`read`: print the key the keyring holds for "openai" (a later session, same home).
Prints one JSON line with what it saw."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import qasync
from PySide6.QtWidgets import QApplication

from tests.ui.conftest import until


async def save_through_settings(secret: str) -> dict[str, Any]:
    from desktop.core import build_core
    from desktop.kernel import secrets
    from desktop.kernel.bus import TurnError, TurnFinished
    from desktop.providers.litellm_env import litellm
    from desktop.ui.bridge import CoreBridge
    from desktop.ui.settings import SettingsWindow

    await asyncio.to_thread(litellm)
    core = build_core()
    await core.start()
    bridge = CoreBridge(core)
    window = SettingsWindow(bridge)
    window.show()
    form = window.model_form
    await until(lambda: form.provider.count() > 20 and "keyring" in form.keyring_note.text()
                and not form.keyring_note.text().startswith("Checking"), timeout=60)
    note = form.keyring_note.text()
    form.key.setText(secret)
    window.save_button.click()
    await until(lambda: window.status.text(), timeout=60)
    ends: list[object] = []
    bridge.event.connect(lambda e: ends.append(e) if isinstance(e, (TurnFinished, TurnError)) else None)
    bridge.send("desktop:keyring", "ping")
    await until(lambda: ends, timeout=60)
    lookup = await asyncio.to_thread(subprocess.run, ["secret-tool", "lookup", "service", "nanobot-tray",
                                                      "username", "openai"], capture_output=True, text=True, timeout=30)
    result = {"backend": secrets.backend_name(), "note": note, "status": window.status.text(),
              "stored": await asyncio.to_thread(secrets.get_key, "openai") == secret,
              "secret_tool": lookup.stdout.strip() == secret, "turn": type(ends[0]).__name__}
    await core.close()
    window.close()
    return result


def main() -> None:
    if sys.argv[1] == "read":
        from desktop.kernel import secrets

        print(json.dumps({"key": secrets.get_key("openai")}))
        return
    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        print(json.dumps(loop.run_until_complete(save_through_settings(sys.argv[2]))))


if __name__ == "__main__":
    main()
