"""Where the dictation key records, and how it stops, through the key's own signals (the X11 grab that emits
them is tested on a real X server: tests/e2e/test_dictate_x11.py): into the chat when the chat window is in
front, else into the quick prompt, which opens; a second press stops, and so does letting go after holding."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop.config import Config
from desktop.ui.chat.window import ChatWindow
from desktop.ui.quick_prompt import QuickPrompt
from desktop.ui.voice.keys import HOLD_SECONDS, VoiceKeys
from desktop.voice.dictation import Phase
from desktop.voice.settings import VoiceConfig
from tests.fakeserver import FakeOpenAI
from tests.pulse import PulseServer
from tests.ui.conftest import until


async def _keys(shell, fake: FakeOpenAI) -> VoiceKeys:  # type: ignore[no-untyped-def]
    def speech(config: Config) -> None:
        config.section(VoiceConfig).stt_model = "openai/whisper-1"
        config.section(VoiceConfig).api_base = fake.base_url

    await shell.core.settings.update(speech)  # saved: the app reads config.yaml again when it changes
    return VoiceKeys(shell)


async def test_with_the_chat_in_front_the_key_dictates_into_it_and_a_second_press_stops(
        qtbot: QtBot, shell, fake: FakeOpenAI, microphone: PulseServer) -> None:  # type: ignore[no-untyped-def]
    keys = await _keys(shell, fake)
    fake.add_transcripts({"text": "Draft a reply to Anna."})
    chat = shell.window("chat")
    assert isinstance(chat, ChatWindow) and chat.composer.dictate is not None
    chat.show()
    chat.activateWindow()
    await until(lambda: QApplication.activeWindow() is chat, message="the chat in front")
    keys.hotkey.activated.emit()
    keys.hotkey.released.emit()  # a tap: it goes on recording
    await until(lambda: chat.composer.dictate.session.phase is Phase.RECORDING, message="recording in the chat")
    await asyncio.sleep(0.3)
    assert chat.composer.dictate.session.phase is Phase.RECORDING
    keys.hotkey.activated.emit()
    await until(lambda: chat.composer.input.toPlainText() == "Draft a reply to Anna.", message="the text in the chat")
    quick = shell.window("quick")
    assert isinstance(quick, QuickPrompt) and not quick.isVisible() and quick.input.text() == ""


async def test_otherwise_the_quick_prompt_opens_recording_and_letting_go_after_holding_stops(
        qtbot: QtBot, shell, fake: FakeOpenAI, microphone: PulseServer) -> None:  # type: ignore[no-untyped-def]
    keys = await _keys(shell, fake)
    fake.add_transcripts({"text": "Turn off the lights."})
    shell.window("chat").hide()  # type: ignore[union-attr]
    keys.hotkey.activated.emit()
    quick = shell.window("quick")
    assert isinstance(quick, QuickPrompt) and quick.isVisible()
    await until(lambda: quick.dictate.session.phase is Phase.RECORDING, message="recording in the quick prompt")
    await asyncio.sleep(HOLD_SECONDS + 0.1)
    keys.hotkey.released.emit()
    await until(lambda: quick.input.text() == "Turn off the lights.", message="the text in the quick prompt")
    assert len(fake.uploads) == 1
