"""Published rows (``harness.results.reference``) as leaderboard rows, and the notes naming their source."""

from __future__ import annotations

from collections.abc import Mapping

from harness.report.leaderboard.composite_score import composite_of
from harness.report.leaderboard.rows import STANDARD_FEEDBACK, BenchmarkEntry, Composite, RunResult
from harness.results.headlines import primary_metric
from harness.results.reference import ReferenceTable


def _short_setting(settings: Mapping[str, object], key: str) -> str:
    value = settings.get(key)
    if value is None:
        return "-"
    text = " ".join(str(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def reference_rows(table: ReferenceTable) -> list[RunResult]:
    """Published rows as leaderboard rows (no tasks, so no intervals)."""
    rows = []
    for row in table.rows:
        entries = {
            bench: BenchmarkEntry(
                benchmark=bench,
                headline=dict(metrics),
                primary=primary_metric(bench, metrics),
                notes=[f"published ({table.name})"],
                score_conditions=dict(row.versions.get(bench) or {}),
            )
            for bench, metrics in row.scores.items()
        }
        composite = composite_of(entries)
        if row.overall is not None:
            composite = Composite(row.overall, published=True)
        rows.append(
            RunResult(
                name=f"ref:{table.name}",
                model=row.model,
                strategy=row.strategy,
                env_feedback=STANDARD_FEEDBACK,
                user_model=_short_setting(table.settings, "user_model"),
                judge_model=_short_setting(table.settings, "judge_model"),
                benchmarks=entries,
                composite=composite,
                reference=table.name,
                extra=dict(row.extra),
                note=row.note,
            )
        )
    return rows


def reference_notes(tables: list[ReferenceTable]) -> list[str]:
    lines = []
    for table in tables:
        settings = "; ".join(
            f"{key}: {' '.join(str(value).split())}"
            for key, value in table.settings.items()
            if not isinstance(value, dict)
        )
        lines.append(f"ref:{table.name} — {table.title}. Source: {' '.join(table.source.split())}")
        if settings:
            lines.append(f"ref:{table.name} settings — {settings}")
        metrics = table.settings.get("metrics") or {}
        for key, meaning in metrics.items() if isinstance(metrics, dict) else ():
            lines.append(f"ref:{table.name} metric {key} — {' '.join(str(meaning).split())}")
        lines += [f"ref:{table.name} note — {' '.join(n.split())}" for n in table.notes]
    return lines
