"""`nanobot-tray config schema`: the schema of config.yaml, the same one the app keeps beside the file."""

from __future__ import annotations

import json
from pathlib import Path

from desktop.config import schema
from tests.cli.test_cli import run_cli


def test_schema_is_printed_as_json_and_matches_the_file_beside_config_yaml(tmp_path: Path) -> None:
    printed = run_cli(tmp_path, "config", "schema")
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout) == schema()
    assert not (tmp_path / "config.yaml").exists()  # printing changes nothing
    run_cli(tmp_path, "doctor", "--offline")  # any start writes config.yaml with defaults, and its schema
    assert (tmp_path / "config.schema.json").read_text(encoding="utf-8") == printed.stdout


def test_config_without_an_action_says_which_there_are(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "config")
    assert result.returncode == 2 and "schema" in result.stderr
