"""What a benchmark's score depends on besides the model: its score conditions,
and the mark on numbers made under other conditions than the rest of their column.

A run's conditions for one benchmark (``score_conditions``) are read from what the
run recorded: the benchmark's package and data versions (the manifest's
``<benchmark>.<key>`` versions), the options its suite entry gave it (task set,
prompt source, retrieval, ...), the user simulator and judge when the adapter
uses them, and whatever the adapter names itself in its aggregate
(``BenchmarkResult.conditions``, e.g. τ³'s user model and retrieval). Two numbers
of one benchmark made under different conditions may differ for that reason alone:
``compare`` says so in one line, and tables mark the cell (``DRIFT_MARK``) that
differs from its column's most common conditions, explained once with the
difference.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping

DRIFT_MARK = "‡"
LEGEND = (
    f"{DRIFT_MARK} = made under other score conditions (benchmark version, task set, "
    "prompts, user/judge model, retrieval) than the column's other rows; scores may not "
    "be comparable"
)
USER = "user model"
JUDGE = "judge model"


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _model(value: object) -> str:
    """A model as recorded: its name, or the entry holding it."""
    if isinstance(value, dict):
        value = value.get("name")
    return "" if value is None else str(value)


def _suite_options(suite: Mapping[str, object] | None, benchmark: str) -> dict[str, object]:
    options: dict[str, object] = {}
    entries = (suite or {}).get("entries") or []
    for entry in entries if isinstance(entries, list | tuple) else []:
        if isinstance(entry, dict) and entry.get("benchmark") == benchmark:
            options.update(entry.get("options") or {})
    return options


def score_conditions(
    benchmark: str,
    versions: Mapping[str, object] | None,
    suite: Mapping[str, object] | None,
    user_model: object,
    judge_model: object,
    named: list[str],
) -> dict[str, str]:
    """What one benchmark's numbers of a run depend on, as name -> value.

    ``versions`` are the run's recorded versions, ``suite`` its suite (as the manifest
    holds it), ``named`` the conditions its adapter named ("user gpt-5.2",
    "retrieval alltools": the first word is the name)."""
    from harness.task.registry import find_adapter

    found: dict[str, str] = {}
    prefix = f"{benchmark}."
    for key, value in sorted((versions or {}).items()):
        if key.startswith(prefix) and value not in (None, ""):
            found[key[len(prefix) :]] = _text(value)
    for key, value in sorted(_suite_options(suite, benchmark).items()):
        found[f"option {key}"] = _text(value)
    adapter = find_adapter(benchmark)
    if adapter is not None and adapter.needs_user_model:
        found[USER] = _model(user_model) or "none"
    if adapter is not None and adapter.needs_judge_model:
        found[JUDGE] = _model(judge_model) or adapter.default_judge_model or "none"
    for item in named:
        name, _, value = item.partition(" ")
        found[name] = value
    return found


def differences(a: dict[str, str], b: dict[str, str]) -> str:
    """'pkg 1.0 vs 1.1; option prompts none vs official' ('' when
    alike): every condition either run recorded, A's value first."""
    return "; ".join(
        f"{key} {a.get(key, 'none')} vs {b.get(key, 'none')}"
        for key in dict.fromkeys([*a, *b])
        if a.get(key) != b.get(key)
    )


def comparison_line(label: str, a: dict[str, str], b: dict[str, str]) -> str:
    """The one line ``compare`` prints for a benchmark whose two runs differ ('' if not)."""
    found = differences(a, b)
    return f"{label}: {found} — scores may not be comparable" if found else ""


def column_drift(rows: list[tuple[dict[str, str], bool]]) -> list[str]:
    """For each row of a column (its conditions, and whether it is a published row),
    how it differs from the column's most common conditions among runs ('' where it
    does not; the first of equally common ones wins). Published rows are held to the
    conditions they record."""
    runs = [json.dumps(c, sort_keys=True) for c, published in rows if not published]
    if not runs:
        return ["" for _ in rows]
    counts = Counter(runs)
    top = max(counts.values())
    base: dict[str, str] = json.loads(next(r for r in runs if counts[r] == top))
    return [_departure(base, c, shared_only=published) for c, published in rows]


def _departure(base: dict[str, str], own: dict[str, str], shared_only: bool) -> str:
    """'pkg 1.1 (others: 1.0)': what a row has where its column differs."""
    keys = [k for k in own if k in base] if shared_only else list(dict.fromkeys([*own, *base]))
    return "; ".join(
        f"{key} {own.get(key, 'none')} (others: {base.get(key, 'none')})"
        for key in keys
        if base.get(key) != own.get(key)
    )


def note(run: str, benchmark_label: str, difference: str) -> str:
    return f"{DRIFT_MARK} {run} {benchmark_label}: {difference}"


def with_legend(notes: list[str]) -> list[str]:
    """The mark's meaning once, then what each marked number differs in."""
    unique = list(dict.fromkeys(notes))
    return [LEGEND, *unique] if unique else []
