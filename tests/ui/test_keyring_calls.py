"""The OS keyring is asked only when a key is really needed: on desktops whose login does not unlock a
keyring every call can pop up a system "Choose password for new keyring" dialog. The backend here counts
each call that would reach a real keyring."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from desktop.kernel.bus import TurnError, TurnFinished
from desktop.providers.discovery import KnownServer
from desktop.ui.bridge import CoreBridge
from desktop.ui.onboarding import OnboardingPanel
from desktop.ui.settings import SettingsWindow
from tests.fakeserver import FakeOpenAI
from tests.memkeyring import MemoryKeyring
from tests.ui.conftest import until


async def turns(bridge: CoreBridge, *texts: str) -> list[TurnFinished | TurnError]:
    ends: list[TurnFinished | TurnError] = []
    bridge.event.connect(lambda e: ends.append(e) if isinstance(e, (TurnFinished, TurnError)) else None)
    for n, text in enumerate(texts, 1):
        bridge.send("desktop:keyring", text)
        await until(lambda n=n: len(ends) >= n, timeout=30, message=f"turn {n} ended")  # type: ignore[misc]
    return ends


async def test_a_local_server_never_touches_the_keyring(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                         memory_keyring: MemoryKeyring) -> None:
    memory_keyring.locked = True  # any call would be the system's password dialog
    panel = OnboardingPanel(bridge, servers=(KnownServer("LM Studio", fake.port, "openai"),))
    qtbot.addWidget(panel)
    panel.show()
    await until(lambda: "keyring" in panel.model_form.keyring_note.text(), message="first-start form loaded")
    window = SettingsWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    form = window.model_form
    await until(lambda: form.provider.count() > 20 and "keyring" in form.keyring_note.text())
    assert "checked when a key is saved or needed" in form.keyring_note.text()
    form.test_button.click()
    await until(lambda: form.test_button.isEnabled() and form.test_result.text(), timeout=30)
    assert form.test_result.text().startswith("✓ Connected")
    ends = await turns(bridge, "one", "two", "three")
    assert [type(e) for e in ends] == [TurnFinished] * 3
    assert memory_keyring.calls == []


async def test_a_cloud_model_asks_once_per_run(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                               memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)  # "the cloud" is the scripted server
    bridge.core.config.api_base = None
    memory_keyring.store[("nanobot-tray", "openai")] = "sk-cloud-key-0001"
    window = SettingsWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    form = window.model_form
    await until(lambda: "keyring" in form.keyring_note.text())
    assert memory_keyring.calls == []  # opening Settings asks nothing
    ends = await turns(bridge, "one", "two", "three")
    assert [type(e) for e in ends] == [TurnFinished] * 3
    form.test_button.click()
    await until(lambda: form.test_button.isEnabled() and form.test_result.text(), timeout=30)
    assert form.test_result.text().startswith("✓ Connected"), form.test_result.text()
    assert memory_keyring.calls == ["get openai"]
    assert {h["authorization"] for h in fake.headers} == {"Bearer sk-cloud-key-0001"}


async def test_an_unusable_keyring_is_asked_once_and_named(bridge: CoreBridge, fake: FakeOpenAI,
                                                           memory_keyring: MemoryKeyring,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    bridge.core.config.api_base = None
    memory_keyring.locked = True
    ends = await turns(bridge, "one", "two")
    assert all(isinstance(e, TurnError) and "keyring is not usable" in e.message for e in ends), ends
    assert memory_keyring.calls == ["get openai"]
    assert fake.requests == []


async def test_the_provider_env_var_wins_without_asking(bridge: CoreBridge, fake: FakeOpenAI,
                                                         memory_keyring: MemoryKeyring,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-0002")
    bridge.core.config.api_base = None
    ends = await turns(bridge, "one")
    assert isinstance(ends[0], TurnFinished)
    assert memory_keyring.calls == [] and fake.headers[0]["authorization"] == "Bearer sk-from-env-0002"
