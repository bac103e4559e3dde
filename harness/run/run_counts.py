"""``RunCounts``: what one call of the runner did, counted by (sample, trial).

Its own module, light to import: the runner returns it, and ``run_suite``'s
``RunSummary`` extends it (``import harness`` does not load the runner).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RunCounts:
    """What one call of the runner did."""

    total: int  # (sample, trial) pairs of the run (this shard's)
    skipped: int  # already done before this call
    ran: int
    ok: int
    infra_errors: int
    score_errors: int
    elapsed_s: float  # the episodes, scoring and records
