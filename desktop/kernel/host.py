"""What a feature receives: the host, the whole extension surface on one page.

A feature is a package with one `FEATURE = Feature(name, provides, attach, requires, settings, cli)`. `build_core`
(desktop/core.py) attaches the features of its FEATURES list in an order that puts every feature after those
it `requires`; `attach(host)` builds the feature's service, plugs it in through the host, and returns it, and
other features find it with `host.get(ServiceType)`. A feature never sees the composition root.
A feature may also bring its own section of config.yaml (`settings`, desktop/config.py says how one is
declared) and a subcommand of `nanobot-tray` (`cli`, desktop/cli/__init__.py says what that module offers).

The core implements this protocol; the types it names live in the parts that own them (imported here for the
type checker only, so the kernel still imports nothing of `desktop` at run time)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from desktop.kernel.bus import Event, MessageKind, TurnError, TurnFinished
from desktop.kernel.notices import Target
from desktop.kernel.paths import Home
from desktop.kernel.questions import Questions

if TYPE_CHECKING:
    from desktop.agent.commands import Commands
    from desktop.agent.context import ContextBuilder
    from desktop.agent.hooks import TurnHooks
    from desktop.config import Config, Section
    from desktop.providers.llm import LLMProvider
    from desktop.session.session import SessionStore
    from desktop.settings import Settings
    from desktop.tools.registry import ToolRegistry

S = TypeVar("S")
Lifecycle = Callable[[], Awaitable[None]]


class Host(Protocol):
    home: Home  # the app's folders (data, state, logs)
    settings: Settings  # the one settings writer: `subscribe(keys, listener)` to hear changes, `update` to save
    provider: LLMProvider  # the model, for features that call it outside a chat turn (Dream, subagents)
    sessions: SessionStore  # the saved chats
    context: ContextBuilder  # the system prompt and the skills in it
    tools: ToolRegistry  # `register(tool)`: tools the model can call; every call passes `tools.gate`
    questions: Questions  # the one door for asking the person (`ask(request)`); entry points answer

    @property
    def config(self) -> Config: ...  # the settings in force: read them when acting

    @property
    def workspace(self) -> Path: ...  # the workspace in force (a settings change may move it)

    @property
    def running(self) -> bool: ...  # the core has started: the loop takes messages

    @property
    def commands(self) -> Commands: ...  # `add(Command(...))`: slash commands

    @property
    def hooks(self) -> TurnHooks: ...  # before_turn, after_turn, on_set_aside, on_stop

    async def ask_agent(self, session_key: str, text: str, *, kind: MessageKind = ...,
                        title: str = ...) -> TurnFinished | TurnError: ...  # a turn from code

    def busy(self) -> bool: ...  # a chat's turn is running now (system jobs wait for it)

    def spawn(self, work: Awaitable[Any]) -> asyncio.Future[Any]: ...  # background work the core's shutdown cancels

    def publish(self, event: Event) -> None: ...  # a feature's own events, to every subscriber

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]: ...  # hear the bus

    def notify(self, title: str, body: str, target: Target | None = None) -> None: ...  # tell the person

    def on_start(self, starter: Lifecycle) -> None: ...  # awaited once the core starts

    def on_close(self, closer: Lifecycle) -> None: ...  # awaited on close, last attached first

    # Awaited on close once every turn has ended (after all `on_close`): chats' files are then the feature's to
    # write, with no turn's tool call and result to fall between.
    def on_turns_ended(self, closer: Lifecycle) -> None: ...

    def get(self, service: type[S]) -> S: ...  # another feature's service, by its type


@dataclass(frozen=True)
class Feature:
    """A feature as the composition root sees it: what it provides, what it needs first, how it attaches."""

    name: str
    provides: type
    attach: Callable[[Host], object]
    requires: tuple[type, ...] = ()
    settings: Section | None = None  # its own section of config.yaml, if it has settings
    cli: str | None = None  # the module of its `nanobot-tray` subcommand, imported only to build the parser


def attach_order(features: tuple[Feature, ...]) -> list[Feature]:
    """The features in their listed order, except that each comes after the features it requires. Raises
    ValueError for a requirement no feature provides, or a cycle."""
    provided = {f.provides: f for f in features}
    for feature in features:
        missing = [t.__name__ for t in feature.requires if t not in provided]
        if missing:
            raise ValueError(f"feature {feature.name} requires {', '.join(missing)}, which no feature provides")
    ordered: list[Feature] = []
    left = list(features)
    while left:
        ready = next((f for f in left if all(provided[t] in ordered for t in f.requires)), None)
        if ready is None:
            raise ValueError(f"features require each other in a circle: {', '.join(f.name for f in left)}")
        ordered.append(ready)
        left.remove(ready)
    return ordered

