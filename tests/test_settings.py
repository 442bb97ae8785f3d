"""The one settings writer: a skill toggle or a save never reverts a hand edit, a hand edit reaches the
agent, parts follow the keys they subscribed to, and bad values are refused."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from desktop.agent.gate import TurnGate
from desktop.config import Config, schema
from desktop.core import Core, build_core
from desktop.kernel.bus import TurnFinished
from desktop.memory import Memory
from desktop.settings import Settings, SettingsError, carry_edits
from desktop.skills.loader import set_skill_enabled
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI


def on_disk(core: Core) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(core.settings.path.read_text(encoding="utf-8"))


def hand_edit(core: Core, **changes: object) -> None:
    data = on_disk(core)
    for dotted, value in changes.items():
        *sections, last = dotted.split("__")
        target = data
        for name in sections:
            target = target.setdefault(name, {})
        target[last] = value
    core.settings.path.write_text(yaml.safe_dump(data), encoding="utf-8")


async def test_a_toggle_keeps_a_hand_edit_and_a_hand_edit_reaches_the_agent(
        core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    hand_edit(core, temperature=0.7)  # the app is not told (no watcher here): the file is the truth

    await set_skill_enabled(core.settings, "weather", False)

    saved = on_disk(core)
    assert saved["model"] == "openai/test" and saved["temperature"] == 0.7
    assert saved["skills"]["disabled"] == ["weather"]
    assert core.config.temperature == 0.7 and core.config.skills.disabled == ["weather"]

    hand_edit(core, model="openai/edited")
    assert await core.settings.reload() == {"model"}
    assert core.config.model == "openai/edited"
    await chat.ask("hello")
    assert fake.requests[-1]["model"] == "edited"
    assert await core.settings.reload() == set()  # nothing new on disk: nobody is told anything


async def test_parts_hear_only_the_keys_they_subscribed_to(core: Core) -> None:
    heard: list[tuple[str, frozenset[str]]] = []
    core.settings.subscribe("tools", lambda keys: heard.append(("tools", keys)))
    core.settings.subscribe(["model", "hotkey"], lambda keys: heard.append(("model", keys)))

    async def slow(keys: frozenset[str]) -> None:
        await asyncio.sleep(0)
        heard.append(("exec", keys))

    core.settings.subscribe("tools.exec.timeout", slow)
    hand_edit(core, tools__exec__timeout=5, tools__restrict_to_workspace=False, temperature=1.5)
    await core.settings.reload()
    assert heard == [("tools", {"tools.exec.timeout", "tools.restrict_to_workspace"}),
                     ("exec", {"tools.exec.timeout"})]
    # the tools copy their settings when built: they were rebuilt
    exec_tool = core.tools.get("exec")
    assert exec_tool is not None and exec_tool.timeout == 5  # type: ignore[attr-defined]


async def test_a_follower_hears_every_read_of_the_file_even_one_that_changed_nothing_in_force(core: Core) -> None:
    """The Settings window shows a problem that appears in the file at once, though no value in force changed."""
    heard: list[list[str]] = []
    unfollow = core.settings.follow(lambda: heard.append(list(core.settings.problems)))
    text = core.settings.path.read_text(encoding="utf-8")
    core.settings.path.write_text(text + "temperature: hot\n", encoding="utf-8")  # the default, 0.1, stays in force
    assert await core.settings.reload() == set()
    assert len(heard) == 1 and "'temperature' should be a number, got 'hot'" in heard[0][0]
    core.settings.path.write_text(text + "temperature: [hot\n", encoding="utf-8")  # not YAML any more
    await core.settings.reload()
    assert len(heard) == 2 and "not valid YAML" in heard[1][0]
    unfollow()
    core.settings.path.write_text(text, encoding="utf-8")
    await core.settings.reload()
    assert len(heard) == 2


def test_carrying_edits_keeps_what_changed_in_the_file_meanwhile() -> None:
    shown = Config(temperature=0.2, max_tokens=8192)
    edited = copy.deepcopy(shown)
    edited.temperature = 0.3
    edited.tools.exec.network = "off"
    on_disk = Config(temperature=0.2, context_window_tokens=32768)
    on_disk.tools.exec.timeout = 90
    assert carry_edits(shown, edited, on_disk) == {"temperature", "tools.exec.network"}
    assert (on_disk.temperature, on_disk.context_window_tokens, on_disk.tools.exec.timeout,
            on_disk.tools.exec.network) == (0.3, 32768, 90, "off")


async def until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_a_new_limit_of_concurrent_turns_applies_to_waiting_turns(core: Core, fake: FakeOpenAI) -> None:
    hand_edit(core, max_concurrent_turns=1)
    await core.settings.reload()
    fake.add({"content": "slow", "delay": 2}, {"content": "fast"})
    first, second = Conversation(core, chat_id="a"), Conversation(core, chat_id="b")
    await first.send("one")
    await until(lambda: len(fake.requests) == 1)
    await second.send("two")
    for _ in range(20):
        await asyncio.sleep(0)
    assert core.loop.busy_sessions == ["cli:a"]  # the second waits for the only place
    hand_edit(core, max_concurrent_turns=2)
    await core.settings.reload()
    await second.wait_end()
    assert not [e for e in first.of(TurnFinished) if e.session_key == first.key]  # it ran while the first one still held its place
    await first.wait_end()


async def test_the_gate_keeps_running_turns_when_the_limit_drops() -> None:
    gate = TurnGate(2)
    order: list[str] = []
    release = asyncio.Event()

    async def turn(name: str) -> None:
        async with gate.slot(name):
            order.append(name)
            await release.wait()

    tasks = [asyncio.ensure_future(turn(n)) for n in "abc"]
    await until(lambda: order == ["a", "b"])
    gate.resize(1)
    release.set()
    await asyncio.gather(*tasks)
    assert order == ["a", "b", "c"] and gate.running == 0


async def test_an_unreadable_file_keeps_the_settings_in_force_and_blocks_toggles(core: Core) -> None:
    path = core.settings.path
    broken = "model: [unclosed\n"
    path.write_text(broken, encoding="utf-8")
    assert await core.settings.reload() == set()
    assert core.config.model == "openai/test" and "not valid YAML" in core.settings.problems[0]
    with pytest.raises(SettingsError, match="fix it before changing settings"):
        await set_skill_enabled(core.settings, "weather", False)
    assert path.read_text(encoding="utf-8") == broken


async def test_a_file_broken_while_the_app_was_closed_starts_with_the_last_settings_that_worked(
        tmp_path: Path) -> None:
    """A typo made with the app closed used to start it on defaults: onboarding again, rules gone, and a save
    away from losing the setup. It starts with the last settings that read well; the file stays as written."""
    path = tmp_path / "config.yaml"
    settings = Settings.open(path)
    await settings.update(lambda c: setattr(c, "model", "openai/mine"))
    working = path.read_text(encoding="utf-8")
    broken = working.replace("model: openai/mine", "model: [openai/mine")
    path.write_text(broken, encoding="utf-8")
    again = Settings.open(path)
    assert again.config.model == "openai/mine"
    assert "line" in again.problems[0] and "last settings that worked" in again.problems[0]
    assert (await again.read()).config.model == "openai/mine"  # what Settings shows to edit
    with pytest.raises(SettingsError, match="fix it before changing settings"):
        await again.update(lambda c: setattr(c, "temperature", 0.1))
    assert path.read_text(encoding="utf-8") == broken
    path.write_text(working.replace("openai/mine", "openai/fixed"), encoding="utf-8")
    assert "model" in await again.reload() and again.problems == []
    path.write_text("model: [\n", encoding="utf-8")
    assert Settings.open(path).config.model == "openai/fixed"  # the fixed file became the last good one


async def test_a_bad_key_in_a_hand_edit_falls_back_to_its_default(core: Core) -> None:
    hand_edit(core, max_iterations=-3, temperature=0.5)
    await core.settings.reload()
    assert core.config.max_iterations == Config().max_iterations and core.config.temperature == 0.5
    assert "max_iterations" in core.settings.problems[0]


async def test_out_of_range_values_are_never_written(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    settings = Settings.open(path)
    before = path.read_text(encoding="utf-8")
    config = Config(max_iterations=0)
    with pytest.raises(SettingsError, match="key 'max_iterations' should be a whole number at least 1, got 0"):
        await settings.save(config)
    with pytest.raises(SettingsError):
        await settings.update(lambda c: setattr(c, "temperature", 3.0))
    assert path.read_text(encoding="utf-8") == before and settings.config == Config()


async def test_save_replaces_a_broken_file_only_keeping_a_copy(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("temperature: warm\n", encoding="utf-8")
    settings = Settings.open(path)
    assert settings.problems
    copied = await settings.save(Config(model="openai/x"), keep_broken_copy=True)
    assert copied is not None and copied.read_text(encoding="utf-8") == "temperature: warm\n"
    assert settings.problems == [] and settings.config.model == "openai/x"
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["model"] == "openai/x"


async def test_a_hand_edited_workspace_moves_context_memory_and_tools_at_once(core: Core, tmp_path: Path) -> None:
    elsewhere = tmp_path / "moved"
    hand_edit(core, workspace=str(elsewhere))
    assert await core.settings.reload() == {"workspace"}
    assert core.workspace == elsewhere.resolve() == core.context.workspace == core.get(Memory).store.workspace
    await until(lambda: (elsewhere / "memory").is_dir())  # the folder is made in the background


async def test_config_yaml_names_its_schema_which_is_kept_beside_it(tmp_path: Path) -> None:
    """Editors that read `# yaml-language-server: $schema=` complete and check config.yaml; the line is added
    to an older file without changing anything else in it, and only to a file without problems."""
    path = tmp_path / "config.yaml"
    schema_file = tmp_path / "config.schema.json"
    settings = Settings.open(path)
    assert path.read_text(encoding="utf-8").splitlines()[0] == "# yaml-language-server: $schema=config.schema.json"
    assert json.loads(schema_file.read_text(encoding="utf-8")) == schema()

    schema_file.write_text("{}", encoding="utf-8")  # as an older version wrote it
    older = "# my settings\r\nmodel: openai/gpt-4o-mini   # the cheap one\r\n"
    path.write_bytes(older.encode())
    Settings.open(path)
    assert path.read_bytes() == b"# yaml-language-server: $schema=config.schema.json\r\n" + older.encode()
    assert json.loads(schema_file.read_text(encoding="utf-8")) == schema()
    Settings.open(path)
    assert path.read_bytes().count(b"yaml-language-server") == 1

    broken = "model: openai/gpt-4o-mini\ntemperature: warm\n"
    path.write_text(broken, encoding="utf-8")
    assert Settings.open(path).problems and path.read_text(encoding="utf-8") == broken

    path.write_text("model: openai/gpt-4o-mini\n", encoding="utf-8")
    settings = Settings.open(path)
    await settings.update(lambda config: setattr(config, "temperature", 0.5))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# yaml-language-server: $schema=config.schema.json" and "temperature: 0.5" in lines


async def test_a_folder_that_cannot_hold_the_schema_does_not_stop_the_settings(tmp_path: Path,
                                                                               caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("model: openai/gpt-4o-mini\n", encoding="utf-8")
    (tmp_path / "config.schema.json").mkdir()  # not a file: writing it fails
    settings = Settings.open(path)
    assert settings.config.model == "openai/gpt-4o-mini" and settings.problems == []
    assert "could not write config.yaml's schema" in caplog.text
    await settings.update(lambda config: setattr(config, "temperature", 0.5))  # saved all the same
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["temperature"] == 0.5


async def problems_of_a_start_after(damage: Callable[[Path], None], fake: FakeOpenAI) -> list[str]:
    """The problems read at a start after `damage` was done to config.yaml, the last time the app ran having left
    its setup working; asserts that the setup still answers a turn."""
    first = build_core()
    await first.start()
    await first.close()
    damage(first.settings.path)
    again = build_core()
    await again.start()
    try:
        fake.add({"content": "still set up"})
        end = await Conversation(again).ask("hello", timeout=20)
        assert isinstance(end, TurnFinished) and end.content == "still set up"
        return again.settings.problems
    finally:
        await again.close()


async def test_a_config_file_cut_to_nothing_keeps_the_setup_and_its_last_good_copy(
        model_config: dict[str, object], memory_keyring: object, fake: FakeOpenAI, home_dir: Path) -> None:
    """config.yaml left empty (a crash mid-save, a full disk) read as "no settings": the app started on defaults,
    said nothing, and copied the empty file over config.yaml.last-good, the one copy of the working setup."""
    path, kept = home_dir / "config.yaml", home_dir / "config.yaml.last-good"
    working: list[str] = []

    def empty(path: Path) -> None:
        working.append(kept.read_text(encoding="utf-8"))
        path.write_text("", encoding="utf-8")

    problems = await problems_of_a_start_after(empty, fake)
    assert "is empty" in problems[0] and "last settings that worked" in problems[0]
    assert kept.read_text(encoding="utf-8") == working[0] and path.read_text(encoding="utf-8") == ""


async def test_a_folder_where_config_yaml_should_be_starts_the_app_with_the_last_settings_that_worked(
        model_config: dict[str, object], memory_keyring: object, fake: FakeOpenAI, home_dir: Path) -> None:
    """A folder in config.yaml's place (a backup restored wrong) stopped the app from starting at all."""
    def folder(path: Path) -> None:
        path.unlink()
        (path / "kept by hand").mkdir(parents=True)

    assert "could not be read" in (await problems_of_a_start_after(folder, fake))[0]
    assert (home_dir / "config.yaml" / "kept by hand").is_dir()


async def test_a_config_file_saved_as_utf16_is_named_so_and_the_last_settings_that_worked_are_used(
        model_config: dict[str, object], memory_keyring: object, fake: FakeOpenAI) -> None:
    """An editor's "Unicode" is UTF-16: read as UTF-8 it was reported as "not valid YAML (unacceptable
    character)"."""
    def utf16(path: Path) -> None:
        path.write_bytes(path.read_text(encoding="utf-8").encode("utf-16"))

    problems = await problems_of_a_start_after(utf16, fake)
    assert "is saved as UTF-16; save it as UTF-8" in problems[0]
