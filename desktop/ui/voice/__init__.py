"""Dictation in the app: the microphone button and its strip in the quick prompt and the chat's composer
(dictate.py, placed by those windows), the `hotkeys.dictate` key (keys.py), and a Settings page for the
`voice` section (the key itself is on the Desktop context page, with the other desktop keys). Reading aloud:
a strip in the chat window with the speaker button for the toolbar over an answer (read_aloud.py).

The shell builds the quick prompt and the chat with the bridge alone, so their microphones find the Voice
service here: offered once the core is built (`UiHost.on_ready`), looked up on the first click. One app runs in
a process; a service offered again (a newer core, in tests) takes the older one's place."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from desktop.ui.voice.read_aloud import ReadAloudStrip
    from desktop.voice import Voice

CAPTION = ("What you say into the microphone becomes the message's text; answers can be read aloud. The speech "
           "models' API key is the one stored for their provider: the chat model's when they share one, else "
           "store it with the command nanobot-tray keys set PROVIDER. The key that starts dictating is on the "
           "Desktop context page.")


def attach_ui(host: UiHost) -> None:
    def settings_page() -> QWidget:
        from desktop.ui.setting_rows import SettingsGroup

        return SettingsGroup("voice")

    def read_aloud() -> ReadAloudStrip:
        from desktop.ui.voice.read_aloud import ReadAloudStrip
        from desktop.voice import Voice

        return ReadAloudStrip(host.get(Voice))

    host.add_settings_page("Voice", CAPTION, settings_page)
    host.add_chat_panel(read_aloud)
    kept = []  # the key lives as long as the app

    def ready() -> None:
        from desktop.ui.voice.keys import VoiceKeys
        from desktop.voice import Voice

        offer(host.get(Voice))
        kept.append(VoiceKeys(host))
        kept[0].start()

    host.on_ready(ready)


_offered: list[Voice] = []


def offer(service: Voice) -> None:
    _offered[:] = [service]


def offered() -> Voice:
    """The Voice service of the app's core; LookupError before the core is built."""
    if not _offered:
        raise LookupError("the voice feature has not been offered yet (the core is not built)")
    return _offered[0]


UI_FEATURE = UiFeature("voice", attach_ui)
