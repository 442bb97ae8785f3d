"""`nanobot-tray chats`: list the saved chats, and export one as Markdown or HTML. Reads the chat files
directly (append-only, so a running app's chat reads whole up to its last saved line)."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from pathlib import Path

from desktop.chats.archive import write_archive
from desktop.chats.export import FORMATS, export
from desktop.config import load_config
from desktop.kernel.atomic import atomic_write_text
from desktop.kernel.paths import home
from desktop.session.session import SessionInfo, SessionStore


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("chats", help="list the saved chats, or export one as Markdown or HTML")
    chats = parser.add_subparsers(dest="chats_command", metavar="ACTION", required=True)
    chats.add_parser("list", help="every saved chat, newest first: its key, when it was last active, its title")
    p = chats.add_parser("export", help="write a chat as Markdown or a self-contained HTML page, or every chat "
                                        "as a zip (--all)")
    p.add_argument("key", nargs="?", help="the chat's key, as `chats list` shows it")
    p.add_argument("--all", action="store_true", help="every chat in one zip (-o FILE.zip): each as Markdown, "
                                                      "and the app's own chat files to restore from")
    p.add_argument("--format", choices=FORMATS, default="md", help="md (default) or html")
    p.add_argument("-o", "--output", type=Path, help="the file to write (default: print it)")
    p.add_argument("--force", action="store_true", help="replace the output file if it exists")
    p.add_argument("--reasoning", action="store_true", help="include the model's reasoning")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    h = home()
    store = SessionStore(h.sessions_dir)
    infos = await store.list()
    if args.chats_command == "list":
        if not infos:
            print("No saved chats.")
        for info in infos:
            print(f"{info.key}\t{info.updated_at[:16].replace('T', ' ')}\t{_one_column(info.title)}")
        return 0
    if args.all or args.key is None:
        return await _archive(args, store, infos)
    if args.key not in {i.key for i in infos}:
        print(f"error: no saved chat has the key {args.key!r}; `nanobot-tray chats list` shows them",
              file=sys.stderr)
        return 2
    output: Path | None = args.output
    if output is not None and _taken(output, args.force):
        return 2
    session = await store.load(args.key)
    text = await asyncio.to_thread(export, session.title, session.messages, args.format, _workspace(),
                                   args.reasoning)
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        await asyncio.to_thread(atomic_write_text, output, text)
    except OSError as exc:
        print(f"error: could not write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"Wrote {output}")
    return 0


async def _archive(args: argparse.Namespace, store: SessionStore, infos: list[SessionInfo]) -> int:
    if args.key is not None and args.all:
        print("error: give a chat's key or --all, not both", file=sys.stderr)
        return 2
    if not args.all:
        print("error: name the chat to export (`nanobot-tray chats list` shows the keys), or --all for every chat",
              file=sys.stderr)
        return 2
    output: Path | None = args.output
    if output is None:
        print("error: --all writes a zip: name it with -o FILE.zip", file=sys.stderr)
        return 2
    if _taken(output, args.force):
        return 2
    if not infos:
        print("No saved chats: nothing to export.")
        return 0
    try:
        count = await write_archive(store, infos, _workspace(), output)
    except OSError as exc:
        print(f"error: could not write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"Wrote {count} chat{'s' if count != 1 else ''} to {output}")
    return 0


def _one_column(title: str) -> str:
    """A title as one column of one line: a tab or line break in it (a first message's, a rename's) would start
    another column or line, and a script reading the list would get part of it."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+", " ", title)


def _taken(output: Path, force: bool) -> bool:
    """Whether `output` exists and may not be replaced, or its folder does not exist (said on stderr): a slip in
    the folder's name (~/Dcouments/plan.md) made that folder, and the export was not where the person looked."""
    if os.path.lexists(output) and not force:
        print(f"error: {output} exists; choose another file or add --force to replace it", file=sys.stderr)
        return True
    if not os.path.isdir(output.parent):
        print(f"error: there is no folder {output.parent}; create it first, or name a file in a folder that exists",
              file=sys.stderr)
        return True
    return False


def _workspace() -> Path:
    h = home()
    configured = load_config(h.config_file).config.workspace if h.config_file.exists() else ""
    return h.workspace(configured)
