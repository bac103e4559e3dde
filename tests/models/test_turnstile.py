"""Replies read in one pass of the event loop are handled one pass apart."""

from __future__ import annotations

import asyncio

from harness.models.turnstile import ReplyTurnstile


def test_replies_read_in_one_pass_go_on_one_pass_apart_and_a_later_pass_starts_afresh():
    async def main():
        turnstile = ReplyTurnstile()
        loop = asyncio.get_running_loop()
        passes = [0]

        def tick():  # counts the loop's passes while the test runs
            passes[0] += 1
            if passes[0] < 50:
                loop.call_soon(tick)

        resumed: dict[str, int] = {}

        async def reply(name: str) -> None:
            await turnstile.wait_turn()
            resumed[name] = passes[0]

        loop.call_soon(tick)
        await asyncio.sleep(0)
        # three replies read in the same pass
        first = [asyncio.ensure_future(reply(n)) for n in ("a", "b", "c")]
        await asyncio.gather(*first)
        # one read on its own, later: not held back by the cluster before it
        alone_at = passes[0]
        await reply("d")
        return resumed, alone_at

    resumed, alone_at = asyncio.run(main())
    assert resumed["b"] - resumed["a"] == 1 and resumed["c"] - resumed["b"] == 1
    assert resumed["d"] == alone_at  # no wait at all


def test_a_turnstile_used_on_two_event_loops_keeps_their_passes_apart():
    turnstile = ReplyTurnstile()

    async def cluster(n: int) -> None:
        await asyncio.gather(*(turnstile.wait_turn() for _ in range(n)))

    async def one_reply_alone() -> bool:
        went_by = [False]
        asyncio.get_running_loop().call_soon(went_by.__setitem__, 0, True)
        await turnstile.wait_turn()
        return went_by[0]  # True if it waited a pass

    asyncio.run(cluster(5))
    assert asyncio.run(one_reply_alone()) is False  # a new loop starts at 0
