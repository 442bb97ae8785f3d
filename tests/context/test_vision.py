"""A screenshot goes as an image only to a model litellm lists as reading images."""

from __future__ import annotations

import pytest

from desktop.context.vision import sees_images


@pytest.mark.parametrize(("model", "sees"), [("openai/gpt-4o", True), ("gpt-4o-mini", True),
                                             ("openai/gpt-3.5-turbo", False), ("openai/test", False),
                                             ("nonsense-provider/whatever", False), ("", False)])
async def test_litellm_decides_which_models_read_images(model: str, sees: bool) -> None:
    assert await sees_images(model) is sees
