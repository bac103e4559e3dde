"""The plain-language explanation of a failed score, as the runner and a regrade store it."""

from __future__ import annotations

from harness.task.contract import Adapter, Sample
from harness.types import Score, Trajectory

MAX_EXPLANATION_CHARS = 2000


def with_explanation(
    adapter: Adapter, sample: Sample, trajectory: Trajectory, score: Score
) -> Score:
    """``score`` with its adapter's plain-language explanation of a failure (a
    passed or excluded score, or one explained already, is left as it is). An
    explanation that fails says so: it never costs the score."""
    if score.passed or score.excluded or score.explanation:
        return score
    try:
        text = adapter.explain_failure(sample, trajectory, score)
    except Exception as exc:
        text = f"(no explanation: {type(exc).__name__}: {exc})"
    score.explanation = str(text or "").strip()[:MAX_EXPLANATION_CHARS]
    return score
