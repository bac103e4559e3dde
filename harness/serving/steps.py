"""Training steps named in checkpoint paths and run names (``global_step_200``,
``checkpoint-200``, ``step200``, ``iter_5``): one pattern for serving and tables."""

from __future__ import annotations

import re

STEP_PATTERN = re.compile(r"(?:global_step|step|checkpoint|ckpt|iter)[_\-]?(\d+)", re.IGNORECASE)


def names_step(text: str) -> bool:
    return STEP_PATTERN.search(text) is not None


def step_in(text: str) -> int | None:
    """The first training step named in ``text``, if any."""
    match = STEP_PATTERN.search(text)
    return int(match.group(1)) if match else None
