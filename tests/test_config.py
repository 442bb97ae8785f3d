"""config.yaml: defaults on first run, clear messages for mistakes, the user's file never overwritten."""

from __future__ import annotations

from pathlib import Path

from desktop.config import Config, load_config


def test_missing_file_gets_defaults_written(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    loaded = load_config(path)
    assert loaded.problems == [] and loaded.config == Config()
    assert "restrict_to_workspace: true" in path.read_text()
    assert "api_key" not in path.read_text()
    assert load_config(path).config == Config()


def test_invalid_yaml_names_file_and_line_and_keeps_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    broken = "model: openai/gpt-4o-mini\ntemperature: 0.2\ntools: [unclosed\n"
    path.write_text(broken)
    loaded = load_config(path)
    assert loaded.config == Config()
    assert len(loaded.problems) == 1
    assert str(path) in loaded.problems[0] and "line" in loaded.problems[0] and "YAML" in loaded.problems[0]
    assert path.read_text() == broken


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
