"""Where the tray app's memory goes: one fresh process builds the app's pieces in start-up order and prints the
resident set size (VmRSS) after each, as one JSON list on stdout. Run by `bench_startup.py --breakdown`.

The stages are the app's own objects (Qt application, tray, core, windows), built directly rather than through the
shell, so each one's cost stands apart. Then the model helper, the process that holds litellm (and a tiktoken
encoding once a call whose server reported no usage is counted), is started and its own RSS printed: the app
keeps it only while calls are near (desktop/providers/helper.py).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def rss_mb(pid: int | None = None) -> float:
    status = Path(f"/proc/{pid or 'self'}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]


async def stages(out: list[dict[str, Any]]) -> None:
    def mark(stage: str) -> None:
        gc.collect()
        out.append({"stage": stage, "rss_mb": round(rss_mb(), 1)})

    from desktop.kernel.paths import home as app_home
    from desktop.ui.app import _build_core
    from desktop.ui.icons import install_theme_icons
    from desktop.ui.tray import Tray

    mark("our shell modules (desktop.ui.app, tray)")
    install_theme_icons()
    tray = Tray()
    tray.show()
    mark("tray icon shown")
    core = await asyncio.to_thread(_build_core, app_home())
    from desktop.ui.bridge import CoreBridge

    bridge = CoreBridge(core)
    mark("core built (settings, sessions, memory, tools, skills)")
    await core.start()
    mark("core started (agent, scheduler, MCP)")
    from desktop.ui.quick_prompt import QuickPrompt

    quick = QuickPrompt(bridge)
    mark("quick prompt built (the app builds it at start)")
    await asyncio.sleep(3)
    mark("idle 3 s later")
    from desktop.ui.chat.window import ChatWindow

    chat = ChatWindow(bridge)
    mark("chat window built (on first open)")
    from desktop.providers.helper import ask, model_helper
    from desktop.providers.model_thread import model_loop

    def mark_helper(stage: str) -> None:
        out.append({"stage": stage, "rss_mb": round(rss_mb(model_helper().pid), 1), "process": "model helper"})

    await ask("key_needs", model=core.config.model)  # waits for litellm's import in the helper
    mark("model helper started (a window took focus, or a call)")
    mark_helper("model helper: Python + litellm imported")
    await ask("price_call", model=core.config.model, usage={}, messages=[{"role": "user", "content": "hello"}],
              answer="hi", api_base=None)
    mark_helper("model helper: tiktoken encoding (a call whose server reported no usage)")
    await asyncio.to_thread(lambda: asyncio.run_coroutine_threadsafe(model_helper().close(), model_loop()).result(10))
    await core.close()
    del quick, chat, tray


def main() -> None:
    out: list[dict[str, Any]] = [{"stage": "Python", "rss_mb": round(rss_mb(), 1)}]
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication([sys.argv[0]])
    out.append({"stage": f"Qt application ({app.platformName()})", "rss_mb": round(rss_mb(), 1)})
    with tempfile.TemporaryDirectory(prefix="rss-stages-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "config.yaml").write_text(f"model: {os.environ.get('RSS_MODEL', 'openai/gpt-4o-mini')}\n"
                                          "api_base: http://127.0.0.1:9/v1\n")
        os.environ["NANOBOT_TRAY_HOME"] = str(home)
        os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            loop.run_until_complete(stages(out))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
