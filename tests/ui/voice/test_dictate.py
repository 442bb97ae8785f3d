"""The microphone in the quick prompt and the chat's message box, as a person uses it: click, speak (a private
PulseAudio server's tone is the microphone), click again, and the scripted speech server's text is in the box;
with voice.send_on_stop it is sent at once. Each problem is said in the strip over the box."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.quick_prompt import QuickPrompt
from desktop.ui.settings import SettingsWindow
from desktop.ui.voice import offer
from desktop.ui.voice.dictate import Dictate
from desktop.voice import Voice
from desktop.voice.dictation import Phase
from desktop.voice.settings import VoiceConfig
from tests.e2e.xdesktop import ARTIFACTS
from tests.fakeserver import FakeOpenAI
from tests.pulse import PulseServer
from tests.ui.conftest import until


def _speech(bridge: CoreBridge, fake: FakeOpenAI, **settings: object) -> None:
    offer(bridge.core.get(Voice))  # as the app does once its core is built
    section = bridge.core.config.section(VoiceConfig)
    section.stt_model, section.api_base = "openai/whisper-1", fake.base_url
    for key, value in settings.items():
        setattr(section, key, value)


def _shot(widget, name: str) -> Path:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    assert widget.grab().save(str(path))
    return path


async def _quick(qtbot: QtBot, bridge: CoreBridge) -> QuickPrompt:
    prompt = QuickPrompt(bridge)
    qtbot.addWidget(prompt)
    prompt.popup()
    return prompt


async def _chat(qtbot: QtBot, bridge: CoreBridge) -> ChatWindow:
    chat = ChatWindow(bridge)
    qtbot.addWidget(chat)
    chat.show()
    chat.show_session("desktop:voice")
    await until(lambda: chat.models["desktop:voice"].loaded, message="the chat loaded")
    return chat


async def _record(qtbot: QtBot, dictate: Dictate) -> None:
    qtbot.mouseClick(dictate.button, Qt.MouseButton.LeftButton)
    await until(lambda: dictate.session.phase is Phase.RECORDING, message="recording")
    await until(lambda: dictate.meter.level > 0.3, message="the meter to show the tone")


async def test_in_the_quick_prompt_a_click_records_with_a_meter_and_the_text_lands_to_edit(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, microphone: PulseServer) -> None:
    _speech(bridge, fake)
    fake.add_transcripts({"text": "What is the capital of Norway?"})
    prompt = await _quick(qtbot, bridge)
    dictate = prompt.dictate
    assert dictate.bar.isHidden() and not dictate.button.isChecked()

    await _record(qtbot, dictate)
    assert dictate.button.isChecked() and dictate.bar.isVisible() and dictate.dot.isVisible()
    assert dictate.what.text().startswith("Recording  0:0") and dictate.meter.isVisible()
    assert dictate.stop_button.isVisible() and dictate.cancel_button.isVisible()
    assert dictate.device.text() == "default"
    await until(lambda: dictate.session.seconds > 1.0)
    dictate._tick()
    assert dictate.what.text() == "Recording  0:01"
    _shot(prompt, "quick-prompt-dictating.png")

    qtbot.mouseClick(dictate.button, Qt.MouseButton.LeftButton)
    await until(lambda: prompt.input.text() == "What is the capital of Norway?", message="the text in the box")
    assert dictate.bar.isHidden() and not dictate.button.isChecked() and len(fake.uploads) == 1
    assert not fake.requests  # nothing asked: the person edits first
    assert prompt.status.text() != "Thinking…"


async def test_in_the_chat_the_text_joins_what_is_typed_where_the_cursor_is(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, microphone: PulseServer) -> None:
    _speech(bridge, fake)
    fake.add_transcripts({"text": "and add the receipts from March."})
    chat = await _chat(qtbot, bridge)
    dictate = chat.composer.dictate
    assert dictate is not None
    qtbot.keyClicks(chat.composer.input, "Sum up the invoices")
    await _record(qtbot, dictate)
    _shot(chat, "chat-dictating.png")
    qtbot.mouseClick(dictate.stop_button, Qt.MouseButton.LeftButton)
    await until(lambda: chat.composer.input.toPlainText() != "Sum up the invoices", message="the text in the box")
    assert chat.composer.input.toPlainText() == "Sum up the invoices and add the receipts from March."
    assert dictate.bar.isHidden() and not fake.requests


async def test_send_on_stop_sends_what_was_said(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                microphone: PulseServer) -> None:
    _speech(bridge, fake, send_on_stop=True)
    fake.add_transcripts({"text": "Remind me to call Sam at five."})
    fake.add({"content": "I will remind you at 17:00."})
    chat = await _chat(qtbot, bridge)
    dictate = chat.composer.dictate
    assert dictate is not None
    await _record(qtbot, dictate)
    qtbot.mouseClick(dictate.button, Qt.MouseButton.LeftButton)
    await until(lambda: fake.requests, message="the message sent to the model")
    sent = [m for m in fake.requests[-1]["messages"] if m["role"] == "user"][-1]["content"]
    assert sent.endswith("Remind me to call Sam at five.")
    assert chat.composer.input.toPlainText() == ""


async def test_without_a_speech_model_the_strip_says_so_and_opens_the_voice_settings(
        qtbot: QtBot, shell, fake: FakeOpenAI, microphone: PulseServer) -> None:  # type: ignore[no-untyped-def]
    prompt = shell.window("quick")
    assert isinstance(prompt, QuickPrompt)
    prompt.popup()
    dictate = prompt.dictate
    qtbot.mouseClick(dictate.button, Qt.MouseButton.LeftButton)
    await until(dictate.bar.isVisible, message="the problem shown")
    assert dictate.what.text().startswith("No speech model is set, so what you say cannot become text.")
    assert dictate.settings_button.isVisible() and dictate.dismiss_button.isVisible()
    assert not dictate.button.isChecked() and dictate.session.device == ""  # the microphone never opened
    _shot(prompt, "quick-prompt-dictation-no-model.png")

    qtbot.mouseClick(dictate.settings_button, Qt.MouseButton.LeftButton)
    settings = next(w for w in QApplication.topLevelWidgets() if isinstance(w, SettingsWindow))
    await until(settings.isVisible, message="Settings open")
    assert settings.tabs.tabText(settings.tabs.currentIndex()) == "Voice"
    assert "voice.stt_model" in settings.rows and not prompt.isVisible() and dictate.bar.isHidden()


async def test_no_microphone_is_said_in_words(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                             no_microphone: None) -> None:
    _speech(bridge, fake)
    prompt = await _quick(qtbot, bridge)
    dictate = prompt.dictate
    qtbot.mouseClick(dictate.button, Qt.MouseButton.LeftButton)
    await until(lambda: dictate.session.problem is not None, message="the problem")
    assert dictate.what.text().startswith("No microphone found: PortAudio sees no sound input device")
    assert dictate.bar.isVisible() and dictate.settings_button.isHidden() and not dictate.button.isChecked()
    _shot(prompt, "quick-prompt-dictation-no-microphone.png")
    qtbot.mouseClick(dictate.dismiss_button, Qt.MouseButton.LeftButton)
    assert dictate.bar.isHidden()


async def test_the_servers_refusal_is_shown_with_its_reason(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                           microphone: PulseServer) -> None:
    _speech(bridge, fake)
    fake.add_transcripts({"status": 413, "body": {"error": {"message": "Maximum content size limit exceeded"}}})
    chat = await _chat(qtbot, bridge)
    dictate = chat.composer.dictate
    assert dictate is not None
    await _record(qtbot, dictate)
    qtbot.mouseClick(dictate.button, Qt.MouseButton.LeftButton)
    await until(lambda: dictate.session.problem is not None, message="the refusal")
    assert dictate.what.text() == (f"The speech server at http://127.0.0.1:{fake.port} refused the recording "
                                   "(HTTP 413): Maximum content size limit exceeded.")
    assert dictate.bar.isVisible() and dictate.settings_button.isHidden()
    assert chat.composer.input.toPlainText() == ""


async def test_hiding_the_quick_prompt_while_recording_drops_the_recording(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, microphone: PulseServer) -> None:
    _speech(bridge, fake)
    prompt = await _quick(qtbot, bridge)
    await _record(qtbot, prompt.dictate)
    qtbot.keyClick(prompt, Qt.Key.Key_Escape)
    await until(lambda: prompt.dictate.session.phase is Phase.IDLE, message="the recording dropped")
    assert not prompt.isVisible() and not fake.uploads and prompt.input.text() == ""


async def test_send_on_stop_in_the_quick_prompt_asks_at_once(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                             microphone: PulseServer) -> None:
    _speech(bridge, fake, send_on_stop=True)
    fake.add_transcripts({"text": "How far is the moon?"})
    fake.add({"content": "About 384,400 km."})
    prompt = await _quick(qtbot, bridge)
    await _record(qtbot, prompt.dictate)
    qtbot.mouseClick(prompt.dictate.stop_button, Qt.MouseButton.LeftButton)
    await until(lambda: prompt.status.text() == "Done", message="the answer")
    assert prompt.question.text() == "How far is the moon?" and prompt.input.text() == ""
    assert "About 384,400 km." in prompt.answer.toPlainText()


async def test_a_speech_server_address_without_its_scheme_is_not_saved_and_says_why(
        qtbot: QtBot, shell) -> None:  # type: ignore[no-untyped-def]
    """"127.0.0.1:8080/v1" typed as the speech server: not saved (every recording would fail against it), the
    status says what to write, and the address in force stays as it was."""
    shell.open_window("settings")
    settings = shell.window("settings")
    assert isinstance(settings, SettingsWindow) and settings.show_page("Voice")
    await until(lambda: settings.rows["voice.max_seconds"].widget.value() == 300,  # type: ignore[union-attr]
                message="the settings loaded")
    settings.rows["voice.api_base"].widget.setText("127.0.0.1:8080/v1")  # type: ignore[attr-defined]
    assert not await settings.save()
    assert "Not saved" in settings.status.text() and "http://" in settings.status.text()
    assert shell.core.config.section(VoiceConfig).api_base == ""
    assert "127.0.0.1:8080" not in shell.core.home.config_file.read_text(encoding="utf-8")
    settings.rows["voice.api_base"].widget.setText("http://127.0.0.1:8080/v1")  # type: ignore[attr-defined]
    assert await settings.save()
    assert shell.core.config.section(VoiceConfig).api_base == "http://127.0.0.1:8080/v1"


@pytest.mark.parametrize(("key", "typed", "wanted"), [
    ("voice.stt_model", "openai/whisper 1", "no space or line break"),
    ("voice.tts_model", "openai/tts 1", "no space or line break"),
    ("voice.language", "English", "two-letter language code"),
])
async def test_a_speech_model_or_language_no_server_takes_is_not_saved_and_says_why(
        qtbot: QtBot, shell, key: str, typed: str, wanted: str) -> None:  # type: ignore[no-untyped-def]
    """A model name with a space in it, or the language written out ("English" where the server wants "en"), was
    saved without a word; the first recording or reading then failed with the server's refusal. Save says what to
    write, the typing stays, and config.yaml keeps what it had."""
    shell.open_window("settings")
    settings = shell.window("settings")
    assert isinstance(settings, SettingsWindow) and settings.show_page("Voice")
    await until(lambda: settings.rows["voice.max_seconds"].widget.value() == 300,  # type: ignore[union-attr]
                message="the settings loaded")
    settings.rows[key].widget.setText(typed)  # type: ignore[attr-defined]
    assert not await settings.save()
    assert "Not saved" in settings.status.text() and wanted in settings.status.text()
    assert settings.rows[key].widget.text() == typed  # type: ignore[attr-defined]
    assert typed not in shell.core.home.config_file.read_text(encoding="utf-8")


async def test_the_voice_page_holds_the_speech_settings_and_saves_them(
        qtbot: QtBot, shell, fake: FakeOpenAI) -> None:  # type: ignore[no-untyped-def]
    shell.open_window("settings")
    settings = shell.window("settings")
    assert isinstance(settings, SettingsWindow) and settings.show_page("Voice")
    await until(lambda: settings.rows["voice.max_seconds"].widget.value() == 300,  # type: ignore[union-attr]
                message="the settings loaded")
    assert {"voice.stt_model", "voice.api_base", "voice.language", "voice.send_on_stop", "voice.max_seconds",
            "hotkeys.dictate"} <= set(settings.rows)
    settings.rows["voice.stt_model"].widget.setText("groq/whisper-large-v3")  # type: ignore[attr-defined]
    _shot(settings, "settings-voice.png")
    await settings.save()
    await until(lambda: shell.core.config.section(VoiceConfig).stt_model == "groq/whisper-large-v3",
                message=f"the speech model in force ({settings.status.text()})")
    assert "stt_model: groq/whisper-large-v3" in (shell.core.home.config_file).read_text(encoding="utf-8")
