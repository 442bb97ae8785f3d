"""config.yaml: typed settings with defaults, and loading that reports mistakes without losing data."""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from desktop.kernel.atomic import atomic_write_text


@dataclass
class ExecConfig:
    timeout: int = 60
    # internet: public addresses only, through the app's proxy; off: none; host: this computer's network
    network: str = "internet"
    # What one command, with everything it starts, may use (desktop/tools/limits.py says how each holds).
    max_processes: int = 256  # processes and threads running at once
    max_memory_mb: int = 2048  # memory each of its processes may use
    max_file_mb: int = 1024  # the largest file it may write


@dataclass
class WebConfig:
    search_provider: str = "duckduckgo"


@dataclass
class ToolsConfig:
    exec: ExecConfig = field(default_factory=ExecConfig)
    web: WebConfig = field(default_factory=WebConfig)
    restrict_to_workspace: bool = True


@dataclass
class ProviderConfig:
    timeout: float = 120.0
    retry_delays: list[float] = field(default_factory=lambda: [1.0, 2.0, 4.0])


@dataclass
class SkillsConfig:
    disabled: list[str] = field(default_factory=list)


@dataclass
class SchedulesConfig:
    dream_interval: int = 7200
    heartbeat_interval: int = 1800
    missed_grace: int = 3600  # seconds: a reminder due while the app was closed still runs if this late at most


@dataclass
class McpServerConfig:
    """One MCP server: a command run over stdio, or a URL (streamable HTTP, or SSE for older servers)."""

    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # values may be `keyring:NAME`
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)  # values may be `keyring:NAME`
    transport: str | None = None  # stdio, streamable-http or sse; by default from command/url
    enabled: bool = True
    timeout: float = 30.0  # seconds per tool call
    tools: list[str] | None = None  # allow-list of the server's tool names; all when absent
    # Its tools run without asking. Not compared: trusting a server must not restart it.
    trusted: bool = field(default=False, compare=False)

    def invalid(self) -> str | None:
        """Why this entry cannot work, or None."""
        if bool(self.command) == bool(self.url):
            return "needs either 'command' (a program run over stdio) or 'url' (a remote server)"
        if self.transport not in (None, "stdio", "streamable-http", "http", "sse"):
            return f"has transport {self.transport!r}; use stdio, streamable-http or sse"
        if self.command and self.transport not in (None, "stdio"):
            return f"runs a command, so its transport must be stdio, not {self.transport!r}"
        if self.url and self.transport == "stdio":
            return "has a url, so its transport cannot be stdio"
        if self.timeout <= 0:
            return "needs a timeout above 0 seconds"
        return None


@dataclass
class McpConfig:
    servers: dict[str, McpServerConfig] = field(default_factory=dict)


@dataclass
class ApprovalsConfig:
    tools: dict[str, str] = field(default_factory=dict)  # tool name -> allow, ask or deny
    timeout: float = 600.0  # seconds before an unanswered question counts as "no"
    # "Always allow" answers: {tool, what (the exact command or path), workspace (where it holds)}
    rules: list[dict[str, str]] = field(default_factory=list)


@dataclass
class Config:
    model: str = ""
    api_base: str | None = None
    temperature: float = 0.1
    max_tokens: int = 8192
    context_window_tokens: int = 65536
    max_iterations: int = 40
    max_concurrent_turns: int = 3
    max_subagents: int = 3  # background tasks running at once (more wait); they never take a chat's place
    subagent_max_iterations: int = 15
    workspace: str | None = None
    hotkey: str = "Ctrl+Alt+Space"
    notifications: bool = True
    provider: ProviderConfig = field(default_factory=ProviderConfig)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    skills: SkillsConfig = field(default_factory=SkillsConfig)
    schedules: SchedulesConfig = field(default_factory=SchedulesConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    approvals: ApprovalsConfig = field(default_factory=ApprovalsConfig)


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


BOUNDS: dict[str, Bounds] = {
    "temperature": Bounds(0, 2),
    "max_tokens": Bounds(1),
    "context_window_tokens": Bounds(1),
    "max_iterations": Bounds(1),
    "max_concurrent_turns": Bounds(1),
    "max_subagents": Bounds(1),
    "subagent_max_iterations": Bounds(1),
    "provider.timeout": Bounds(0, above=True),
    "provider.retry_delays": Bounds(0),
    "tools.exec.timeout": Bounds(0, above=True),
    # Floors so a slip (2 for 2048) is refused rather than breaking every command: a shell with a
    # pipeline needs several processes, and most programs tens of MB (Java several hundred).
    "tools.exec.max_processes": Bounds(16),
    "tools.exec.max_memory_mb": Bounds(64),
    "tools.exec.max_file_mb": Bounds(1),
    "schedules.dream_interval": Bounds(0),
    "schedules.heartbeat_interval": Bounds(0),
    "schedules.missed_grace": Bounds(0),
    "approvals.timeout": Bounds(0, above=True),
}
CHOICES: dict[str, tuple[str, ...]] = {"tools.web.search_provider": ("duckduckgo", "brave"),
                                       "tools.exec.network": ("internet", "off", "host")}
# Values earlier versions wrote, read as what they meant; the next save writes the new form.
FORMER: dict[str, dict[bool, str]] = {"tools.exec.network": {True: "internet", False: "off"}}


def out_of_range(dotted: str, value: Any) -> str | None:
    """What `value` (already of the right type) should be instead, or None when it is allowed."""
    bounds = BOUNDS.get(dotted)
    if bounds is not None:
        items = value if isinstance(value, list) else [value]
        if not all(bounds.admits(v) for v in items):
            kind = ("a list of numbers each" if isinstance(value, list)
                    else "a whole number" if isinstance(value, int) else "a number")
            return f"{kind} {bounds.describe()}"
    choices = CHOICES.get(dotted)
    if choices is not None and value not in choices:
        return "one of " + ", ".join(choices)
    return None


def validate(config: Config) -> list[str]:
    """Range problems in a config about to be saved, in the same words as when a file is read."""
    found = []
    for dotted, value in flatten(config).items():
        wanted = out_of_range(dotted, value)
        if wanted:
            found.append(f"key '{dotted}' should be {wanted}, got {value!r}")
    for name, server in config.mcp.servers.items():
        reason = server.invalid()
        if reason:
            found.append(f"MCP server '{name}' {reason}")
    return found


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Settings as dotted key -> value (sections and mappings opened up, lists kept whole)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}.items()
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
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or str(exc)
        return LoadedConfig(Config(), path, [f"{path}{where}: not valid YAML ({reason}); using defaults"], True)
    if data is None:
        return LoadedConfig(Config(), path, [])
    if not isinstance(data, dict):
        return LoadedConfig(Config(), path, [f"{path} line 1: expected a mapping of settings; using defaults"], True)
    lines = _key_lines(node)
    problems: list[str] = []
    config = _build(Config, data, "", lines, path, problems)
    return LoadedConfig(config, path, problems)


def save_config(path: Path, config: Config) -> None:
    atomic_write_text(path, "# Nanobot Tray settings. API keys live in the OS keyring, never here.\n"
                      + yaml.safe_dump(dataclasses.asdict(config), sort_keys=False, allow_unicode=True))


def _build(cls: type, data: dict[str, Any], prefix: str, lines: dict[str, int], path: Path,
           problems: list[str]) -> Any:
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    known = {f.name for f in dataclasses.fields(cls)}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        where = f"{path} line {lines.get(dotted, 0) + 1}"
        if key not in known:
            problems.append(f"{where}: unknown key '{dotted}' (ignored)")
            continue
        hint = hints[key]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if isinstance(value, dict):
                values[key] = _build(hint, value, f"{dotted}.", lines, path, problems)
            else:
                problems.append(f"{where}: key '{dotted}' should be a section of settings; using defaults")
            continue
        section = _dict_of_sections(hint)
        if section is not None:
            if isinstance(value, dict):
                values[key] = _build_sections(section, value, f"{dotted}.", lines, path, problems)
            else:
                problems.append(f"{where}: key '{dotted}' should be a mapping of named sections; using defaults")
            continue
        if isinstance(value, bool) and dotted in FORMER:
            value = FORMER[dotted][value]
        ok, converted = _coerce(hint, value)
        wanted = _describe(hint) if not ok else out_of_range(dotted, converted)
        if wanted:
            problems.append(f"{where}: key '{dotted}' should be {wanted}, got {value!r}; using the default")
        else:
            values[key] = converted
    return cls(**values)


def _dict_of_sections(hint: Any) -> type | None:
    """The section type of a `dict[str, SomeSection]` setting (named entries such as mcp.servers)."""
    if typing.get_origin(hint) is not dict:
        return None
    item = typing.get_args(hint)[1]
    return item if isinstance(item, type) and dataclasses.is_dataclass(item) else None


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
