"""Simulations a benchmark's own runner runs again: the attempt loop of one episode.

Some benchmarks' runners discard a simulation that their own code aborted (a
message it could not parse, say) and run the whole simulation again, a fixed
number of times (``EpisodeLimits.void_rule`` and ``max_attempts``). An attempt
is a fresh episode: a new environment and user, the same seed, and the model
asked again (``SamplingParams.attempt`` keeps the cache from answering a rerun
with the void attempt's replies). The first attempt that is not void is the
trajectory; when every attempt is void, the last one is, and the adapter scores
it by its benchmark's rule. The void attempts before it are kept in
``trajectory.extra["void_attempts"]``: their number, seed, reason and transcript.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Final

from harness.boundary.json_value import JsonObject
from harness.task.contract import EpisodeLimits, Services
from harness.types import SamplingParams, Trajectory

VOID_ATTEMPTS: Final = "void_attempts"

Attempt = Callable[[SamplingParams, Services], Awaitable[Trajectory]]


def void_attempt(number: int, seed: int | None, reason: str, trajectory: Trajectory) -> JsonObject:
    return {
        "attempt": number,
        "seed": seed,
        "reason": reason,
        "termination": trajectory.termination,
        "messages": list(trajectory.messages),
    }


async def run_attempts(
    limits: EpisodeLimits, params: SamplingParams, services: Services, attempt: Attempt
) -> Trajectory:
    """Run ``attempt`` until one is not void, at most ``limits.max_attempts`` times."""
    void: list[JsonObject] = []
    total = max(1, limits.max_attempts) if limits.void_rule is not None else 1
    number = 1
    while True:
        trajectory = await attempt(
            dataclasses.replace(params, attempt=number),
            dataclasses.replace(services, attempt=number),
        )
        reason = limits.void_rule(trajectory) if limits.void_rule is not None else None
        if reason is None or number >= total:
            break
        void.append(void_attempt(number, params.seed, reason, trajectory))
        number += 1
    if void:
        trajectory.extra[VOID_ATTEMPTS] = void
    return trajectory
