"""`nanobot-tray config schema`: config.yaml's JSON Schema, for an editor or a check in a script. The app
also keeps it beside config.yaml as config.schema.json, which the file's first line names."""

from __future__ import annotations

import argparse
import sys

from desktop.config import schema_text


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("config", help="about config.yaml")
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("schema", help="print config.yaml's JSON Schema: every key with its type, default, "
                                      "range and help").set_defaults(func=run_schema)


def run_schema(args: argparse.Namespace) -> int:
    sys.stdout.write(schema_text())
    return 0
