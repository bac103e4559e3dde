"""The worker pool under the runner, and the in-task deadline its episodes use."""

from __future__ import annotations

import asyncio
import time

import pytest

from harness.boundary.deadline import Deadline
from harness.run.worker_pool import WorkerPool


def run(coroutine):
    return asyncio.run(coroutine)


# -- Deadline ----------------------------------------------------------------------


def test_a_deadline_cancels_its_block_and_says_so_as_a_timeout():
    async def main():
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(asyncio.TimeoutError, match="too slow"):
            with Deadline(started + 0.05, "too slow"):
                await asyncio.sleep(5)
        return loop.time() - started

    assert run(main()) < 1.0


def test_a_block_that_ends_in_time_is_left_alone_and_a_late_expire_does_nothing():
    async def main():
        loop = asyncio.get_running_loop()
        deadline = Deadline(loop.time() + 5)
        with deadline:
            await asyncio.sleep(0.01)
        deadline.expire()  # after the block: must not cancel this task
        await asyncio.sleep(0.02)
        return deadline.expired

    assert run(main()) is False


def test_a_deadline_can_be_moved_and_ended_at_once():
    async def main():
        loop = asyncio.get_running_loop()
        deadline = Deadline(None)
        loop.call_later(0.02, deadline.reschedule, loop.time() + 0.05)
        started = loop.time()
        with pytest.raises(asyncio.TimeoutError):
            with deadline:
                await asyncio.sleep(5)
        moved = loop.time() - started
        other = Deadline(loop.time() + 60)
        loop.call_later(0.01, other.expire)
        with pytest.raises(asyncio.TimeoutError):
            with other:
                await asyncio.sleep(5)
        return moved

    assert 0.04 < run(main()) < 1.0


def test_a_cancellation_from_elsewhere_is_not_turned_into_a_timeout():
    async def victim():
        with Deadline(asyncio.get_running_loop().time() + 60):
            await asyncio.sleep(5)

    async def main():
        task = asyncio.ensure_future(victim())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())


# -- WorkerPool --------------------------------------------------------------------


def test_at_most_n_jobs_run_at_once_and_every_item_is_followed_up_once():
    running, peak, followed = [0], [0], []

    async def job(item):
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0.01)
        running[0] -= 1
        return item * 10

    async def follow(item, result):
        followed.append((item, result))

    run(WorkerPool(4, job, follow).run(range(30)))
    assert peak[0] == 4
    assert sorted(followed) == [(i, i * 10) for i in range(30)]


def test_a_workers_next_job_starts_before_its_last_result_is_followed_up():
    events = []

    async def job(item):
        events.append(f"job {item}")
        await asyncio.sleep(0)
        return item

    async def follow(item, result):
        events.append(f"follow {item}")

    run(WorkerPool(1, job, follow).run([1, 2]))
    # one worker: the second job begins (its request would go out) before the
    # first result is scored and written
    assert events.index("job 2") < events.index("follow 1")


def test_jobs_wait_while_follow_ups_are_behind():
    in_follow_up, peak, jobs_started = [0], [0], []

    async def job(item):
        jobs_started.append(item)
        return item

    async def follow(item, result):
        in_follow_up[0] += 1
        peak[0] = max(peak[0], in_follow_up[0])
        await asyncio.sleep(0.02)
        in_follow_up[0] -= 1

    run(WorkerPool(2, job, follow, follow_ups=2).run(range(8)))
    assert peak[0] == 2 and sorted(jobs_started) == list(range(8))


def test_a_job_that_will_not_stop_is_left_behind_and_its_place_taken():
    followed = {}

    async def job(item):
        if item == "stuck":  # its deadline's cancellation is lost, as the runner's can be
            with Deadline(asyncio.get_running_loop().time() + 0.05):
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    pass
                await asyncio.sleep(30)
        await asyncio.sleep(0.01)
        return f"done {item}"

    async def follow(item, result):
        followed[item] = result

    def abandoned(item, started):
        return f"left behind after {time.monotonic() - started:.1f} s"

    async def main():
        pool = WorkerPool(1, job, follow, give_up_after=0.1, abandoned=abandoned)
        started = time.monotonic()
        await pool.run(["stuck", "a", "b"])
        elapsed = time.monotonic() - started
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()  # the job left behind: a cancellation that is not lost ends it
        return elapsed

    elapsed = run(main())
    assert followed["stuck"].startswith("left behind") and elapsed < 2.0
    # with one worker, the two others could only run on the worker that replaced it
    assert followed["a"] == "done a" and followed["b"] == "done b"


def test_the_first_failure_ends_the_run_and_is_raised():
    started = []

    async def job(item):
        started.append(item)
        await asyncio.sleep(0.01)
        return item

    async def follow(item, result):
        if item == 3:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        run(WorkerPool(2, job, follow).run(range(100)))
    assert len(started) < 100  # the rest was not run


def test_no_items_is_a_run_that_ends_at_once():
    async def never(item):
        raise AssertionError("no job")

    run(WorkerPool(3, never, never).run([]))


def test_a_job_left_behind_that_fails_later_does_not_end_the_run():
    followed = []

    async def job(item):
        if item == "stuck":
            await asyncio.sleep(0.15)  # past give_up_after, then it fails
            raise RuntimeError("too late to matter")
        await asyncio.sleep(0.05)
        return item

    async def follow(item, result):
        followed.append(item)

    pool = WorkerPool(1, job, follow, give_up_after=0.05, abandoned=lambda item, started: item)
    run(pool.run(["stuck", "a", "b", "c", "d", "e"]))
    assert sorted(followed) == ["a", "b", "c", "d", "e", "stuck"]


def test_items_are_taken_one_at_a_time_when_a_worker_is_free():
    taken: list[int] = []
    seen_at_start: dict[int, int] = {}

    def items():
        for n in range(5):
            taken.append(n)
            yield n

    async def job(n: int) -> int:
        seen_at_start[n] = len(taken)
        await asyncio.sleep(0.01 * (n + 1))
        return n

    done: list[int] = []

    async def follow_up(n: int, result: int) -> None:
        done.append(result)

    run(WorkerPool(2, job, follow_up).run(items()))
    assert sorted(done) == [0, 1, 2, 3, 4]
    # Two workers: the third item is taken only when the first job has ended.
    assert seen_at_start[0] <= 2 and seen_at_start[1] == 2 and seen_at_start[2] == 3


def test_an_empty_iterable_ends_at_once_and_a_failing_one_ends_the_run():
    async def job(n: int) -> int:
        return n

    async def follow_up(n: int, result: int) -> None:
        pass

    run(WorkerPool(4, job, follow_up).run(iter(())))

    def broken():
        yield 1
        raise OSError("the counter's file is gone")

    with pytest.raises(OSError, match="counter's file"):
        run(WorkerPool(2, job, follow_up).run(broken()))
