"""Whether a model reads images, as litellm's model list says: a screenshot goes to the model as an image
only then, and the chip says so before sending otherwise (a model without vision would refuse the request
or ignore the picture)."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def sees_images(model: str) -> bool:
    """True when litellm lists `model` (as configured, e.g. "openai/gpt-4o") as supporting vision.
    litellm is imported at start-up off the GUI thread, so this is a dictionary lookup by the time a person
    attaches a screenshot."""
    if not model:
        return False
    from desktop.providers.litellm_env import litellm

    try:
        return bool(litellm().supports_vision(model=model))
    except Exception:  # an unknown provider prefix: litellm raises instead of saying no
        log.debug("litellm does not know %s", model, exc_info=True)
        return False
