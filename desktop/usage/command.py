"""`nanobot-tray usage [--days N] [--json]`: what the model calls of the last days used, by source and by day.

It only reads the usage log, which the app appends to while it runs, so it never needs the running app nor
a model: no `serve`, no core."""

from __future__ import annotations

import argparse
import json

from desktop.kernel.paths import home
from desktop.usage.days import DaySummary
from desktop.usage.records import UsageLog
from desktop.usage.report import Summary, Totals, first_day

DEFAULT_DAYS = 30
MOST_DAYS = 36500  # 100 years: more reached before the calendar's first day (a traceback), and no log is older


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("usage", help="tokens and cost of the model calls of the last days, by source and day")
    parser.add_argument("--days", type=_days, default=DEFAULT_DAYS, metavar="N",
                        help=f"the last N days, today included (default {DEFAULT_DAYS})")
    parser.add_argument("--json", action="store_true", help="print one JSON object (total, by_source, by_day)")
    parser.set_defaults(func=run)


def _days(text: str) -> int:
    try:
        days = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of days") from None
    if days < 1:
        raise argparse.ArgumentTypeError("the number of days must be at least 1")
    if days > MOST_DAYS:
        raise argparse.ArgumentTypeError(f"the number of days must be at most {MOST_DAYS} (100 years)")
    return days


def run(args: argparse.Namespace) -> int:
    summary = DaySummary(UsageLog(home().data_dir).path).summary(first_day(args.days))
    print(json.dumps(summary.to_json(), indent=2) if args.json else describe(summary, args.days))
    return 0


def describe(summary: Summary, days: int) -> str:
    """A table for the terminal: each source, the total, then each day with calls."""
    span = "today" if days == 1 else f"the last {days} days (since {summary.first:%a %Y-%m-%d})"
    if not summary.total.calls:
        return f"No model calls {span}."
    header = f"{'':<14}{'calls':>7}{'prompt':>12}{'cached':>12}{'completion':>12}{'cost':>11}"
    lines = [f"Model calls {span}:", "", header]
    lines += [_row(source.value, totals) for source, totals in summary.by_source.items() if totals.calls]
    lines += [_row("total", summary.total), "", header.replace(" " * 14, f"{'day':<14}", 1)]
    lines += [_row(f"{day:%a %m-%d}", totals) for day, totals in sorted(summary.by_day.items())]
    if summary.total.estimated:
        lines += ["", f"{summary.total.estimated} call(s) estimated with tiktoken: their server reported no usage."]
    if any(t.calls and t.cost_usd is None for t in summary.by_source.values()):
        lines += ["Cost '-': no price known (a local server, or a model litellm's price map lacks)."]
    return "\n".join(lines)


def _row(name: str, totals: Totals) -> str:
    cost = "-" if totals.cost_usd is None else f"${totals.cost_usd:,.4f}"
    return (f"{name:<14}{totals.calls:>7,}{totals.prompt_tokens:>12,}{totals.cached_tokens:>12,}"
            f"{totals.completion_tokens:>12,}{cost:>11}")
