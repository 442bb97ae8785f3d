"""config.yaml: defaults on first run, clear messages for mistakes, the user's file never overwritten."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from desktop.config import (
    Bounds,
    Config,
    Declared,
    declared,
    load_config,
    lookup,
    save_config,
    schema,
    validate,
)
from desktop.scheduler.settings import SchedulesConfig


def test_missing_file_gets_defaults_written(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    loaded = load_config(path)
    assert loaded.problems == [] and loaded.config == Config()
    assert "restrict_to_workspace: true" in path.read_text()
    assert "api_key" not in path.read_text()
    again = load_config(path)
    assert again.config == Config() and again.problems == []


def test_invalid_yaml_names_file_and_line_and_keeps_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    broken = "model: openai/gpt-4o-mini\ntemperature: 0.2\ntools: [unclosed\n"
    path.write_text(broken)
    loaded = load_config(path)
    assert loaded.config == Config()
    assert len(loaded.problems) == 1
    assert str(path) in loaded.problems[0] and "line" in loaded.problems[0] and "YAML" in loaded.problems[0]
    assert path.read_text() == broken


@pytest.mark.parametrize(("text", "line", "reads"), [
    ("model: x\ntools: [unclosed\ntemperature: 0.2\n", 2, "tools: [unclosed"),  # where the [ opens
    ("model: 'openai/gpt\ntemperature: 0.2\n", 1, "model: 'openai/gpt"),  # where the quote opens
    ("model: x\ntemperature: a: b\n", 2, "temperature: a: b"),
])
def test_invalid_yaml_names_the_line_to_fix_as_written(tmp_path: Path, text: str, line: int, reads: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    problem = load_config(path).problems[0]
    assert f"line {line}, which reads “{reads}”: not valid YAML" in problem


def test_wrong_types_keep_the_good_keys(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    text = ("model: openai/gpt-4o-mini\n"
            "temperature: hot\n"
            "max_iterations: 12\n"
            "tools:\n"
            "  exec:\n"
            "    timeout: soon\n"
            "  restrict_to_workspace: false\n"
            "colour: blue\n")
    path.write_text(text)
    loaded = load_config(path)
    config = loaded.config
    assert config.model == "openai/gpt-4o-mini" and config.max_iterations == 12
    assert config.temperature == Config().temperature
    assert config.tools.exec.timeout == 60 and config.tools.restrict_to_workspace is False
    joined = "\n".join(loaded.problems)
    assert f"{path} line 2: key 'temperature' should be a number" in joined
    assert f"{path} line 6: key 'tools.exec.timeout' should be a whole number" in joined
    assert "line 8: unknown key 'colour'" in joined
    assert path.read_text() == text


def test_integers_are_accepted_for_numbers(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("temperature: 1\napi_base: null\nprovider:\n  retry_delays: [1, 2.5]\n")
    loaded = load_config(path)
    assert loaded.problems == []
    assert loaded.config.temperature == 1.0 and loaded.config.provider.retry_delays == [1.0, 2.5]


def test_out_of_range_values_fall_back_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    text = ("model: openai/gpt-4o-mini\n"
            "max_iterations: -3\n"
            "temperature: 2.5\n"
            "max_concurrent_turns: 0\n"
            "context_window_tokens: 32000\n"
            "provider:\n"
            "  timeout: 0\n"
            "  retry_delays: [1, -2]\n"
            "tools:\n"
            "  exec:\n"
            "    timeout: -1\n"
            "  web:\n"
            "    search_provider: bing\n"
            "schedules:\n"
            "  dream_interval: -60\n"
            "  heartbeat_interval: 0\n")
    path.write_text(text)
    loaded = load_config(path)
    config, joined = loaded.config, "\n".join(loaded.problems)
    defaults = Config()
    assert config.max_iterations == defaults.max_iterations and config.temperature == defaults.temperature
    assert config.max_concurrent_turns == defaults.max_concurrent_turns
    assert config.provider.timeout == defaults.provider.timeout
    assert config.provider.retry_delays == defaults.provider.retry_delays
    assert config.tools.exec.timeout == 60 and config.tools.web.search_provider == "duckduckgo"
    assert config.section(SchedulesConfig).dream_interval == defaults.section(SchedulesConfig).dream_interval
    # the good keys are kept, 0 is a valid interval ("never")
    assert config.model == "openai/gpt-4o-mini" and config.context_window_tokens == 32000
    assert config.section(SchedulesConfig).heartbeat_interval == 0
    assert f"{path} line 2: key 'max_iterations' should be a whole number at least 1, got -3; using the default" \
        in joined
    assert f"{path} line 3: key 'temperature' should be a number from 0 to 2, got 2.5" in joined
    assert f"{path} line 4: key 'max_concurrent_turns' should be a whole number at least 1" in joined
    assert f"{path} line 7: key 'provider.timeout' should be a number above 0, got 0" in joined
    assert f"{path} line 8: key 'provider.retry_delays' should be a list of numbers each at least 0" in joined
    assert f"{path} line 11: key 'tools.exec.timeout' should be a whole number from 1 to 600, got -1" in joined
    assert f"{path} line 13: key 'tools.web.search_provider' should be one of duckduckgo, brave, got 'bing'" \
        in joined
    assert f"{path} line 15: key 'schedules.dream_interval' should be a whole number at least 0" in joined
    assert len(loaded.problems) == 8 and path.read_text() == text


def test_validate_names_out_of_range_values_of_a_config_about_to_be_saved() -> None:
    config = Config()
    assert validate(config) == []
    config.max_tokens = 3  # the walk saved this from Settings: no room for a sentence or a tool call
    config.context_window_tokens = 2048
    config.temperature = -0.5
    assert validate(config) == ["key 'temperature' should be a number from 0 to 2, got -0.5",
                                "key 'max_tokens' should be a whole number at least 256, got 3",
                                "key 'context_window_tokens' should be a whole number at least 4096, got 2048"]


def test_exec_limits_below_their_floor_are_refused(tmp_path: Path) -> None:
    """A slip (2 for 2048) must not leave every command unable to start."""
    path = tmp_path / "config.yaml"
    path.write_text("tools:\n  exec:\n    max_processes: 2\n    max_memory_mb: 2\n    max_file_mb: 0\n")
    loaded = load_config(path)
    assert (loaded.config.tools.exec.max_processes, loaded.config.tools.exec.max_memory_mb,
            loaded.config.tools.exec.max_file_mb) == (256, 2048, 1024)
    assert [p.split(": ", 1)[1] for p in loaded.problems] == [
        "key 'tools.exec.max_processes' should be a whole number at least 16, got 2; using the default",
        "key 'tools.exec.max_memory_mb' should be a whole number at least 64, got 2; using the default",
        "key 'tools.exec.max_file_mb' should be a whole number at least 1, got 0; using the default"]


def test_the_former_network_switch_is_read_as_a_mode_and_saved_in_the_new_form(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    for written, meant in (("true", "internet"), ("false", "off"), ("yes", "internet"), ("off", "off"),
                           ("'off'", "off"), ("internet", "internet"), ("host", "host")):
        path.write_text(f"tools:\n  exec:\n    timeout: 30\n    network: {written}\n")
        loaded = load_config(path)
        assert loaded.problems == [] and loaded.config.tools.exec.network == meant, written
    save_config(path, loaded.config)
    assert load_config(path).config.tools.exec.network == "host"
    path.write_text("tools:\n  exec:\n    network: false\n")
    save_config(path, load_config(path).config)
    assert "network: 'off'" in path.read_text() and load_config(path).config.tools.exec.network == "off"


def test_an_unknown_network_mode_is_named_with_its_line_and_only_it_falls_back(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("tools:\n  exec:\n    timeout: 30\n    network: everywhere\n")
    loaded = load_config(path)
    assert loaded.config.tools.exec.network == "internet" and loaded.config.tools.exec.timeout == 30
    assert loaded.problems == [f"{path} line 4: key 'tools.exec.network' should be one of internet, off, host, "
                               "got 'everywhere'; using the default"]


def _declarations(cls: type = Config, prefix: str = "") -> list[tuple[str, Declared]]:
    found = []
    for spec in declared(cls):
        inner = spec.section or spec.entries
        found.append((f"{prefix}{spec.name}", spec))
        if inner is not None:
            found += _declarations(inner, f"{prefix}{spec.name}{'.NAME' if spec.entries else ''}.")
    return found


def test_every_key_is_declared_with_a_label_one_line_of_help_and_a_default_it_allows() -> None:
    keys = _declarations()
    assert {"temperature", "tools.exec.network", "mcp.servers.NAME.timeout", "schedules.missed_grace"} \
        <= {key for key, _ in keys}
    for key, spec in keys:
        meta = spec.setting
        assert meta.label and meta.help and "\n" not in meta.help, key
        if spec.hint in (int, float) or spec.hint == list[float]:
            assert meta.bounds is not None and meta.bounds.low is not None, f"{key} has no lowest value"
        if spec.section is None and spec.entries is None:
            assert meta.wrong(spec.default()) is None, f"{key}'s default is not allowed by its own bounds"
    assert validate(Config()) == []
    assert lookup("tools.exec.max_memory_mb").setting.bounds == Bounds(64)
    with pytest.raises(KeyError, match="no setting 'tools.exec.colour'"):
        lookup("tools.exec.colour")


def test_a_setting_without_a_declaration_is_refused() -> None:
    @dataclass
    class Section:
        colour: str = "blue"

    with pytest.raises(TypeError, match="Section.colour is not declared with setting"):
        declared(Section)


def test_sections_live_with_their_features_and_load_without_the_heavy_libraries() -> None:
    """Importing desktop.config loads no feature (they import it: see its docstring); making a Config loads
    each feature's section, and none of that brings in Qt, litellm, the MCP SDK or pydantic. The sections are
    read from Config's fields, so a feature's new section is checked without being named here."""
    code = ("import dataclasses, sys\n"
            "import desktop.config\n"
            "named = {f.metadata['setting'].section for f in dataclasses.fields(desktop.config.Config)\n"
            "         if 'setting' in f.metadata}\n"
            "lazy = sorted({of.partition(':')[0] for of in named if isinstance(of, str)})\n"
            "print(lazy)\n"
            "print(sorted(m for m in sys.modules if m.endswith('.settings') and m.count('.') == 2))\n"
            "desktop.config.Config()\n"
            "print(sorted(m for m in lazy if m in sys.modules))\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'PySide6', 'litellm', 'mcp', 'pydantic'}))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lazy, before, after, heavy = result.stdout.splitlines()
    sections = ast.literal_eval(lazy)
    assert sections and all(re.fullmatch(r"desktop\.\w+\.settings", name) for name in sections), sections
    assert before == "[]"
    assert after == lazy
    assert heavy == "[]"


def _schema_nodes(node: dict[str, Any], path: str = "") -> list[tuple[str, bool, dict[str, Any]]]:
    """Every sub-schema with where it is and whether it is a key's own: properties, list items, mapping values
    and the options of a nullable value."""
    found = []
    for name, inner in node.get("properties", {}).items():
        key = f"{path}.{name}".lstrip(".")
        found += [(key, True, inner), *_schema_nodes(inner, key)]
    for part, suffix in (("items", "[]"), ("additionalProperties", ".NAME")):
        if isinstance(node.get(part), dict):
            found += [(path + suffix, False, node[part]), *_schema_nodes(node[part], path + suffix)]
    for option in node.get("anyOf", []):
        found += [(path, False, option), *_schema_nodes(option, path)]
    return found


def test_the_schema_describes_every_setting_and_bounds_every_number() -> None:
    nodes = _schema_nodes(schema())
    properties = [(path, node) for path, own, node in nodes if own]
    assert [path for path, _ in properties] == [key for key, _ in _declarations()]
    for path, node in properties:
        assert node.get("title") and node.get("description"), f"{path} is not described"
    numbers = [(path, node) for path, _, node in nodes
               if {"integer", "number"} & set(node["type"] if isinstance(node.get("type"), list)
                                               else [node.get("type")])]
    assert {path for path, _ in numbers} >= {"temperature", "provider.retry_delays[]", "mcp.servers.NAME.timeout"}
    for path, node in numbers:
        assert "minimum" in node or "exclusiveMinimum" in node, f"{path} has no lowest value"
    exec_ = schema()["properties"]["tools"]["properties"]["exec"]["properties"]
    assert exec_["timeout"] | {"description": ""} == {
        "title": "Stop a command after", "description": "", "type": "integer", "minimum": 1, "maximum": 600,
        "default": 60}
    assert exec_["network"]["enum"] == ["internet", "off", "host"]


def test_the_schema_flags_what_the_loader_refuses_and_passes_what_it_writes(tmp_path: Path) -> None:
    """An editor checking against the schema and the app reading the file agree on what is wrong."""
    checker = jsonschema.Draft7Validator(schema())
    path = tmp_path / "config.yaml"
    save_config(path, Config())
    assert list(checker.iter_errors(yaml.safe_load(path.read_text()))) == []
    text = ("temperature: 2.5\n"
            "colour: blue\n"
            "tools:\n"
            "  exec:\n"
            "    timeout: 700\n"
            "    network: everywhere\n"
            "mcp:\n"
            "  servers:\n"
            "    time:\n"
            "      command: uvx\n"
            "      timeout: 0\n"
            "provider:\n"
            "  retry_delays: [1, -2]\n")
    path.write_text(text)
    flagged = {".".join(map(str, error.absolute_path)) or "colour"
               for error in checker.iter_errors(yaml.safe_load(text))}
    refused = {problem.split("'")[1] for problem in load_config(path).problems}
    assert flagged == {"temperature", "colour", "tools.exec.timeout", "tools.exec.network",
                       "mcp.servers.time.timeout", "provider.retry_delays.1"}
    assert refused == {"temperature", "colour", "tools.exec.timeout", "tools.exec.network",
                       "mcp.servers.time.timeout", "provider.retry_delays"}


def test_a_bare_yes_or_no_where_text_belongs_says_to_put_it_in_quotes(tmp_path: Path) -> None:
    """YAML reads a bare yes, no, on or off as true or false: `command: yes` (the program `yes`) or an argument
    `off` (or `DEBUG: on` in a server's env) arrived as True and False, and the message said only "should be text or empty, got True", which reads
    as if the file said True. It now says why and how to write it."""
    path = tmp_path / "config.yaml"
    path.write_text("mcp:\n  servers:\n    echoes:\n      command: yes\n      args: [--mode, off]\n"
                    "      env: {DEBUG: on}\n"
                    "max_iterations: yes\n")
    joined = "\n".join(load_config(path).problems)
    quote = 'YAML reads a bare yes, no, on or off as true or false: put text in quotes, as "yes"'
    assert f"line 4: key 'mcp.servers.echoes.command' should be text or empty, got True ({quote}); using" in joined
    assert f"line 5: key 'mcp.servers.echoes.args' should be a list of texts, got ['--mode', False] ({quote})" \
        in joined
    assert f"line 6: key 'mcp.servers.echoes.env' should be a mapping of names to text, got {{'DEBUG': True}} ({quote})" \
        in joined
    assert "key 'max_iterations' should be a whole number, got True; using the default" in joined  # a number: no note
