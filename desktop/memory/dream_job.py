"""Dream as a scheduled system job: every `schedules.dream_interval` seconds when there is new history
(the scheduler defers it while a turn runs); a change to memory is announced with a notice whose click
opens that change."""

from __future__ import annotations

import logging

from desktop.kernel.notices import Notify, OpenMemoryChange
from desktop.memory.dream import Dream, DreamError, DreamResult
from desktop.memory.git_history import GitError

log = logging.getLogger(__name__)
JOB_NAME = "dream"
MIN_INTERVAL = 60  # seconds: a Dream every few seconds would only burn tokens


def dream_interval(configured: int) -> int:
    """0 turns Dream off; anything else is at least a minute."""
    return 0 if configured <= 0 else max(MIN_INTERVAL, configured)


async def scheduled_dream(dream: Dream, notify: Notify) -> DreamResult | None:
    try:
        result = await dream.run_if_due()
    except (DreamError, GitError) as exc:
        log.warning("scheduled Dream failed (will retry next time): %s", exc)
        return None
    if result is not None and result.changed:
        notify("Memory updated", f"Dream updated {', '.join(result.changed)}.",
               OpenMemoryChange(result.rev) if result.rev else None)
    return result
