"""The garbage collector during a run (harness/boundary/collector.py)."""

from __future__ import annotations

import gc

from harness.boundary.collector import (
    RUN_GC_THRESHOLD,
    build_world,
    garbage_collection_for_a_run,
)


class World:
    """A world of many objects, noting whether the collector ran while it was built."""

    large_state = False

    def __init__(self) -> None:
        self.collector_on_while_built = gc.isenabled()
        self.rows = [{"id": str(i), "seats": [i]} for i in range(1000)]


class LargeWorld(World):
    large_state = True


def tracked(world: World) -> bool:
    """Whether the collector's passes walk the world's rows (frozen ones it does not)."""
    rows = {id(row) for row in world.rows}
    return any(id(thing) in rows for thing in gc.get_objects())


def test_a_large_world_is_built_with_the_collector_paused_and_frozen_out_of_its_passes():
    assert gc.isenabled()
    with garbage_collection_for_a_run():
        assert gc.get_threshold()[0] >= RUN_GC_THRESHOLD
        frozen = gc.get_freeze_count()
        large = build_world(LargeWorld)
        assert not large.collector_on_while_built and gc.isenabled()
        assert gc.get_freeze_count() >= frozen + len(large.rows)
        assert not tracked(large)
        small = build_world(World)
        assert not small.collector_on_while_built and gc.isenabled()
        assert tracked(small)  # a small world stays in the passes
    # The run's end gives everything back to the collector.
    assert gc.get_freeze_count() == 0 and tracked(large)


def test_outside_a_run_nothing_is_frozen_and_a_disabled_collector_stays_disabled():
    large = build_world(LargeWorld)
    assert gc.get_freeze_count() == 0 and tracked(large) and gc.isenabled()
    gc.disable()
    try:
        build_world(LargeWorld)
        assert not gc.isenabled()
    finally:
        gc.enable()
