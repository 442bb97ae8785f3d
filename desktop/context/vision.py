"""Whether a model reads images, as litellm's model list says: a screenshot goes to the model as an image
only then, and the chip says so before sending otherwise (a model without vision would refuse the request
or ignore the picture)."""

from __future__ import annotations

import logging

from desktop.providers.helper import HelperFailed, HelperGone, ask

log = logging.getLogger(__name__)
_answers: dict[str, bool] = {}


async def sees_images(model: str) -> bool:
    """True when litellm lists `model` (as configured, e.g. "openai/gpt-4o") as supporting vision. Asked of the
    model helper once per model (a picture attached: a call is coming, so starting it is no waste)."""
    if not model:
        return False
    if model not in _answers:
        try:
            _answers[model] = bool(await ask("sees_images", model=model))
        except (HelperGone, HelperFailed) as exc:
            log.warning("could not tell whether %s reads images: %s", model, exc)
            return False
    return _answers[model]
