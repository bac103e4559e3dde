"""Leaderboards: one table per benchmark, one row per run, from scores.json.

Every row names what produced it (model, strategy, user simulator, judge) and
shows its infrastructure errors, missing samples and not-run subsets beside the
metrics, so that no number is read without its conditions.
Metrics are stored as fractions and shown as percentages.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.store import RunStore


@dataclass
class RunRow:
    run: str
    settings: dict[str, Any]
    metrics: dict[str, float]
    counts: dict[str, int]
    not_run: list[str] = field(default_factory=list)
    missing: int = 0
    versions: dict[str, str] = field(default_factory=dict)


def load_scores(run_dir: Path) -> dict[str, Any]:
    """scores.json of a run, computed from stored scores when absent."""
    store = RunStore(run_dir)
    if store.scores_path.is_file():
        return json.loads(store.scores_path.read_text(encoding="utf-8"))
    if not store.exists():
        raise ConfigError(f"{run_dir} is not a run folder (no manifest.json)")
    from harness.scoring import score_run

    return score_run(run_dir, rescore=False)


def rows_by_benchmark(run_dirs: list[Path]) -> dict[str, list[RunRow]]:
    tables: dict[str, list[RunRow]] = {}
    for run_dir in run_dirs:
        scores = load_scores(run_dir)
        settings = scores.get("settings") or {}
        for benchmark, result in (scores.get("benchmarks") or {}).items():
            missing = sum((scores.get("missing_samples") or {}).get(benchmark, {}).values())
            tables.setdefault(benchmark, []).append(
                RunRow(
                    run=Path(run_dir).name,
                    settings=settings,
                    metrics=result.get("headline") or {},
                    counts=result.get("counts") or {},
                    not_run=result.get("not_run") or [],
                    missing=missing,
                    versions={
                        k: v
                        for k, v in (scores.get("versions") or {}).items()
                        if k.startswith(benchmark)
                    },
                )
            )
    return tables


def _model_label(settings: dict[str, Any]) -> str:
    model = settings.get("model") or {}
    return str(model.get("name") if isinstance(model, dict) else model)


def _strategy_label(settings: dict[str, Any]) -> str:
    strategy = settings.get("strategy") or {}
    label = str(strategy.get("name") if isinstance(strategy, dict) else strategy)
    if settings.get("env_feedback") not in (None, "standard"):
        label += f" [env-feedback {settings['env_feedback']}: non-standard]"
    return label


def _columns(rows: list[RunRow]) -> list[str]:
    names: list[str] = []
    for row in rows:
        for name in row.metrics:
            if name not in names:
                names.append(name)
    return names


def _cells(row: RunRow, metric_names: list[str]) -> dict[str, str]:
    cells = {
        "run": row.run,
        "model": _model_label(row.settings),
        "strategy": _strategy_label(row.settings),
        "user": str(row.settings.get("user_model") or "-"),
        "judge": str(row.settings.get("judge_model") or "-"),
    }
    for name in metric_names:
        value = row.metrics.get(name)
        cells[name] = "-" if value is None else f"{100 * float(value):.2f}"
    cells["records"] = str(row.counts.get("records", 0))
    cells["infra_errors"] = str(
        row.counts.get("infra_errors", 0) + row.counts.get("score_errors", 0)
    )
    cells["missing"] = str(row.missing)
    cells["not_run"] = ", ".join(row.not_run) or "-"
    return cells


def render(run_dirs: list[Path], fmt: str = "md") -> str:
    tables = rows_by_benchmark(run_dirs)
    if fmt == "json":
        return json.dumps(
            {b: [row.__dict__ for row in rows] for b, rows in tables.items()}, indent=2, default=str
        )
    out = io.StringIO()
    for benchmark, rows in tables.items():
        metric_names = _columns(rows)
        header = ["run", "model", "strategy", "user", "judge", *metric_names]
        header += ["records", "infra_errors", "missing", "not_run"]
        body = [_cells(row, metric_names) for row in rows]
        if fmt == "csv":
            writer = csv.writer(out)
            writer.writerow(["benchmark", *header])
            for cells in body:
                writer.writerow([benchmark, *(cells[h] for h in header)])
            continue
        out.write(f"\n### {benchmark} (metrics in %)\n\n")
        out.write("| " + " | ".join(header) + " |\n")
        out.write("|" + "---|" * len(header) + "\n")
        for cells in body:
            out.write("| " + " | ".join(cells[h].replace("|", "\\|") for h in header) + " |\n")
        versions = {k: v for row in rows for k, v in row.versions.items()}
        if versions:
            out.write("\n" + "; ".join(f"{k}: {v}" for k, v in sorted(versions.items())) + "\n")
    return out.getvalue()
