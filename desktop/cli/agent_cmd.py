"""`nanobot-tray agent`: one turn (`-m`) or an interactive terminal chat, headless."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import unicodedata
from collections.abc import Awaitable

from desktop.agent.attachments import problem as attachment_problem
from desktop.approvals import ApprovalRequest, Approvals
from desktop.cli.interrupt import stop_on_interrupt
from desktop.cli.remote import Output, Terminal, add_standalone
from desktop.cli.typed import read_line
from desktop.core import Core, build_core
from desktop.kernel.bus import (
    Event,
    OutboundMessage,
    Retrying,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnError,
    TurnFinished,
    TurnProgress,
)
from desktop.kernel.channels import Channel, channel_of, session_key
from desktop.kernel.questions import Question, Questions
from desktop.kernel.taskset import spawn
from desktop.kernel.wellformed import well_formed
from desktop.session.session import fits
from desktop.subagents import Subagents

NO_TERMINAL_HINT = ("there is no terminal to ask on: run `nanobot-tray agent` with --yes to allow such calls for "
                    "one run (destructive commands stay refused)")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("agent", help="chat with the agent in the terminal (one turn with -m)")
    parser.add_argument("-m", "--message", help="send one message, print the answer and exit")
    parser.add_argument("-a", "--attach", action="append", default=[], metavar="FILE",
                        help="with -m: attach a file (repeatable); text is included in the message, and every "
                             "file is copied into the workspace under attachments/ for the model's tools")
    parser.add_argument("-s", "--session", default="direct", help="session name (default: direct → cli:direct)")
    parser.add_argument("-y", "--yes", action="store_true",
                        help="allow what would ask for approval, for this run (destructive commands stay refused)")
    parser.add_argument("--no-wait", action="store_true",
                        help="with -m: leave when the answer is printed, cancelling background tasks it started")
    add_standalone(parser)
    parser.set_defaults(func=run, serve=serve)


def serve(args: argparse.Namespace, core: Core, out: Output) -> Awaitable[int] | None:
    """In the running app: one turn (-m) in the same session as in-process; the app's approvals ask in its
    windows. The interactive chat and --yes (a promise made at this terminal) stay in the client's process."""
    if args.message is None or args.yes:
        return None
    cwd = getattr(args, "client_cwd", "")  # relative names are the client's: from its folder, not the app's
    if not cwd and any(not os.path.isabs(path) for path in args.attach):
        return None
    files = [os.path.join(cwd, path) for path in args.attach]
    return _one_turn(core, args.session, args.message, out, wait=not args.no_wait, files=files)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))


def _print_config_problems(core: Core) -> None:
    for problem in core.settings.problems:
        print(f"config: {problem}", file=sys.stderr)


def _unsendable(text: str, files: list[str]) -> str | None:
    """Why the message given with -m, or one of the files given with -a, cannot be sent (then nothing is): an
    empty message would cost a model call, or an error from a provider that refuses one."""
    if not text.strip() and not files:
        return "the message given with -m is empty; nothing was sent"
    return next((f"{wrong}; nothing was sent" for wrong in map(attachment_problem, files) if wrong), None)


def _unusable_session(chat_id: str) -> str | None:
    """Why the chat named with -s cannot be kept (then nothing is sent). An empty name made a chat of its own
    beside the default one, and a control character (a line break) one whose key `chats list` cannot show on
    its line, to be read or copied."""
    if not chat_id.removeprefix(f"{Channel.CLI}:").strip():
        return "the session name given with -s is empty; leave -s out for the default chat (direct), or name one"
    if any(unicodedata.category(char) == "Cc" for char in chat_id):
        return ("the session name given with -s has a line break, tab or other control character; give one of "
                "visible characters and spaces")
    channel = channel_of(chat_id)
    if channel is not None and channel is not Channel.CLI:
        return (f"{chat_id} is the key of a chat of the tray app; -s names a chat of this command (cli:NAME, given "
                "as NAME): open that chat in the app, or give a name of your own")
    if not fits(_key(chat_id)):
        return "the session name given with -s is too long to be a chat's file name; give a shorter one"
    return None


def _wrong_input(args: argparse.Namespace) -> str | None:
    """Why the command line cannot be run as given, in words that say what to give instead."""
    wrong = _unusable_session(args.session)
    if wrong:
        return wrong
    if args.message is None:
        if args.attach:
            return "-a attaches files to the message given with -m"
        if args.no_wait:  # taken without a word, and the chat went on as without it
            return "--no-wait leaves once the answer to the message given with -m is printed; give -m too"
        if sys.stdin is None:  # started with its input closed: a chat would end before it began
            return "there is no input to chat on (stdin is closed); give the message with -m"
        return None
    return _unsendable(args.message, args.attach)


async def _main(args: argparse.Namespace) -> int:
    wrong = _wrong_input(args)  # before the core's seconds of start-up
    if wrong:
        print(f"error: {wrong}", file=sys.stderr)
        return 2
    core = build_core()
    _print_config_problems(core)
    if not core.config.model:
        print(f"error: no model is configured; set `model` in {core.home.config_file} "
              "(e.g. openai/gpt-4o-mini) or open Settings in the tray app", file=sys.stderr)
        return 2
    core.provider.prepare()  # the model helper loads litellm (seconds) while the agent starts
    core.get(Approvals).no_asker_hint = NO_TERMINAL_HINT
    _answer_at_terminal(core.questions, args.yes)
    await core.start()
    try:
        if args.message is not None:
            return await _one_turn(core, args.session, args.message, Terminal(), wait=not args.no_wait,
                                   files=[os.path.abspath(path) for path in args.attach])
        return await _interactive(core, args.session)
    finally:
        await core.close()


def _answer_at_terminal(questions: Questions, yes: bool) -> None:
    """--yes answers every ask; a terminal asks the person at it; without either nobody listens, so asks fail
    (NO_TERMINAL_HINT)."""
    if yes:
        def allow(question: Question[ApprovalRequest]) -> None:
            request = question.request
            print(f"  (--yes) allowing {request.tool}: {request.shown}", file=sys.stderr, flush=True)
            question.answer("once")
        questions.subscribe(allow)
        return
    if sys.stdin is None or not sys.stdin.isatty():
        return
    one_at_a_time = asyncio.Lock()

    async def ask(question: Question[ApprovalRequest]) -> None:
        request = question.request
        async with one_at_a_time:
            print(f"\n{request.tool} needs your approval ({request.reason}):\n  {request.shown}", file=sys.stderr)
            try:
                answer = await read_line(f"Allow? [y/N, or a: {request.always}] ")
            except EOFError:
                answer = ""
        said = answer.strip().lower()
        question.answer("once" if said in ("y", "yes") else "always" if said in ("a", "always") else "deny")

    def posted(question: Question[ApprovalRequest]) -> None:
        spawn(ask(question))

    questions.subscribe(posted)


def _progress(event: Event, key: str, out: Output) -> None:
    if getattr(event, "session_key", None) != key:
        return
    if isinstance(event, ToolStarted):
        shown = json.dumps(event.arguments, ensure_ascii=False)
        out.err(f"→ {event.name} {shown[:120]}")
    elif isinstance(event, ToolFinished):
        mark = "✓" if event.ok else "✗"
        took = "" if event.seconds is None else f" ({event.seconds:.1f}s)"  # None: it never ran (denied)
        out.err(f"  {mark} {event.name}{took}")
    elif isinstance(event, Retrying):  # why it failed is in the log (-v shows it here); the final error says it
        out.err(f"  model call failed, retrying in {event.seconds:g} s (try {event.attempt} of {event.attempts})…")
    elif isinstance(event, TurnProgress):
        out.err(f"  {event.text}")


async def _turn(core: Core, key: str, text: str, stream: bool, out: Output,
                files: list[str] | None = None) -> TurnFinished | TurnError:
    """Ask the agent and wait for the turn's end, reporting progress on stderr."""

    def on_event(event: Event) -> None:
        _progress(event, key, out)
        if getattr(event, "session_key", None) != key:
            return
        if stream and isinstance(event, TextDelta):
            out.out(event.text, end="")
        elif isinstance(event, OutboundMessage):
            out.out(event.content)

    unsubscribe = core.bus.subscribe(on_event)
    try:
        return await core.loop.ask(key, text, media=files)
    finally:
        unsubscribe()


async def _one_turn(core: Core, chat_id: str, text: str, out: Output, wait: bool = True,
                    files: list[str] | None = None) -> int:
    key = _key(chat_id)
    text = well_formed(text)  # see `_key`
    wrong = _unusable_session(chat_id) or _unsendable(text, files or [])
    if wrong:  # in the app, the message and files are first seen here
        out.err(f"error: {wrong}")
        return 2
    result = await _turn(core, key, text, stream=False, out=out, files=files)
    if isinstance(result, TurnError):
        out.err(f"error: {result.message}")
        return 1
    out.out(result.content)
    return await _background(core, key, result, out) if wait else _leave(core, key, out)


async def _background(core: Core, key: str, answer: TurnFinished, out: Output) -> int:
    """Wait for the chat's background tasks and print what the agent told of each (once: a result that
    joined the turn above is already in its answer)."""
    code = 0
    for task in [t for t in core.get(Subagents).of(key) if t.told is not None and not t.told.done()]:
        out.err(f"… waiting for background task “{task.label}” (--no-wait leaves at once)")
        told = await task.told  # type: ignore[misc]
        if isinstance(told, TurnError):
            out.err(f"error: {told.message}")
            code = 1
        elif told is not None and told is not answer and told.content:
            out.out(told.content)
    return code


def _leave(core: Core, key: str, out: Output) -> int:
    stopped = core.get(Subagents).cancel_chat(key)
    if stopped:
        out.err(f"(cancelled {stopped} background task{'s' if stopped != 1 else ''}: --no-wait)")
    return 0


def _key(chat_id: str) -> str:
    """The chat's key. What the person typed is mended (desktop/kernel/wellformed.py): a command line or a
    terminal in another encoding gives Python bytes that are not UTF-8 as lone surrogates, which the chat's file
    and the request cannot hold. A key as `chats list` shows it (cli:NAME) is that chat's, not cli:cli:NAME."""
    return session_key(Channel.CLI, well_formed(chat_id).removeprefix(f"{Channel.CLI}:"))


async def _interactive(core: Core, chat_id: str) -> int:
    key = _key(chat_id)
    print(f"Nanobot ({core.config.model}) — session {key}. Ctrl+C or /stop stops a turn, Ctrl+D quits.",
          file=sys.stderr)
    while True:
        try:
            line = well_formed(await read_line("you> "))  # see `_key`
        except EOFError:
            print(file=sys.stderr)
            return 0
        if not line.strip():
            continue
        turn = asyncio.ensure_future(_turn(core, key, line, stream=True, out=Terminal()))
        with stop_on_interrupt(core, lambda: [key]):
            result = await turn
        print()
        if isinstance(result, TurnError):
            print(f"error: {result.message}", file=sys.stderr)
        elif result.stopped:
            print("[stopped]", file=sys.stderr)
        elif core.loop.commands.name_of(line):
            print(result.content)
