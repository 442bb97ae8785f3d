"""config.yaml: every setting declared once, on its field, and read so that a mistake costs only that key.

A setting is a dataclass field made with `setting(...)`: the annotation is its type, and the field carries
its default, bounds, choices, a label and one line of help. Everything else is derived from that one
declaration: the loader's checks and messages (with the line of each mistake), `validate` before a save,
the rows of the Settings window for simple fields (desktop/ui/settings.py), the JSON Schema editors use to
complete and check config.yaml (`config.schema.json` beside it, named on its first line; printed by
`nanobot-tray config schema`), and the README's key table (tests/readme_settings.py).

`Config` holds the app-wide keys and the core's sections (the model connection, tools, skills). A feature
brings its own section: a `Section` (its key, its class, a label and help) declared in the feature's package
and named on its `Feature` (desktop/kernel/host.py), so adding a feature's settings edits no file here.
`Config.sections` holds those sections by key, and `config.section(McpConfig)` reads one, typed. The
feature list is desktop/core.py's FEATURES, read when a `Config` is first made rather than when this module
is imported: the features import this module, so importing them from here would go round in a circle. So
the first `Config` costs what importing the core costs (about half a second on a busy two-core machine);
the app and the command line have imported the core by the time they read config.yaml, so there it adds
nothing. A core section's class is named by its module path and imported then too, for the same reason.

Why dataclasses and not pydantic (installed already, for litellm): `import desktop.config` takes about
75 ms, while `from pydantic import BaseModel` alone takes 97 ms or more and building fourteen models like
these another 45 ms (best of 15-25 runs each), and nothing on the app's start path imports pydantic today
(litellm and the MCP SDK load later, off it). pydantic would also fail a whole model where the loader
keeps every good key, coerce "5" to 5 unless told to be strict, and take `dataclasses.replace`, which parts
use on these objects. The schema it would write is the small part: `schema()` below."""

from __future__ import annotations

import codecs
import dataclasses
import functools
import importlib
import json
import logging
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from desktop.kernel.atomic import atomic_write_text
from desktop.workspace.placement import configured_misplaced

if TYPE_CHECKING:
    from desktop.providers.settings import ProviderConfig
    from desktop.skills.settings import SkillsConfig
    from desktop.tools.settings import ToolsConfig

log = logging.getLogger(__name__)
T = TypeVar("T")

SCHEMA_FILE = "config.schema.json"  # beside config.yaml, where the first line's relative path finds it
MODELINE = f"# yaml-language-server: $schema={SCHEMA_FILE}"
HEADER = f"{MODELINE}\n# Nanobot Tray settings. API keys live in the OS keyring, never here.\n"
JSON_SCHEMA_DRAFT = "http://json-schema.org/draft-07/schema#"  # the newest yaml-language-server reads


@dataclass(frozen=True)
class Bounds:
    """The range a number setting must fall in (a list of numbers: each item)."""

    low: float | None = None
    high: float | None = None
    above: bool = False  # `low` itself is not allowed

    def admits(self, value: float) -> bool:
        if self.low is not None and (value <= self.low if self.above else value < self.low):
            return False
        return self.high is None or value <= self.high

    def describe(self) -> str:
        if self.low is not None and self.high is not None:
            return f"from {self.low:g} to {self.high:g}"
        if self.low is not None:
            return f"above {self.low:g}" if self.above else f"at least {self.low:g}"
        return f"at most {self.high:g}"


@dataclass(frozen=True)
class Unit:
    """How a number is shown in the Settings window: `suffix` after it, counted in steps of `per` of the
    stored value (seconds shown as minutes: per=60)."""

    suffix: str
    per: int = 1


SECONDS = Unit("s")
MINUTES = Unit("min", 60)  # the file holds seconds
MB = Unit("MB")
TOKENS = Unit("tokens")


@dataclass(frozen=True)
class Setting:
    """What one key is, for people: the loader's checks, the Settings window, the schema and the README."""

    label: str  # a few words: the row's label in Settings (a checkbox's text), the schema's title
    help: str  # one line: what it does, in what unit, what 0 or empty means
    bounds: Bounds | None = None  # numbers (a list of numbers: each item)
    choices: tuple[tuple[str, str], ...] = ()  # text: the allowed values, each with its label in Settings
    unit: Unit | None = None
    zero: str = ""  # what 0 means, shown in its place in Settings ("Off")
    step: float | None = None  # one click of a Settings spin box, when not 1
    former: tuple[tuple[Any, str], ...] = ()  # values earlier versions wrote, read as what they meant
    item: str = ""  # a mapping of sections: what one entry is called in messages ("MCP server")
    section: type | str | None = None  # a section: its class, or "module:Class" imported when first needed
    check: Callable[[Any], str | None] | None = None  # a rule bounds and choices cannot say, for a set value

    def wrong(self, value: Any) -> str | None:
        """What `value` (already of the right type) should be instead, or None when it is allowed."""
        if self.check is not None and value is not None and (wanted := self.check(value)):
            return wanted
        if self.bounds is not None and value is not None:
            items = value if isinstance(value, list) else [value]
            if not all(self.bounds.admits(v) for v in items):
                kind = ("a list of numbers each" if isinstance(value, list)
                        else "a whole number" if isinstance(value, int) else "a number")
                return f"{kind} {self.bounds.describe()}"
        if self.choices and value not in self.values:
            return "one of " + ", ".join(self.values)
        return None

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(value for value, _ in self.choices)


_KEY = "setting"  # where a field's metadata holds its Setting


def setting(default: Any = dataclasses.MISSING, *, factory: Callable[[], Any] | None = None, label: str,
            help: str, low: float | None = None, high: float | None = None, above: bool = False,
            choices: Mapping[str, str] | None = None, unit: Unit | None = None, zero: str = "",
            step: float | None = None, former: Mapping[Any, str] | None = None, item: str = "",
            compare: bool = True, check: Callable[[Any], str | None] | None = None) -> Any:
    """A settings field: `default` (or `factory` for a list or mapping) and what a person needs to know.
    `low`/`high`/`above` bound a number; `choices` maps each allowed text to its label in Settings; `check`
    says what a set value should be instead ("a folder ..."), or None when it is allowed."""
    bounds = Bounds(low, high, above) if low is not None or high is not None else None
    meta = Setting(label, help, bounds, tuple((choices or {}).items()), unit, zero, step,
                   tuple((former or {}).items()), item, check=check)
    if factory is not None:
        return field(default_factory=factory, compare=compare, metadata={_KEY: meta})
    return field(default=default, compare=compare, metadata={_KEY: meta})


def section(of: type | str, *, label: str, help: str) -> Any:
    """A section of settings within `Config` or another section: a class, or "module:Class" for a core
    section kept in its own package, imported when a config is first made (see the module docstring)."""
    return field(default_factory=lambda: _section_class(of)(),
                 metadata={_KEY: Setting(label, help, section=of)})


@dataclass(frozen=True)
class Section:
    """A feature's own section of config.yaml: the top-level `key` it sits under, its class (a dataclass of
    `setting()` fields), and what a person reads about it. Named on the feature's `Feature(settings=...)`."""

    key: str
    of: type
    label: str
    help: str


_SECTIONS = "feature sections"  # marks the one field of Config that is not a key: the features' sections


@functools.cache
def feature_sections() -> tuple[Section, ...]:
    """The sections of the features in desktop/core.py's FEATURES, in that order."""
    from desktop.core import FEATURES  # late: the features import this module (see the module docstring)

    found = tuple(f.settings for f in FEATURES if f.settings is not None)
    own = {f.name for f in dataclasses.fields(Config)}
    taken = [s.key for i, s in enumerate(found) if s.key in own or s.key in {t.key for t in found[:i]}]
    if taken:
        raise ValueError(f"two settings sections under the same key: {', '.join(taken)}")
    return found


def _feature_defaults() -> dict[str, Any]:
    return {s.key: s.of() for s in feature_sections()}


@dataclass
class Config:
    """All settings. The keys here are the app's own; each feature's section lives with the feature."""

    model: str = setting("", label="Model", help="The model that answers, as a litellm model string "
                         "(provider/name), e.g. openai/gpt-4o-mini or ollama_chat/llama3.1.")
    api_base: str | None = setting(None, label="Server address", help="The model server's address for a local "
                                   "or OpenAI-compatible server, e.g. http://localhost:11434; empty for the "
                                   "provider's own.")
    temperature: float = setting(0.1, low=0, high=2, step=0.1, label="Temperature",
                                 help="Lower is more focused and repeatable, higher more varied.")
    # Floors so a slip (3 for 3000) is refused rather than breaking every turn. An answer of fewer than 256
    # tokens cannot hold a paragraph or a tool call's arguments (a file to write): turns would end cut off
    # mid-call. No chat model in use reads fewer than 4096 tokens at once, and less leaves the conversation
    # no room beside the system prompt and the tools' descriptions (about 5,000 tokens by the app's own
    # estimate, which errs high, with every tool loaded).
    max_tokens: int = setting(8192, low=256, unit=TOKENS, label="Longest answer",
                              help="The most tokens one answer may use.")
    context_window_tokens: int = setting(65536, low=4096, unit=TOKENS, label="Context window",
                                         help="How much of the conversation the model can read at once; older "
                                         "parts are summarised into memory to stay within it.")
    max_iterations: int = setting(40, low=1, label="Model calls per turn",
                                  help="The most model calls one turn may make (each round of tool calls is one).")
    max_concurrent_turns: int = setting(3, low=1, label="Chats answering at once",
                                        help="Turns running at the same time in different chats; more wait.")
    max_subagents: int = setting(3, low=1, label="Background tasks at once",
                                 help="Background tasks running at once (more wait); they never take a chat's "
                                 "place.")
    subagent_max_iterations: int = setting(15, low=1, label="Model calls per background task",
                                           help="The most model calls one background task may make.")
    workspace: str | None = setting(None, label="Workspace folder",
                                    help="Where memory, skills and the assistant's files live; empty for the "
                                    "default (~/Nanobot).", check=configured_misplaced)
    hotkey: str = setting("Ctrl+Alt+Space", label="Global hotkey",
                          help="The key chord that opens the quick prompt, e.g. Ctrl+Alt+Space or Super+Space.")
    notifications: bool = setting(True, label="Show desktop notifications (background answers, reminders, "
                                  "memory updates)", help="Desktop notifications for answers that arrive in the "
                                  "background, reminders and memory updates.")
    provider: ProviderConfig = section("desktop.providers.settings:ProviderConfig", label="Model connection",
                                       help="How long to wait for the model and when to retry.")
    tools: ToolsConfig = section("desktop.tools.settings:ToolsConfig", label="Tools",
                                 help="What the file, shell and web tools may do.")
    skills: SkillsConfig = section("desktop.skills.settings:SkillsConfig", label="Skills",
                                   help="Which skills the assistant may use.")
    # Each feature's own section by its key, in config.yaml beside the keys above (`section()` reads one).
    sections: dict[str, Any] = field(default_factory=_feature_defaults, repr=False, metadata={_SECTIONS: True})

    def section(self, of: type[T]) -> T:
        """A feature's own section, by its class: `config.section(McpConfig).servers`."""
        key = next((s.key for s in feature_sections() if s.of is of), None)
        if key is None:
            raise LookupError(f"{of.__name__} is not the settings section of any feature")
        found = self.sections[key]
        assert isinstance(found, of)
        return found


@dataclass(frozen=True)
class Declared:
    """One field as declared: its name, type, what a person sees of it, and its default."""

    name: str
    hint: Any
    setting: Setting
    default: Callable[[], Any]

    @property
    def section(self) -> type | None:
        """The section class of a section field, else None."""
        return _section_class(self.setting.section) if self.setting.section is not None else None

    @property
    def entries(self) -> type | None:
        """The section class of a mapping of named sections (`dict[str, Section]`, such as mcp.servers)."""
        if typing.get_origin(self.hint) is not dict:
            return None
        item = typing.get_args(self.hint)[1]
        return item if isinstance(item, type) and dataclasses.is_dataclass(item) else None


@functools.cache
def declared(cls: type) -> tuple[Declared, ...]:
    """The fields of a settings class (`Config` or a section), in order. A field made without `setting()`
    is a programming error: every key needs its label and help."""
    sections = {f.type: _section_class(f.metadata[_KEY].section) for f in dataclasses.fields(cls)
                if _KEY in f.metadata and f.metadata[_KEY].section is not None}
    hints = typing.get_type_hints(cls, localns={str(k): v for k, v in sections.items()})
    found = []
    for f in dataclasses.fields(cls):
        if _SECTIONS in f.metadata:
            continue
        if _KEY not in f.metadata:
            raise TypeError(f"{cls.__name__}.{f.name} is not declared with setting() or section()")
        default = f.default_factory if f.default_factory is not dataclasses.MISSING else _constant(f.default)
        found.append(Declared(f.name, hints[f.name], f.metadata[_KEY], default))
    if cls is Config:
        found += [Declared(s.key, s.of, Setting(s.label, s.help, section=s.of), s.of) for s in feature_sections()]
    return tuple(found)


def members(value: Any) -> list[tuple[str, Any]]:
    """The keys of a settings object (`Config` or a section) with their values, in declared order: a
    feature's section is one of Config's keys like any other."""
    cls: type = type(value)
    return [(spec.name, _get(value, spec.name)) for spec in declared(cls)]


def as_dict(config: Config) -> dict[str, Any]:
    """The settings as config.yaml holds them: plain mappings, lists and values."""
    return {name: _plain(item) for name, item in members(config)}


def lookup(key: str) -> Declared:
    """The declaration of a dotted key, e.g. "tools.exec.timeout" (KeyError when there is none)."""
    cls: type | None = Config
    found = None
    for name in key.split("."):
        found = next((d for d in declared(cls) if d.name == name), None) if cls is not None else None
        if found is None:
            raise KeyError(f"no setting '{key}'")
        cls = found.section
    assert found is not None
    return found


def value_at(config: Any, key: str) -> Any:
    """The value of a dotted key in a config (or below it in a section)."""
    target: Any = config
    for name in key.split("."):
        target = _get(target, name)
    return target


def set_value_at(config: Any, key: str, value: Any) -> None:
    *sections, last = key.split(".")
    target: Any = config
    for name in sections:
        target = _get(target, name)
    if isinstance(target, Config) and last in target.sections:
        target.sections[last] = value
    else:
        setattr(target, last, value)


def _get(value: Any, name: str) -> Any:
    if isinstance(value, Config) and name in value.sections:
        return value.sections[name]
    return getattr(value, name)


def validate(config: Config) -> list[str]:
    """Range problems in a config about to be saved, in the same words as when a file is read."""
    found = []
    for dotted, meta, value in _leaves(config, ""):
        wanted = meta.wrong(value)
        if wanted:
            found.append(f"key '{dotted}' should be {wanted}, got {value!r}")
    for meta, name, entry in _entries(config):
        reason = entry.invalid() if hasattr(entry, "invalid") else None
        if reason:
            found.append(f"{meta.item or 'entry'} '{name}' {reason}")
    return found


def by_key(value: Any, prefix: str = "") -> dict[str, Any]:
    """Every declared key as dotted key -> value: sections opened up, a list or a mapping (of MCP servers,
    of tools) kept whole, so `set_value_at` can put each value back. What a form compares and carries over."""
    found: dict[str, Any] = {}
    cls: type = type(value)
    for spec in declared(cls):
        item = _get(value, spec.name)
        if spec.section is not None:
            found.update(by_key(item, f"{prefix}{spec.name}."))
        else:
            found[f"{prefix}{spec.name}"] = item
    return found


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Settings as dotted key -> value (sections and mappings opened up, lists kept whole)."""
    items: Iterable[tuple[Any, Any]]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = members(value)
    elif isinstance(value, dict) and value:
        items = value.items()
    else:
        return {prefix.rstrip("."): value}
    found: dict[str, Any] = {}
    for key, item in items:
        found.update(flatten(item, f"{prefix}{key}."))
    return found


@dataclass
class LoadedConfig:
    """The config in force plus what was wrong with the file (shown to the user, never fatal)."""

    config: Config
    path: Path
    problems: list[str]
    unreadable: bool = False  # not YAML or not a mapping: nothing in it could be used

    @property
    def broken(self) -> bool:
        return bool(self.problems)


def load_config(path: Path) -> LoadedConfig:
    """Read config.yaml; write defaults if missing; on mistakes keep defaults for the bad keys only."""
    if not path.exists():
        config = Config()
        save_config(path, config)
        return LoadedConfig(config, path, [])
    try:
        raw = path.read_bytes()
    except OSError as exc:  # a folder in its place (a backup restored wrong), no permission to read it
        return LoadedConfig(Config(), path, [f"{path} could not be read ({exc.strerror or exc})"], True)
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # an editor's "Unicode": read as UTF-8, garbage
        return LoadedConfig(Config(), path, [f"{path} is saved as UTF-16; save it as UTF-8"], True)
    text = raw.decode("utf-8", errors="replace")
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return LoadedConfig(Config(), path, [_yaml_problem(path, text, exc)], True)
    if data is None and not text.strip():  # the app never leaves it so: cut off (a crash mid-save, a full disk)
        return LoadedConfig(Config(), path, [f"{path} is empty"], True)
    if data is None:  # comments only: the person's choice of defaults
        return LoadedConfig(Config(), path, [])
    if not isinstance(data, dict):
        return LoadedConfig(Config(), path, [f"{path} line 1: expected a mapping of settings"], True)
    lines = _key_lines(node)
    problems: list[str] = []
    config = _build(Config, data, "", lines, path, problems)
    return LoadedConfig(config, path, problems)


def _yaml_problem(path: Path, text: str, exc: yaml.YAMLError) -> str:
    """Where the file stops being YAML, with that line as written, so a person finds it at a glance. (Whether
    defaults or the last good settings are used instead is the reader's to say.)"""
    mark = getattr(exc, "problem_mark", None)
    reason = getattr(exc, "problem", None) or str(exc)
    context, began = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and began is not None and ("flow" in context or "quoted" in context):
        # an unclosed [, { or quote is fixed where it opens, not where the parser gave up
        mark, reason = began, f"{context.removeprefix('while ')} that is not closed: {reason}"
    if mark is None:
        return f"{path}: not valid YAML ({reason})"
    lines = text.splitlines()
    shown = lines[mark.line].strip() if mark.line < len(lines) else ""
    reads = f", which reads “{shown[:80]}”" if shown else ""
    return f"{path} line {mark.line + 1}{reads}: not valid YAML ({reason})"


def save_config(path: Path, config: Config) -> None:
    """Write config.yaml whole (first line: where its schema is), with the comments a person wrote in it kept
    (desktop/yaml_comments.py), then the schema if it is not current."""
    from desktop.yaml_comments import carry_comments

    text = HEADER + yaml.safe_dump(as_dict(config), sort_keys=False, allow_unicode=True)
    try:
        old = path.read_text(encoding="utf-8", errors="replace")
    except OSError:  # none yet, or unreadable (a folder in its place): nothing to carry
        old = ""
    atomic_write_text(path, carry_comments(old, text, frozenset(HEADER.splitlines())))
    write_schema(path)


def schema() -> dict[str, Any]:
    """config.yaml's JSON Schema: every key with its type, label, help, default, bounds and choices."""
    return {"$schema": JSON_SCHEMA_DRAFT, "title": "Nanobot Tray settings (config.yaml)",
            "description": "Settings of Nanobot Tray. API keys live in the OS keyring, never here.",
            **_object_schema(Config)}


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def write_schema(config_path: Path) -> None:
    """config.schema.json beside config.yaml, when missing or not what this version declares (a cheap
    comparison, so it can run at every start). Only editors need it: a failure is logged, not raised."""
    target = config_path.with_name(SCHEMA_FILE)
    text = schema_text()
    try:
        if not target.is_file() or target.read_text(encoding="utf-8", errors="replace") != text:
            atomic_write_text(target, text)
    except OSError as exc:
        log.warning("could not write config.yaml's schema beside it: %s", exc)


def name_schema(config_path: Path) -> None:
    """Put the schema's line first in a config.yaml written before there was one, so editors check it; the
    rest of the file stays byte for byte. A file that is not UTF-8 is left alone (the loader says why), and
    a failure is logged, not raised: only editors need the line."""
    try:
        text = config_path.read_bytes().decode("utf-8")
        if not any(line.startswith("# yaml-language-server:") for line in text.splitlines()):
            atomic_write_text(config_path, MODELINE + ("\r\n" if "\r\n" in text else "\n") + text)
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("could not name the schema on config.yaml's first line: %s", exc)


# ----- reading


def _build(cls: type, data: dict[str, Any], prefix: str, lines: dict[str, int], path: Path,
           problems: list[str]) -> Any:
    fields = {d.name: d for d in declared(cls)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        where = f"{path} line {lines.get(dotted, 0) + 1}"
        spec = fields.get(key)
        if spec is None:
            problems.append(f"{where}: unknown key '{dotted}' (ignored)")
            continue
        if spec.section is not None:
            if isinstance(value, dict):
                values[key] = _build(spec.section, value, f"{dotted}.", lines, path, problems)
            else:
                problems.append(f"{where}: key '{dotted}' should be a section of settings; using defaults")
            continue
        if spec.entries is not None:
            if isinstance(value, dict):
                values[key] = _build_sections(spec.entries, value, f"{dotted}.", lines, path, problems)
            else:
                problems.append(f"{where}: key '{dotted}' should be a mapping of named sections; using defaults")
            continue
        value = dict(spec.setting.former).get(value, value) if isinstance(value, bool) else value
        ok, converted = _coerce(spec.hint, value)
        wanted = _describe(spec.hint) if not ok else spec.setting.wrong(converted)
        if wanted:
            note = _truth_for_text(spec.hint, value)
            problems.append(f"{where}: key '{dotted}' should be {wanted}, got {value!r}{note}; using the default")
        else:
            values[key] = converted
    if cls is not Config:
        return cls(**values)
    own = {s.key for s in feature_sections()}
    config = Config(**{k: v for k, v in values.items() if k not in own})
    config.sections.update((k, v) for k, v in values.items() if k in own)
    return config


def _build_sections(cls: type, data: dict[str, Any], prefix: str, lines: dict[str, int], path: Path,
                    problems: list[str]) -> dict[str, Any]:
    """Each named entry built like a section; an entry that is not a mapping or says it is invalid is left out."""
    built: dict[str, Any] = {}
    for name, value in data.items():
        dotted = f"{prefix}{name}"
        where = f"{path} line {lines.get(dotted, 0) + 1}"
        if not isinstance(value, dict):
            problems.append(f"{where}: '{dotted}' should be a section of settings; ignored")
            continue
        entry = _build(cls, value, f"{dotted}.", lines, path, problems)
        reason = entry.invalid() if hasattr(entry, "invalid") else None
        if reason:
            problems.append(f"{where}: '{dotted}' {reason}; ignored")
            continue
        built[str(name)] = entry
    return built


def _coerce(hint: Any, value: Any) -> tuple[bool, Any]:
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in typing.get_args(hint):
            return True, None
        return next(((True, v) for ok, v in (_coerce(a, value) for a in typing.get_args(hint)
                                             if a is not type(None)) if ok), (False, None))
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            return False, None
        items = [_coerce(item, v) for v in value]
        return (all(ok for ok, _ in items), [v for _, v in items])
    if origin is dict:
        _, item = typing.get_args(hint)
        if not isinstance(value, dict):
            return False, None
        entries = {str(k): _coerce(item, v) for k, v in value.items()}
        return all(ok for ok, _ in entries.values()), {k: v for k, (_, v) in entries.items()}
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return ok, float(value) if ok else None
    if hint is str:
        return isinstance(value, str), value
    return False, None


def _truth_for_text(hint: Any, value: Any) -> str:
    """A note for a value YAML read as true or false where text belongs (`command: yes`, an argument `off`, a
    variable `DEBUG: on`): the message would otherwise say "got True" of a file that says yes."""
    def worded(item: Any) -> Any:
        if isinstance(item, bool):
            return str(item).lower()
        if isinstance(item, list):
            return [worded(i) for i in item]
        return {k: worded(v) for k, v in item.items()} if isinstance(item, dict) else item

    if worded(value) == value or not _coerce(hint, worded(value))[0]:
        return ""
    return ' (YAML reads a bare yes, no, on or off as true or false: put text in quotes, as "yes")'


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        return " or ".join(_describe(a) for a in typing.get_args(hint))
    if origin is list:
        return f"a list of {_describe(typing.get_args(hint)[0])}s"
    if origin is dict:
        return f"a mapping of names to {_describe(typing.get_args(hint)[1])}"
    return {bool: "true or false", int: "a whole number", float: "a number", str: "text",
            type(None): "empty"}.get(hint, getattr(hint, "__name__", str(hint)))


def _key_lines(node: yaml.Node | None, prefix: str = "") -> dict[str, int]:
    """Map dotted keys to their 0-based line in the file, for messages a person can act on."""
    found: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            dotted = f"{prefix}{key_node.value}"
            found[dotted] = key_node.start_mark.line
            found.update(_key_lines(value_node, f"{dotted}."))
    return found


# ----- walking a config


def _leaves(value: Any, prefix: str) -> Iterator[tuple[str, Setting, Any]]:
    """Every key that holds a value, with its declaration, sections and named entries opened up."""
    cls: type = type(value)
    for spec in declared(cls):
        item = _get(value, spec.name)
        dotted = f"{prefix}{spec.name}"
        if spec.section is not None:
            yield from _leaves(item, f"{dotted}.")
        elif spec.entries is not None:
            for name, entry in item.items():
                yield from _leaves(entry, f"{dotted}.{name}.")
        else:
            yield dotted, spec.setting, item


def _entries(value: Any) -> Iterator[tuple[Setting, str, Any]]:
    """Every named entry of a mapping of sections (each MCP server), with the mapping's declaration."""
    cls: type = type(value)
    for spec in declared(cls):
        item = _get(value, spec.name)
        if spec.section is not None:
            yield from _entries(item)
        elif spec.entries is not None:
            yield from ((spec.setting, name, entry) for name, entry in item.items())


# ----- the schema


def _object_schema(cls: type) -> dict[str, Any]:
    properties = {}
    for spec in declared(cls):
        described = {"title": spec.setting.label, "description": spec.setting.help}
        if spec.section is not None:
            properties[spec.name] = {**described, **_object_schema(spec.section)}
        else:
            properties[spec.name] = {**described, **_type_schema(spec.hint, spec.setting),
                                     "default": _plain(spec.default())}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _type_schema(hint: Any, meta: Setting) -> dict[str, Any]:
    """The schema of a value of type `hint`; `meta`'s bounds and choices apply to it, or to a list's items."""
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        options = [_type_schema(a, meta) for a in typing.get_args(hint)]
        if all(set(o) == {"type"} for o in options):
            return {"type": [o["type"] for o in options]}
        return {"anyOf": options}
    if origin is list:
        return {"type": "array", "items": _type_schema(typing.get_args(hint)[0], meta)}
    if origin is dict:
        item = typing.get_args(hint)[1]
        inner = (_object_schema(item) if isinstance(item, type) and dataclasses.is_dataclass(item)
                 else _type_schema(item, Setting("", "")))
        return {"type": "object", "additionalProperties": inner}
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}[hint]
    found: dict[str, Any] = {"type": kind}
    if hint in (int, float) and meta.bounds is not None:
        if meta.bounds.low is not None:
            found["exclusiveMinimum" if meta.bounds.above else "minimum"] = _number(meta.bounds.low, hint)
        if meta.bounds.high is not None:
            found["maximum"] = _number(meta.bounds.high, hint)
    if hint is str and meta.choices:
        found["enum"] = list(meta.values)
    return found


def _number(value: float, hint: type) -> float | int:
    return int(value) if hint is int or value == int(value) else value


def _plain(value: Any) -> Any:
    """A default as JSON holds it."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


# ----- declarations


@functools.cache
def _section_class(of: type | str) -> type:
    if isinstance(of, type):
        return of
    module, _, name = of.partition(":")
    found = getattr(importlib.import_module(module), name)
    if not (isinstance(found, type) and dataclasses.is_dataclass(found)):
        raise TypeError(f"{of} is not a settings section")
    return found


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value
