"""The one settings writer: reads config.yaml, validates, writes it atomically and says which keys changed.

Every part of the core holds the same live `Config` object and reads it when it acts; `Settings`
updates that object in place and then tells the parts that copied a value (tools, the turn gate, the
hotkey, Dream's timer, ...) which dotted keys changed. A part subscribes to the keys it cares about
where it is built: `settings.subscribe("tools", listener)` hears `tools.exec.timeout` too.

Three ways in, one way through:
- `save(config)`: a form (Settings, onboarding) that read the file with `read()` saves its values.
- `update(edit)`: a small change (a skill toggle, `nanobot-tray skills enable`) made to the file as it
  is on disk now, never to the settings in force, so a hand edit is never reverted.
- `reload()`: the file changed under us (an editor); the app's file watcher calls it.

A window that shows the file (Settings) `follow`s it: it hears every save, update and reload, also one
that changed no value in force (a new problem in the file), and `carry_edits` puts only what the person
changed in it on top of the file as it is now.

Qt-free: the app, the CLI and the tests use it alike."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import logging
import shutil
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from desktop.config import (
    Config,
    LoadedConfig,
    by_key,
    flatten,
    load_config,
    members,
    name_schema,
    save_config,
    set_value_at,
    validate,
    value_at,
    write_schema,
)
from desktop.kernel.atomic import atomic_write_text

log = logging.getLogger(__name__)

Listener = Callable[[frozenset[str]], Awaitable[None] | None]
Follower = Callable[[], None]


class SettingsError(Exception):
    """A change that was refused; the message says why in words a user can act on."""


class Settings:
    def __init__(self, loaded: LoadedConfig) -> None:
        self.path = loaded.path
        self.config = loaded.config  # the live object every part holds
        self.problems = loaded.problems  # what was wrong with the file when last read
        self._on_disk = copy.deepcopy(loaded.config)
        self._listeners: list[tuple[tuple[str, ...], Listener]] = []
        self._followers: list[Follower] = []
        self._lock = asyncio.Lock()

    @classmethod
    def open(cls, path: Path) -> Settings:
        """Read config.yaml (written with defaults when missing) and keep its schema beside it for editors.
        Blocking: call off the GUI thread."""
        loaded = load_config(path)
        if loaded.unreadable:
            loaded = _last_good(loaded)
        elif not loaded.problems:
            _keep_as_last_good(path)
        write_schema(path)
        if not loaded.problems:  # a file with problems stays exactly as written until fixed or replaced
            name_schema(path)
        return cls(loaded)

    def subscribe(self, keys: str | Iterable[str], listener: Listener) -> Callable[[], None]:
        """Call `listener(changed)` after a change to any of `keys` or below them; returns an unsubscribe."""
        entry = ((keys,) if isinstance(keys, str) else tuple(keys), listener)
        self._listeners.append(entry)
        return lambda: self._listeners.remove(entry) if entry in self._listeners else None

    def follow(self, follower: Follower) -> Callable[[], None]:
        """Call `follower()` after every save, update and reload, whether or not a value in force changed (a
        problem can appear in the file without one); returns an unfollow. For a window that shows the file."""
        self._followers.append(follower)
        return lambda: self._followers.remove(follower) if follower in self._followers else None

    async def read(self) -> LoadedConfig:
        """config.yaml as it is on disk now, with its problems, for a form to edit. Changes nothing. A file that
        cannot be read at all gives the settings in force instead (the last ones read well, `unreadable` set):
        a form that showed defaults would offer to save them over a working setup."""
        loaded = await asyncio.to_thread(load_config, self.path)
        if loaded.unreadable:
            loaded.config = copy.deepcopy(self._on_disk)
        return loaded

    async def save(self, new: Config, *, keep_broken_copy: bool = False) -> Path | None:
        """Write `new` as config.yaml and put it in force. With `keep_broken_copy` the file being replaced
        had problems: it is copied aside first so nothing the user wrote is lost; returns the copy."""
        await asyncio.to_thread(check, new)  # a setting may look at the disk (the workspace folder)
        async with self._lock:
            copied = await asyncio.to_thread(self._write, new, keep_broken_copy)
            self.problems.clear()
            changed = self._take(new)
        await self._publish(changed)
        return copied

    async def update(self, edit: Callable[[Config], None]) -> frozenset[str]:
        """Apply `edit` to config.yaml as it is on disk now and put the result in force. Refused while the
        file has problems: saving would replace what the user wrote with defaults."""
        async with self._lock:
            current = await self.read()
            if current.problems:
                raise SettingsError(f"{self.path} has problems ({current.problems[0]}); "
                                    "fix it before changing settings")
            new = current.config
            edit(new)
            await asyncio.to_thread(check, new)
            await asyncio.to_thread(self._write, new, False)
            self.problems.clear()
            changed = self._take(new)
        await self._publish(changed)
        return changed

    async def reload(self) -> frozenset[str]:
        """Take config.yaml as edited by hand. Bad keys fall back to their defaults as at start; a file
        that cannot be read at all keeps the settings in force (and its problem is reported)."""
        async with self._lock:
            current = await self.read()
            if current.unreadable:
                self.problems[:] = [f"{p}; the settings in force stay until it is fixed" for p in current.problems]
                log.warning("config.yaml could not be read; keeping the settings in force: %s", current.problems)
                changed: frozenset[str] = frozenset()
            else:
                self.problems[:] = current.problems
                if not current.problems:
                    await asyncio.to_thread(_keep_as_last_good, self.path)
                changed = self._take(current.config)
        await self._publish(changed)
        return changed

    # ----- internals
    def _write(self, new: Config, keep_broken_copy: bool) -> Path | None:
        copied = None
        if keep_broken_copy and self.path.exists():
            copied = self.path.with_name(f"{self.path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
            shutil.copy2(self.path, copied)
        save_config(self.path, new)
        _keep_as_last_good(self.path)
        return copied

    def _take(self, on_disk: Config) -> frozenset[str]:
        """Make `on_disk` the settings in force; returns the keys whose value changed."""
        live = copy.deepcopy(on_disk)
        changed = _changed(self.config, live)
        _assign(self.config, live)
        self._on_disk = copy.deepcopy(on_disk)
        return changed

    async def _publish(self, changed: frozenset[str]) -> None:
        await self._tell(changed)
        for follower in list(self._followers):
            try:
                follower()
            except Exception:  # a window failing to follow must not stop the others
                log.exception("a window failed to follow config.yaml")

    async def _tell(self, changed: frozenset[str]) -> None:
        if not changed:
            return
        log.info("settings changed: %s", ", ".join(sorted(changed)))
        for keys, listener in list(self._listeners):
            heard = frozenset(c for c in changed if any(_matches(k, {c}) for k in keys))
            if not heard:
                continue
            try:
                result = listener(heard)
                if inspect.isawaitable(result):
                    await result
            except Exception:  # one part failing to follow must not keep the others on old settings
                log.exception("a part failed to take new settings (%s)", ", ".join(sorted(heard)))


def edited_keys(shown: Config, edited: Config) -> frozenset[str]:
    """The keys (dotted, as `by_key` gives them) whose value `edited` changed from `shown`."""
    before = by_key(shown)
    return frozenset(key for key, value in by_key(edited).items() if before.get(key, _MISSING) != value)


def carry_edits(shown: Config, edited: Config, onto: Config) -> frozenset[str]:
    """Put into `onto` (config.yaml as it is now) each key whose value `edited` changed from `shown` (what a
    form showed before the person touched it), and no other: a form opened before the file changed saves the
    person's changes, never its stale copy of the rest. Returns the keys carried."""
    keys = edited_keys(shown, edited)
    for key in keys:
        set_value_at(onto, key, copy.deepcopy(value_at(edited, key)))
    return keys


def last_good_path(path: Path) -> Path:
    """A copy of config.yaml as it last read without a problem: what a file broken by hand while the app was
    closed is replaced with at start, so a typo never brings back onboarding or defaults over a working setup."""
    return path.with_name(f"{path.name}.last-good")


def _keep_as_last_good(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    kept = last_good_path(path)
    if not kept.exists() or kept.read_text(encoding="utf-8") != text:
        atomic_write_text(kept, text)


def _last_good(broken: LoadedConfig) -> LoadedConfig:
    """At start, for a config.yaml that cannot be read at all: the last settings that worked (the broken file
    stays as written until fixed or replaced), else defaults."""
    kept = last_good_path(broken.path)
    earlier = load_config(kept) if kept.exists() else None
    if earlier is None or earlier.unreadable:
        broken.problems[:] = [f"{p}; using defaults" for p in broken.problems]
        return broken
    broken.problems[:] = [f"{p}; the app goes on with the last settings that worked until it is fixed"
                          for p in broken.problems]
    return LoadedConfig(earlier.config, broken.path, broken.problems, True)


def check(config: Config) -> None:
    """Raise SettingsError, in words for the person, when `config` has a value `save` would refuse."""
    wrong = validate(config)
    if wrong:
        raise SettingsError("Not saved: " + "; ".join(wrong))


def _changed(old: Config, new: Config) -> frozenset[str]:
    a, b = flatten(old), flatten(new)
    return frozenset(k for k in a.keys() | b.keys() if a.get(k, _MISSING) != b.get(k, _MISSING))


def _matches(key: str, changed: Iterable[str]) -> bool:
    """`key` is one of `changed`, a section above one of them, or a key inside a changed mapping."""
    return any(c == key or c.startswith(key + ".") or key.startswith(c + ".") for c in changed)


def _assign(target: Any, source: Any) -> None:
    """Copy `source` into `target` field by field, keeping the section objects parts may hold."""
    for (name, old), (_, new) in zip(members(target), members(source)):
        if dataclasses.is_dataclass(old) and not isinstance(old, type):
            _assign(old, new)
        else:
            set_value_at(target, name, new)


_MISSING = object()
