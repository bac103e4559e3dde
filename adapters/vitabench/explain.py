"""What a VitaBench task expects (its rubric) and the judge's verdict on each line.

A task passes only when the judge finds every rubric line met; the explanation
lists the unmet lines first (with the judge's justification), then the met ones.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.boundary.json_value import JsonList, JsonObject
from harness.types import Score, Trajectory

from .data import VitaTask

MAX_JUSTIFICATION_CHARS = 240


def gold_view(task: VitaTask) -> JsonObject:
    """The user's instructions (what the simulated user wants) and the rubric."""
    view: JsonObject = {}
    if task.instructions:
        view["user instructions"] = task.instructions
    rubric: JsonList = list(task.rubrics)
    view["rubric"] = rubric
    return view


def _line(rubric: Mapping[str, object]) -> str:
    mark = "✓ met" if rubric.get("met") else "✗ not met"
    text = f"{mark}: {rubric.get('nl_rubric')}"
    why = str(rubric.get("justification") or "").strip()
    if why and not rubric.get("met"):
        short = why if len(why) <= MAX_JUSTIFICATION_CHARS else why[: MAX_JUSTIFICATION_CHARS - 1]
        text += f" (judge: {short})"
    return text


def explain_failure(trajectory: Trajectory, score: Score) -> str:
    details = score.details
    lines = []
    if details.get("note"):
        lines.append(str(details["note"]))
    rubrics = [r for r in details.get("rubrics") or [] if isinstance(r, dict)]
    if rubrics:
        unmet = [r for r in rubrics if not r.get("met")]
        lines.append(
            f"the judge found {len(rubrics) - len(unmet)} of {len(rubrics)} rubric lines met"
        )
        lines += [_line(r) for r in unmet] + [_line(r) for r in rubrics if r.get("met")]
    return "\n".join(lines)
