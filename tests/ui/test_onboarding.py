"""First run: the onboarding panel finds a local server (here the scripted one, posing as LM Studio) and a
nanobot CLI workspace, or takes a provider and key; after one click the chat answers."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import keyring.errors
import pytest
import yaml
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QLabel, QMessageBox, QPushButton, QScrollArea, QWidget
from pytestqt.qtbot import QtBot

from desktop.kernel import taskset
from desktop.kernel.bus import TurnFinished
from desktop.providers import catalog
from desktop.providers.discovery import KnownServer
from desktop.providers.helper import model_helper
from desktop.providers.model_thread import run_on_model_thread
from desktop.ui.bridge import CoreBridge
from desktop.ui.model_form import CHECKING_NAME, ModelForm
from desktop.ui.onboarding import OnboardingPanel
from tests.conftest import write_config
from tests.fakeserver import FakeOpenAI
from tests.memkeyring import MemoryKeyring
from tests.ui.conftest import until, wheel


@pytest.fixture
def model_config(home_dir: Path) -> dict[str, Any]:
    """A first run: config.yaml without a model."""
    settings: dict[str, Any] = {"provider": {"timeout": 10, "retry_delays": [0.05]}}
    write_config(home_dir, **settings)
    return settings


def panel_for(qtbot: QtBot, bridge: CoreBridge, *servers: KnownServer) -> OnboardingPanel:
    panel = OnboardingPanel(bridge, servers=servers)
    qtbot.addWidget(panel)
    panel.resize(760, 900)
    panel.show()
    return panel


def use_buttons(panel: OnboardingPanel) -> list[QPushButton]:
    return [b for b in panel.findChildren(QPushButton) if b.text() == "Use this"]


async def answer(bridge: CoreBridge, text: str) -> str:
    done: list[TurnFinished] = []
    bridge.event.connect(lambda e: done.append(e) if isinstance(e, TurnFinished) else None)
    bridge.send("desktop:first", text)
    await until(lambda: done, timeout=20)
    return done[0].content


async def test_one_click_uses_a_detected_local_server(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                     closed_port: int) -> None:
    assert bridge.core.config.model == ""
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", fake.port, "openai"),
                      KnownServer("llama.cpp", closed_port, "openai"))
    configured: list[bool] = []
    panel.configured.connect(lambda: configured.append(True))
    await until(lambda: use_buttons(panel), message="the server was offered")
    labels = [label.text() for label in panel.findChildren(QLabel)]
    assert len(use_buttons(panel)) == 1 and f"<b>LM Studio</b> at http://127.0.0.1:{fake.port}" in labels
    use_buttons(panel)[0].click()
    await until(lambda: configured, message="saved")
    on_disk = yaml.safe_load(bridge.core.settings.path.read_text(encoding="utf-8"))
    assert on_disk["model"] == "openai/test" and on_disk["api_base"] == fake.base_url
    assert await answer(bridge, "hello there") == "echo: hello there"


async def test_existing_nanobot_workspace_is_offered_and_kept(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                              home_dir: Path) -> None:
    old = Path.home() / ".nanobot" / "workspace"
    (old / "memory").mkdir(parents=True)
    (old / "memory" / "MEMORY.md").write_text("The user's cat is called Miso.\n", encoding="utf-8")
    panel = panel_for(qtbot, bridge, KnownServer("Ollama-like", fake.port, "openai"))
    assert panel.workspace_card.isVisible() and panel.workspace_choice.isChecked()
    assert str(old) in panel.workspace_choice.text()
    await until(lambda: use_buttons(panel))
    use_buttons(panel)[0].click()
    await until(lambda: bridge.core.config.model)
    assert bridge.core.workspace == old.resolve()
    assert (old / "memory" / "MEMORY.md").read_text(encoding="utf-8") == "The user's cat is called Miso.\n"
    await answer(bridge, "what is my cat called?")
    assert "Miso" in fake.requests[-1]["messages"][0]["content"]  # its memory reached the model


async def test_without_a_local_server_it_takes_a_provider_and_key(qtbot: QtBot, bridge: CoreBridge,
                                                                  fake: FakeOpenAI,
                                                                  memory_keyring: MemoryKeyring,
                                                                  closed_port: int) -> None:
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    await until(lambda: panel.rescan.isVisible(), message="nothing found")
    assert "No local model server found" in panel.local_status.text()
    assert not panel.workspace_card.isVisible()
    form = panel.model_form
    form.model.setCurrentText("test")
    panel.save_button.click()
    await until(lambda: "API key" in panel.status.text())
    assert bridge.core.config.model == ""  # nothing saved without a key
    qtbot.keyClicks(form.key, "sk-first-run-key-123456")
    form.api_base.setText(fake.base_url)  # the scripted server stands in for the provider
    panel.save_button.click()
    await until(lambda: bridge.core.config.model == "openai/test")
    assert memory_keyring.store[("nanobot-tray", "openai")] == "sk-first-run-key-123456"
    assert await answer(bridge, "hi") == "echo: hi"
    assert fake.headers[-1]["authorization"] == "Bearer sk-first-run-key-123456"


async def test_a_model_name_with_a_space_is_refused_before_the_first_chat(qtbot: QtBot, bridge: CoreBridge,
                                                                            memory_keyring: MemoryKeyring,
                                                                            closed_port: int) -> None:
    """"gpt 4o" typed on the first run was saved, and the first chat failed with the provider's obscure error."""
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    await until(lambda: panel.rescan.isVisible(), message="nothing found")
    form = panel.model_form
    form.model.setCurrentText("gpt 4o")
    qtbot.keyClicks(form.key, "sk-first-run-key-123456")
    panel.save_button.click()
    await until(lambda: "has a space in it" in panel.status.text(), message="the name refused")
    assert bridge.core.config.model == "" and form.model.currentText() == "gpt 4o"
    assert ("nanobot-tray", "openai") not in memory_keyring.store


@pytest.mark.parametrize(("provider", "typed"), [("nosuch", "x"), ("", "gpt-x")])
async def test_a_model_name_naming_no_provider_is_refused_without_a_server_address(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, memory_keyring: MemoryKeyring, closed_port: int,
        provider: str, typed: str) -> None:
    """Settings refused nosuch/x (or a bare gpt-x) with no server address, but first-run setup saved it, and the
    first chat failed. Setup refuses it the same way, saying what to give, with the cursor on the provider; nothing
    is saved and no key stored. With a server address the name is the server's: saved."""
    name = "/".join(filter(None, (provider, typed)))
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    form = panel.model_form
    await until(lambda: panel.rescan.isVisible() and form.provider.count() > 20, message="nothing found, list in")
    form.provider.setCurrentText(provider)
    form.model.setCurrentText(typed)
    qtbot.keyClicks(form.key, "sk-first-run-key-123456")
    panel.save_button.click()
    await until(lambda: "names no provider" in panel.status.text(), message="the name refused")
    said = panel.status.text()
    assert f"'{name}' names no provider" in said and "openai/gpt-4o-mini" in said
    assert panel.focusWidget() is form.provider
    assert (form.provider.currentText(), form.model.currentText()) == (provider, typed)
    assert bridge.core.config.model == "" and memory_keyring.store == {}
    form.key.clear()
    form.api_base.setText(fake.base_url)
    panel.save_button.click()
    await until(lambda: bridge.core.config.model == name, message="saved with the server's address")


async def test_an_empty_model_field_is_refused_in_the_words_settings_uses(qtbot: QtBot, bridge: CoreBridge,
                                                                          memory_keyring: MemoryKeyring,
                                                                          closed_port: int) -> None:
    """Setup said "Choose or type a model first." where Settings said "Choose the model that answers (pick one on
    the Model page, …)", a page setup does not have. Both say it in one way now, and, as Settings does, put the
    cursor in the Model field; nothing is saved and no key stored."""
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    await until(lambda: panel.rescan.isVisible(), message="nothing found")
    form = panel.model_form
    qtbot.keyClicks(form.key, "sk-first-run-key-123456")
    panel.save_button.click()
    await until(lambda: panel.status.text(), message="the save refused")
    assert panel.status.text() == "Choose the model that answers first: pick one from the Model list, or type its name."
    assert panel.focusWidget() is form.model
    assert bridge.core.config.model == "" and memory_keyring.store == {}


async def test_typing_while_save_checks_the_model_name_does_not_save_an_unchecked_name(
        qtbot: QtBot, bridge: CoreBridge, memory_keyring: MemoryKeyring, closed_port: int) -> None:
    """While Save waited for the model helper (seconds, started anew) the form took typing, and setup then saved
    the name as it was after the check, never checked. The form now waits, greyed, with a word why; what is saved
    is the name checked."""
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    form = panel.model_form
    await until(lambda: panel.rescan.isVisible() and form.provider.count() > 20, message="nothing found, list in")
    form.model.setCurrentText("gpt-4o-mini")
    qtbot.keyClicks(form.key, "sk-first-run-key-123456")
    await run_on_model_thread(model_helper().close())
    panel.save_button.click()
    await until(lambda: panel.status.text() == CHECKING_NAME, message="the check under way")
    greyed = not form.model.isEnabled() and not panel.save_button.isEnabled()
    qtbot.keyClicks(form.model, "-typed")
    await until(lambda: bridge.core.config.model, message="saved")
    assert bridge.core.config.model == form.model_name() == "openai/gpt-4o-mini" and greyed
    assert "Ready" in panel.status.text()


async def test_an_unreadable_settings_file_is_why_setup_shows_again(qtbot: QtBot, bridge: CoreBridge,
                                                                    home_dir: Path) -> None:
    path = bridge.core.settings.path
    path.write_text("model: [openai/gpt-4o\napi_base: http://x\n", encoding="utf-8")  # a hand edit gone wrong
    panel = panel_for(qtbot, bridge)
    await until(lambda: panel.why.isVisible(), message="the reason is shown")
    assert "could not be read" in panel.why.text() and "not valid YAML" in panel.why.text()
    assert "keeps a copy" in panel.why.text()


async def test_a_plain_first_run_gives_no_reason(qtbot: QtBot, bridge: CoreBridge) -> None:
    panel = panel_for(qtbot, bridge)
    await until(lambda: "Looking for" not in panel.local_status.text(), message="the scan ended")
    assert panel.why.isHidden()


async def test_a_custom_server_on_any_port_with_a_key_is_tested_and_used(qtbot: QtBot, bridge: CoreBridge,
                                                                         fake: FakeOpenAI,
                                                                         memory_keyring: MemoryKeyring,
                                                                         closed_port: int, tmp_path: Path) -> None:
    fake.require_key = "sk-proxy-key-7890"  # a LiteLLM proxy with a master key, on a port of its own
    fake.models = ["test", "Qwen/Qwen2.5-7B-Instruct"]
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    form = panel.server_form
    panel.server_save_button.click()
    await until(lambda: "server's address" in panel.server_status.text())
    qtbot.keyClicks(form.api_base, fake.base_url)
    assert not panel.server_status.text()  # the note about the missing address went with the typing
    qtbot.keyClicks(form.key, "sk-proxy-key-7890")
    await until(lambda: form.model.findText("Qwen/Qwen2.5-7B-Instruct") >= 0, message="the server's models")
    form.model.setCurrentText("test")
    form.test_button.click()
    await until(lambda: form.test_result.text().startswith("✓"), timeout=20)
    panel.grab().save(str(tmp_path / "onboarding-custom-server.png"))
    panel.server_save_button.click()
    await until(lambda: bridge.core.config.model == "openai/test")
    assert bridge.core.config.api_base == fake.base_url
    assert memory_keyring.store[("nanobot-tray", "openai")] == "sk-proxy-key-7890"
    assert "sk-proxy" not in bridge.core.settings.path.read_text(encoding="utf-8")
    assert await answer(bridge, "hi") == "echo: hi"


async def test_a_custom_servers_first_model_fills_the_empty_model_field(qtbot: QtBot, bridge: CoreBridge,
                                                                        fake: FakeOpenAI, closed_port: int) -> None:
    """Nothing to type but the address: once the server lists its models, the first is chosen and the others
    are offered."""
    fake.models = ["qwen2.5-7b-instruct", "llama-3.1-8b"]
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    form = panel.server_form
    assert not form.model.currentText()
    qtbot.keyClicks(form.api_base, fake.base_url)
    await until(lambda: form.model.currentText(), message="the model field filled from the server's list")
    offered = [form.model.itemText(i) for i in range(form.model.count())]
    assert sorted(offered) == sorted(fake.models) and form.model.currentText() == offered[0]
    panel.server_save_button.click()
    await until(lambda: bridge.core.config.model == f"openai/{offered[0]}")


def dismissed_prompt() -> Exception:
    """What the Secret Service backend raises when its password prompt is cancelled, word for word."""
    return keyring.errors.InitError("Failed to create the collection: Prompt dismissed..")


def seen(panel: OnboardingPanel, widget: QWidget) -> bool:
    """Whether `widget` is shown whole in the panel's scrolled area, without scrolling."""
    scroll = panel.findChild(QScrollArea)
    assert scroll is not None
    viewport = scroll.viewport()
    top_left = widget.mapTo(viewport, QPoint(0, 0))
    return widget.isVisible() and viewport.rect().contains(QRect(top_left, widget.size()))


async def key_refused(qtbot: QtBot, panel: OnboardingPanel, fake: FakeOpenAI) -> ModelForm:
    form = panel.server_form
    qtbot.keyClicks(form.api_base, fake.base_url)
    await until(lambda: form.model.currentText() == "test", message="the server's model")
    qtbot.keyClicks(form.key, "sk-proxy-key-7890")
    panel.server_save_button.click()
    await until(lambda: panel.server_key_problem.isVisible(), message="the key was refused")
    return form


async def test_a_dismissed_keyring_prompt_says_so_and_setup_can_go_on_without_the_key(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, memory_keyring: MemoryKeyring, closed_port: int,
        tmp_path: Path) -> None:
    memory_keyring.failure = dismissed_prompt()
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    panel.resize(900, 640)  # the custom server's card is below the fold
    form = await key_refused(qtbot, panel, fake)
    said = panel.server_key_problem.text.text()
    assert said.startswith("The key was not stored: the keyring's password prompt was dismissed.")
    assert "Error" not in said and ".." not in said
    await until(lambda: seen(panel, panel.server_key_problem), message="the message scrolled into view")
    panel.grab().save(str(tmp_path / "onboarding-key-refused.png"))
    assert bridge.core.config.model == ""  # nothing saved behind the person's back

    panel.server_key_problem.go_on.click()  # a local server may need no key
    await until(lambda: bridge.core.config.model == "openai/test")
    assert bridge.core.config.api_base == fake.base_url
    assert memory_keyring.store == {} and not panel.server_key_problem.isVisible()
    assert form.key.text() == "sk-proxy-key-7890"  # not lost: Settings can store it later
    assert await answer(bridge, "hi") == "echo: hi"


async def test_try_again_asks_the_keyring_again_and_stores_the_key(qtbot: QtBot, bridge: CoreBridge,
                                                                   fake: FakeOpenAI, memory_keyring: MemoryKeyring,
                                                                   closed_port: int) -> None:
    memory_keyring.failure = dismissed_prompt()
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    await key_refused(qtbot, panel, fake)
    memory_keyring.failure = None  # this time the person unlocks it
    panel.server_key_problem.try_again.click()
    await until(lambda: bridge.core.config.model == "openai/test")
    assert memory_keyring.store[("nanobot-tray", "openai")] == "sk-proxy-key-7890"
    assert not panel.server_key_problem.isVisible()


async def test_a_settings_file_kept_as_it_is_says_the_key_is_stored(qtbot: QtBot, bridge: CoreBridge,
                                                                    fake: FakeOpenAI, memory_keyring: MemoryKeyring,
                                                                    closed_port: int) -> None:
    """Setup stores a typed key before it writes config.yaml, so a key the keyring refuses saves nothing. When the
    file is then not written (here the person keeps an unreadable one as it is), setup said only that nothing was
    saved, though the key was stored; it says so now."""
    path = bridge.core.settings.path
    path.write_text("model: [openai/gpt-4o\n", encoding="utf-8")  # a hand edit gone wrong
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    form = panel.server_form
    qtbot.keyClicks(form.api_base, fake.base_url)
    await until(lambda: form.model.currentText() == "test", message="the server's model")
    qtbot.keyClicks(form.key, "sk-proxy-key-7890")
    panel.server_save_button.click()
    await until(lambda: any(box.isVisible() for box in panel.findChildren(QMessageBox)), message="asked first")
    box = next(box for box in panel.findChildren(QMessageBox) if box.isVisible())
    assert box.text().startswith("config.yaml could not be read at all")
    box.button(QMessageBox.StandardButton.Cancel).click()
    await until(lambda: panel.server_status.text(), message="the outcome")
    assert panel.server_status.text() == ("Not saved: config.yaml was left as it is. Your API key is stored in the "
                                          "keyring all the same.")
    assert memory_keyring.store[("nanobot-tray", "openai")] == "sk-proxy-key-7890"
    assert path.read_text(encoding="utf-8") == "model: [openai/gpt-4o\n" and bridge.core.config.model == ""


async def test_forget_stored_key_shows_only_beside_a_stored_key(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                                memory_keyring: MemoryKeyring,
                                                                closed_port: int) -> None:
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    await until(lambda: "keyring" in panel.model_form.keyring_note.text(), message="the forms loaded")
    assert not panel.model_form.forget.isVisible() and not panel.server_form.forget.isVisible()
    assert memory_keyring.calls == []  # finding out asked the keyring nothing
    form = panel.server_form
    qtbot.keyClicks(form.api_base, fake.base_url)
    await until(lambda: form.model.currentText() == "test", message="the server's model")
    qtbot.keyClicks(form.key, "sk-proxy-key-7890")
    panel.server_save_button.click()
    await until(lambda: bridge.core.config.model == "openai/test")
    await until(lambda: form.forget.isVisible(), message="a key is stored now")
    form.forget.click()
    await until(lambda: not form.forget.isVisible(), message="gone with the key")
    assert ("nanobot-tray", "openai") not in memory_keyring.store


async def test_scrolling_the_welcome_page_over_the_forms_changes_no_field(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, closed_port: int) -> None:
    """The walk: scrolling down the welcome page put a catalogue model into the custom server's empty Model
    field, which then stayed when the server listed its own models."""
    fake.models = ["qwen2.5-7b-instruct", "llama-3.1-8b"]
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    panel.resize(760, 500)
    cloud, server = panel.model_form, panel.server_form
    await until(lambda: cloud.model.count() > 10 and server.model.count() > 10, message="the catalogue loaded")
    scroll = panel.findChild(QScrollArea).verticalScrollBar()
    for field in (cloud.provider, cloud.model, server.model):
        scroll.setValue(0)
        wheel(field)
        assert scroll.value() > 0, "the page scrolled"
    assert (cloud.provider.currentText(), cloud.model.currentText(), server.model.currentText()) == ("openai", "", "")
    qtbot.keyClicks(server.api_base, fake.base_url)
    await until(lambda: server.model.currentText(), message="the model field filled from the server's list")
    assert server.model.currentText() in fake.models  # the server's own, not a name the wheel put there


async def test_the_model_field_says_what_to_do_when_no_list_can_come(
        qtbot: QtBot, bridge: CoreBridge, closed_port: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model field said "Loading the model list…" for good when the model library could not be loaded (the
    list never came), and in the custom server's card before any address was given (its list is the server's).
    Each now says what to do instead."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "litellm.py").write_text("raise ImportError('a damaged install')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(broken), str(Path(__file__).parents[2])]))
    await run_on_model_thread(model_helper().close())  # the next one starts with the damaged library
    monkeypatch.setattr(catalog, "_models", None)  # as in an app just started: the list is asked for anew
    try:
        panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
        custom = panel.server_form.model.lineEdit()
        assert custom.placeholderText() == "Give the server's address to list its models, or type the model's name"
        field = panel.model_form.model.lineEdit()
        await until(lambda: field.placeholderText() == "Type a model name", timeout=60,
                    message="the field still waits for a list")
    finally:
        await run_on_model_thread(model_helper().close())
async def test_a_second_click_while_the_keyring_asks_saves_once(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                                memory_keyring: MemoryKeyring,
                                                                closed_port: int) -> None:
    """Save waited for the keyring (its password prompt open, as long as the person takes) with the Save buttons
    still live: a second click stored the key again, saved again and said twice that setup was done. While a save
    is under way, Save does nothing more."""
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    await until(lambda: panel.rescan.isVisible(), message="nothing found")
    configured: list[bool] = []
    panel.configured.connect(lambda: configured.append(True))
    form = panel.model_form
    form.model.setCurrentText("test")
    form.api_base.setText(fake.base_url)
    qtbot.keyClicks(form.key, "sk-first-run-key-123456")
    memory_keyring.gate = threading.Event()  # the keyring's prompt is open until the test answers it
    panel.save_button.click()
    await until(lambda: "set openai" in memory_keyring.calls, message="the keyring asked")
    panel.save_button.click()
    panel.server_save_button.click()
    await asyncio.sleep(0.3)  # a second save, had one started, reaches the keyring meanwhile
    memory_keyring.gate.set()
    await until(lambda: configured, message="saved")
    await until(lambda: not taskset.pending(), message="every save ended")
    assert configured == [True] and memory_keyring.calls.count("set openai") == 1
    assert bridge.core.config.model == "openai/test" and "Ready" in panel.status.text()
    assert panel.save_button.isEnabled() and panel.server_save_button.isEnabled()


async def test_typing_while_the_keyring_asks_does_not_save_an_unchecked_name(
        qtbot: QtBot, bridge: CoreBridge, memory_keyring: MemoryKeyring, closed_port: int) -> None:
    """After the model name's check, Save waits for the keyring (its password prompt open as long as the person
    takes) with the form taking typing, and setup then saved the name as typed meanwhile, never checked. The form
    now waits, greyed, until the key is stored; what is saved is the name checked."""
    panel = panel_for(qtbot, bridge, KnownServer("LM Studio", closed_port, "openai"))
    form = panel.model_form
    await until(lambda: panel.rescan.isVisible() and form.provider.count() > 20, message="nothing found, list in")
    form.model.setCurrentText("gpt-4o-mini")
    qtbot.keyClicks(form.key, "sk-first-run-key-123456")
    memory_keyring.gate = threading.Event()  # the keyring's prompt is open until the test answers it
    panel.save_button.click()
    await until(lambda: "set openai" in memory_keyring.calls, message="the keyring asked")
    form.model.setFocus()
    qtbot.keyClicks(form.model, "-typed")
    memory_keyring.gate.set()
    await until(lambda: bridge.core.config.model, message="saved")
    assert bridge.core.config.model == form.model_name() == "openai/gpt-4o-mini"
    assert form.model.isEnabled() and "Ready" in panel.status.text()
