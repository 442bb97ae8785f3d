"""The meter on the provider (`LLMProvider.meter`): counts every call that answered, once, under the work it
served (desktop/kernel/work.py), and refuses unattended calls over budget.

Budgets (the `budgets` section) hold back unattended work only: once today's reminders, heartbeats, Dreams
and background tasks reach the daily tokens or cost, none of them starts another model call until local
midnight or a higher limit (a tool already running finishes); a run past `per_run_tokens` is stopped at its
next call. The refusal is a ProviderError, so each kind of work ends the way it ends when the model cannot
be reached, with the reason (the word "budget" in it) where it shows failures. Typed chats are never held.
The person is told once a day, when the limit is reached.

A call of a chat's turn is counted under the message it answers, the last one the chat had from the person (or
a reminder, a task's report) when it was made: a turn's question, or what was typed into the running turn."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Coroutine
from datetime import date
from typing import Any
from weakref import WeakKeyDictionary

from desktop.config import Config
from desktop.kernel import work
from desktop.kernel.notices import Notify
from desktop.providers.failures import FailureKind
from desktop.providers.helper import HelperFailed, HelperGone, ask
from desktop.providers.llm import AudioCall, LLMResponse, ProviderError
from desktop.session.session import Session
from desktop.usage.pricing import is_local
from desktop.usage.records import CallRecord, UsageLog
from desktop.usage.report import midnight
from desktop.usage.settings import BudgetsConfig

log = logging.getLogger(__name__)
PAUSED = "Unattended work paused"
SETTLE_WITHIN = 3.0  # seconds closing waits for calls still being priced (the core gives a closer 5)


class BudgetReached(ProviderError):
    """An unattended call refused: the message says which budget and until when."""

    def __init__(self, message: str) -> None:
        super().__init__(message, FailureKind.QUOTA)  # like running out of credit: retrying will not help


def stopped_by_budget(kind: str, message: str) -> bool:
    """Whether a failed turn (its TurnError's kind and message) ended on a budget's refusal rather than on the
    provider: a run's history says "stopped by budget", which a raise of the limit undoes, not "failed"."""
    return kind == FailureKind.QUOTA.value and "budget" in message


class UsageMeter:
    def __init__(self, log_: UsageLog, config: Callable[[], Config], notify: Notify,
                 on_record: Callable[[CallRecord], None] = lambda r: None) -> None:
        self.log = log_
        self._config = config
        self._notify = notify
        self._on_record = on_record
        self._day = date.today()
        self._tokens = 0  # today's unattended tokens
        self._cost = 0.0  # and their known cost
        self._told: date | None = None  # the day the person was told the budget is reached
        self._chats: WeakKeyDictionary[work.Work, Session] = WeakKeyDictionary()  # each running turn's chat
        self._counting: set[asyncio.Task[None]] = set()  # calls being priced, not yet booked

    async def turn_began(self, session: Session) -> None:
        """A turn hook (before the prompt is built, its message saved): the running turn answers in `session`."""
        self._chats[work.current()] = session

    def load_today(self) -> None:
        """Add up today's unattended calls from the file (blocking: at build time, from its end only)."""
        self._day = date.today()
        self._tokens, self._cost = 0, 0.0
        for record in self.log.read_since(midnight(self._day)):
            self._add_unattended(record)

    @property
    def today(self) -> tuple[int, float]:
        """Today's unattended tokens and known cost."""
        self._roll()
        return self._tokens, self._cost

    @property
    def budgets(self) -> BudgetsConfig:
        """The limits in force."""
        return self._config().section(BudgetsConfig)

    # ----- the provider's Meter
    def admit(self, model: str) -> None:
        current = work.current()
        if not current.source.unattended:
            return
        budgets = self._config().section(BudgetsConfig)
        reason = self._over_daily(budgets)
        if reason:
            self._tell(reason)
            raise BudgetReached(reason)
        if budgets.per_run_tokens and current.tokens >= budgets.per_run_tokens:
            raise BudgetReached(f"This {current.source.value} run was stopped: its model calls used "
                                f"{current.tokens:,} tokens, and budgets.per_run_tokens allows "
                                f"{budgets.per_run_tokens:,} for one run.")

    async def count(self, model: str, messages: list[dict[str, Any]], response: LLMResponse) -> None:
        if response.usage and is_local(self._config().api_base):
            # nothing to ask the helper: booked before any await, so no cancel can come between, and without the
            # task of its own (two turns of the loop on every call of a chat with a local server)
            await self._count(model, messages, response)
            return
        await self._keep(self._count(model, messages, response))

    async def count_audio(self, model: str, call: AudioCall) -> None:
        """A speech model's call (dictation, reading aloud): under the work that asked, like a chat call."""
        await self._keep(self._count_audio(model, call))

    async def settle(self) -> None:
        """Closing, once the turns have ended: wait (a little) for the calls still being priced, so each is
        logged before the log's last write."""
        if self._counting:
            await asyncio.wait(list(self._counting), timeout=SETTLE_WITHIN)

    async def _keep(self, counting: Coroutine[Any, Any, None]) -> None:
        """Count a call that answered even when its caller is cancelled while the helper prices it (a turn
        stopped, or cut short by Quit): the call was made, so its record must reach the log."""
        task = asyncio.ensure_future(counting)  # with the caller's context: its work
        self._counting.add(task)
        task.add_done_callback(self._counting.discard)
        await asyncio.shield(task)

    async def _count(self, model: str, messages: list[dict[str, Any]], response: LLMResponse) -> None:
        current = work.current()
        chat = self._chats.get(current)
        question = _last_question(chat.messages) if chat is not None else -1
        usage, api_base = response.usage, self._config().api_base
        priced: dict[str, Any]
        if usage and is_local(api_base):  # counted by its server, and free: nothing to ask the helper
            priced = {"prompt": usage.get("prompt_tokens", 0), "completion": usage.get("completion_tokens", 0),
                      "cached": usage.get("cached_tokens", 0), "cost": None, "estimated": False}
        else:
            answer = "".join([response.content, response.reasoning or "",
                              *(c.name + c.arguments for c in response.tool_calls)])
            priced = await self._price("price_call", model=model, usage=usage, messages=None if usage else messages,
                                       answer=answer, api_base=api_base)
        self._book(CallRecord(time.time(), current.source, current.session, model, priced["prompt"],
                              priced["completion"], priced["cached"], priced["cost"], estimated=priced["estimated"],
                              question=question), current)

    async def _count_audio(self, model: str, call: AudioCall) -> None:
        current = work.current()
        priced = await self._price("price_audio", model=model, **dataclasses.asdict(call))
        self._book(CallRecord(time.time(), current.source, current.session, model, priced["prompt"],
                              priced["completion"], 0, priced["cost"], estimated=priced["estimated"]), current)

    @staticmethod
    async def _price(op: str, **args: Any) -> dict[str, Any]:
        """Tokens and price from the model helper (desktop/usage/pricing.py). A call it cannot price (it went
        away after answering) is still counted: its reported tokens, no price."""
        try:
            found: dict[str, Any] = await ask(op, **args)
        except (HelperGone, HelperFailed) as exc:
            log.warning("the call could not be priced: %s", exc)
            usage = args.get("usage") or {}
            return {"prompt": usage.get("prompt_tokens", args.get("prompt_tokens") or 0),
                    "completion": usage.get("completion_tokens", args.get("completion_tokens") or 0),
                    "cached": usage.get("cached_tokens", 0), "cost": None, "estimated": not usage}
        return found

    # ----- inside
    def _book(self, record: CallRecord, current: work.Work) -> None:
        """Log a counted call, add it to its run and to today's unattended use, and tell who listens."""
        current.tokens += record.tokens
        if record.cost_usd is not None:
            current.cost_usd = (current.cost_usd or 0.0) + record.cost_usd
        self.log.add(record)
        if record.source.unattended:
            self._roll()
            self._add_unattended(record)
            reason = self._over_daily(self._config().section(BudgetsConfig))
            if reason:
                self._tell(reason)
        self._on_record(record)

    def _roll(self) -> None:
        """A new day starts with nothing used."""
        today = date.today()
        if today != self._day:
            self._day, self._tokens, self._cost = today, 0, 0.0

    def _add_unattended(self, record: CallRecord) -> None:
        if record.source.unattended:
            self._tokens += record.tokens
            self._cost += record.cost_usd or 0.0

    def _over_daily(self, budgets: BudgetsConfig) -> str:
        """Why unattended work may make no more calls today; "" while it may."""
        tokens, cost = self.today
        after = ("Reminders, the heartbeat, Dream and background tasks make no model call until midnight or "
                 "until the limit is raised; typed chats go on.")
        if budgets.unattended_daily_tokens and tokens >= budgets.unattended_daily_tokens:
            return (f"Today's budget for unattended work is used up: {tokens:,} tokens of the "
                    f"{budgets.unattended_daily_tokens:,} budgets.unattended_daily_tokens allows. {after}")
        if budgets.unattended_daily_cost and cost >= budgets.unattended_daily_cost:
            return (f"Today's budget for unattended work is used up: ${cost:.2f} of the "
                    f"${budgets.unattended_daily_cost:.2f} budgets.unattended_daily_cost allows. {after}")
        return ""

    def _tell(self, reason: str) -> None:
        if self._told != self._day:
            self._told = self._day
            log.info("unattended budget reached: %s", reason)
            self._notify(PAUSED, reason)


def _last_question(messages: list[dict[str, Any]]) -> int:
    """The index of the chat's last message to the assistant (what its next call answers); -1 for none."""
    return next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), -1)
