"""The cyclic garbage collector during a run: the one place the harness sets it.

Two settings, both given back when the run ends:

- at the start, the objects alive then (modules, loaded samples, the plan) are
  left out of the collector's passes (``gc.freeze``: a full pass over them took
  ~50 ms, during which no reply was read and no request sent), and young objects
  are collected less often (RUN_GC_THRESHOLD);
- an environment that says it holds a large world (``Environment.large_state``:
  its own copy of a domain database, tens of thousands of objects) is built with
  the collector paused and frozen out of its passes once built. Without that, each
  full pass walked every live copy: with 64 such episodes in flight the collector
  took more CPU than everything else together, ~1 s per full pass.

``gc.freeze`` moves every object alive at that moment to the permanent
generation, not only the new world. Reference counting still frees them: a world
that holds no reference cycle (tested for the adapters that ask for this) goes
when its episode drops it, frozen or not. What the freeze does hold is the cyclic
garbage waiting for a pass at that moment: it is collected after the run, when
``gc.unfreeze`` hands everything back.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")

# Net new container objects between two young-generation collections during a
# run (Python's default is 700): a run allocates and frees many small objects,
# and at 700 the collector ran ~100 times a run for ~7% of its CPU. A young pass
# costs about the same however many objects it finds (30-50 ms with 64 episodes
# in flight, bench/per_call_cpu.py), so fewer passes are less CPU: at
# 10,000 one came every ~700 model calls (~50 µs a call), at 50,000 one every
# several thousand, for the same peak memory.
RUN_GC_THRESHOLD = 50_000

# Whether a run set the collector (and unfreezes what is frozen when it ends).
_set_by_run = False


@contextlib.contextmanager
def garbage_collection_for_a_run() -> Iterator[None]:
    """The collector set for a run while it runs, and given back after."""
    global _set_by_run
    # Set already by an enclosing run, the caller, or the run's process this
    # worker was forked from (a fork copies the collector's state).
    if gc.get_freeze_count() != 0:
        yield
        return
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], RUN_GC_THRESHOLD), *thresholds[1:])
    _set_by_run = True
    try:
        yield
    finally:
        _set_by_run = False
        gc.set_threshold(*thresholds)
        gc.unfreeze()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No collection while the block builds many objects that hold no cycle (a
    world, a file of records read): its passes would walk only them, and find
    nothing to free. The collector is as it was after the block."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_world(build: Callable[..., T], *args: object) -> T:
    """``build(*args)``: an environment, built with the collector paused (its
    young passes would only walk the new world); inside a run, a world that says
    it is large is then frozen out of the collector's passes."""
    with collector_paused():
        world = build(*args)
    if _set_by_run and getattr(world, "large_state", False):
        gc.freeze()
    return world
