"""The leaderboard as one JSON document (fractions, with their units named)."""

from __future__ import annotations

import json

from harness.report.leaderboard.rows import FRACTION, Cost, RunResult
from harness.results import conditions, nonstandard, stats
from harness.results.composite import CompositeDefinition, default_composite
from harness.results.coverage import LEGEND, PARTIAL_MARK
from harness.results.headlines import is_count_metric, primary_metrics
from harness.results.reference import ReferenceTable
from harness.results.stats import Interval


def _cost_json(cost: Cost) -> dict[str, object]:
    data = dict(cost.__dict__)
    data["money"] = None if cost.money is None else cost.money.to_dict()
    return data


def _interval_json(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.low, interval.high]


def result_json(result: RunResult) -> dict[str, object]:
    return {
        "run": result.name,
        "reference": result.reference,
        "model": result.model,
        "strategy": result.strategy,
        "strategy_settings": result.strategy_settings,
        "env_feedback": result.env_feedback,
        "user_model": result.user_model,
        "judge_model": result.judge_model,
        "step": result.step,
        "fingerprint": result.fingerprint,
        "note": result.note,
        "benchmarks": {
            bench: {
                "headline": entry.headline,
                "primary": entry.primary,
                "primary_ci": _interval_json(entry.interval),
                "units": {
                    name: "count" if is_count_metric(name) else FRACTION for name in entry.headline
                },
                "ci_note": entry.ci_note,
                "partial": entry.partial,
                "nonstandard": entry.nonstandard,
                "coverage": None if entry.coverage is None else entry.coverage.to_dict(),
                "metric_partial": {
                    name: entry.metric_partial(name)
                    for name, value in entry.headline.items()
                    if value is not None and not is_count_metric(name)
                },
                "pass_hat_k": {
                    subset: {
                        str(k): {"value": e.value, "ci": _interval_json(e.interval)}
                        for k, e in curve.items()
                    }
                    for subset, curve in entry.pass_hat_k.items()
                },
                "unscored": entry.unscored or None,
                "unscored_subsets": entry.unscored_subsets,
                "counts": {} if entry.counts is None else entry.counts.to_dict(),
                "missing": entry.missing,
                "not_run": entry.not_run,
                "notes": entry.notes,
                # only where it differs, so documents of comparable runs read as before
                **({"drift": entry.drift} if entry.drift else {}),
            }
            for bench, entry in result.benchmarks.items()
        },
        "composite": {
            "value": result.composite.value,
            "ci": _interval_json(result.composite.interval),
            "missing": result.composite.missing,
            "caveats": result.composite.caveats,
            "partial": bool(result.composite.caveats),
            "published": result.composite.published,
        },
        "extra": result.extra,
        "cost": None if result.cost is None else _cost_json(result.cost),
    }


def _composite_json(definition: CompositeDefinition | None) -> dict[str, object] | None:
    if definition is None:
        return None
    return {
        "name": definition.name,
        "label": definition.label,
        "definition": definition.definition,
        "source": definition.source,
        "benchmarks": list(definition.benchmarks),
    }


def render_json(
    results: list[RunResult], references: list[ReferenceTable], n_boot: int, seed: int
) -> str:
    data = {
        "unit": FRACTION,  # of every metric value and interval below (counts say "count")
        "primary_metrics": primary_metrics(b for r in results for b in r.benchmarks),
        "composite": _composite_json(default_composite()),
        "intervals": {
            "level": stats.LEVEL,
            "method": "percentile bootstrap over tasks, stratified by subset",
            "n_boot": n_boot,
            "seed": seed,
        },
        "partial_mark": {"symbol": PARTIAL_MARK, "meaning": LEGEND},
        "nonstandard_mark": {"symbol": nonstandard.NONSTANDARD_MARK, "meaning": nonstandard.LEGEND},
        **(
            {"drift_mark": {"symbol": conditions.DRIFT_MARK, "meaning": conditions.LEGEND}}
            if any(e.drift for r in results for e in r.benchmarks.values())
            else {}
        ),
        "rows": [result_json(r) for r in results],
        "references": [
            {
                "name": t.name,
                "title": t.title,
                "source": t.source,
                "settings": t.settings,
                "notes": t.notes,
            }
            for t in references
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)
