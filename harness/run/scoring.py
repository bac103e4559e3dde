"""Scoring a run folder: regrade stored trajectories and aggregate per benchmark.

Nothing here calls the model under test: samples are reloaded from the
benchmark data and each stored trajectory is scored again by its adapter. The
result goes to ``scores.json`` beside the records.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.config.data_dirs import DataDirs
from harness.errors import ConfigError
from harness.models.redact import MASK, add_config_secrets, is_credential_name, scrub_secrets
from harness.run.explanations import with_explanation
from harness.store.cost_totals import aggregate_costs
from harness.store.records import INFRA_ERROR, OK, REGRADE_ERROR_KEY, SCORE_ERROR, now_iso
from harness.store.run_store import RunStore, write_json_atomic
from harness.store.world_model_figures import aggregate_world_model
from harness.task.contract import Adapter, BenchmarkResult, RecordView, Sample, Services
from harness.task.registry import get_adapter
from harness.types import Score, Trajectory


@dataclass
class RegradeStats:
    regraded: int = 0
    changed: int = 0
    failed: int = 0


# What a score says: a regrade that changes only its details (how it was
# computed, e.g. from the live state or a replay) changes no score.
SCORE_VALUES = ("passed", "reward", "progress", "tool_tp", "tool_fp", "tool_fn", "excluded")


def score_values(score: dict[str, Any] | None) -> tuple[Any, ...] | None:
    return None if not score else tuple(score.get(name) for name in SCORE_VALUES)


def _record_view(record: dict[str, Any]) -> RecordView:
    score = record.get("score")
    return RecordView(
        sample_id=record["sample_id"],
        subset=record["subset"],
        trial=int(record["trial"]),
        status=record.get("status", OK),
        score=Score.from_dict(score) if score else None,
        metadata=record.get("metadata") or {},
    )


def adapters_of(benchmarks: Iterable[str]) -> dict[str, Adapter]:
    """Each benchmark's adapter, asked of the registry once for a scoring pass."""
    return {name: get_adapter(name) for name in sorted(set(benchmarks))}


def regrade_options(
    adapter: Adapter, record: dict[str, Any], overrides: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The load options a record is regraded with: those it was loaded with, what the
    run resolved when it ran (``Adapter.recorded_options``), then ``overrides`` (asked
    for on the command line: ``harness score --option BENCH.KEY=VALUE``)."""
    benchmark = adapter.name
    options = {
        **(record.get("load_options") or {}),
        **adapter.recorded_options(record.get("metadata") or {}),
        **((overrides or {}).get(benchmark) or {}),
    }
    _refuse_masked_credentials(benchmark, options)
    return options


def _refuse_masked_credentials(benchmark: str, options: dict[str, Any]) -> None:
    """ConfigError for a credential option that reached the records masked: the run
    kept the secret out of them, so a regrade cannot have it back, and loading
    with the mask as the credential would judge something the run did not."""
    for key, value in options.items():
        if value == MASK and is_credential_name(str(key)):
            raise ConfigError(
                f"{benchmark} option '{key}' is masked in the records (a credential is "
                f"never stored): give it again with --option, naming {benchmark}.{key}"
            )


def _reload_samples(
    adapter: Adapter,
    records: list[dict[str, Any]],
    data_dir: Path | None,
    overrides: dict[str, dict[str, Any]] | None = None,
) -> dict[tuple[str, str], Sample]:
    """The samples behind the given records, loaded once per (subset, options)."""
    groups: dict[tuple[str, str], tuple[dict[str, Any], set[str]]] = {}
    for record in records:
        options = regrade_options(adapter, record, overrides)
        group_key = (record["subset"], repr(sorted(options.items())))
        groups.setdefault(group_key, (options, set()))[1].add(record["sample_id"])
    samples: dict[tuple[str, str], Sample] = {}
    for (subset, _), (options, ids) in groups.items():
        for sample in adapter.load(subset, ids=sorted(ids), data_dir=data_dir, options=options):
            samples[(subset, sample.id)] = sample
    return samples


async def regrade(
    records: list[dict[str, Any]],
    services: Services,
    data_dir: Path | DataDirs | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
) -> RegradeStats:
    """Score every stored trajectory again, updating the records in place."""
    stats = RegradeStats()
    by_benchmark: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record.get("status") == OK and record.get("trajectory") is not None:
            by_benchmark[record["benchmark"]].append(record)
    adapters = adapters_of(by_benchmark)
    for benchmark, group in by_benchmark.items():
        adapter = adapters[benchmark]
        folder = DataDirs.of(data_dir).for_benchmark(benchmark)
        samples = _reload_samples(adapter, group, folder, overrides)
        for record in group:
            sample = samples.get((record["subset"], record["sample_id"]))
            if sample is None:
                stats.failed += 1
                record[REGRADE_ERROR_KEY] = "sample no longer in the benchmark data"
                continue
            try:  # reading the trajectory back is part of scoring it
                trajectory = Trajectory.from_dict(record["trajectory"])
                score = await adapter.score(sample, trajectory, services)
                score = with_explanation(adapter, sample, trajectory, score)
            except Exception as exc:  # shown in scores.json, never a silent zero
                stats.failed += 1
                record[REGRADE_ERROR_KEY] = scrub_secrets(f"{type(exc).__name__}: {exc}")
                continue
            new = score.to_dict()
            stats.regraded += 1
            if score_values(record.get("score")) != score_values(new):
                stats.changed += 1
            record["score"] = new
    return stats


def aggregate_records(
    records: list[dict[str, Any]], not_run: list[dict[str, str]] | None = None
) -> dict[str, dict[str, Any]]:
    """Per-benchmark aggregates (official formulas) with counts that are always shown."""
    by_benchmark: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_benchmark[record["benchmark"]].append(record)
    for item in not_run or []:
        by_benchmark.setdefault(item["benchmark"], [])
    results: dict[str, dict[str, Any]] = {}
    adapters = adapters_of(by_benchmark)
    for benchmark, group in sorted(by_benchmark.items()):
        adapter = adapters[benchmark]
        result: BenchmarkResult = adapter.aggregate([_record_view(r) for r in group])
        skipped = [n for n in (not_run or []) if n["benchmark"] == benchmark]
        for item in skipped:
            if item["subset"] not in result.not_run:
                result.not_run.append(item["subset"])
        data = result.to_dict()
        data["counts"] = {
            "records": len(group),
            "ok": sum(1 for r in group if r.get("status") == OK),
            "infra_errors": sum(1 for r in group if r.get("status") == INFRA_ERROR),
            "score_errors": sum(1 for r in group if r.get("status") == SCORE_ERROR)
            + sum(1 for r in group if r.get(REGRADE_ERROR_KEY)),
        }
        excluded = sum(1 for r in group if (r.get("score") or {}).get("excluded"))
        if excluded:
            # Scored, but left out of the metrics by the benchmark's own rule.
            data["counts"]["excluded"] = excluded
        data["not_run_reasons"] = {n["subset"]: n["reason"] for n in skipped}
        # The official set as the adapter declared it when the run was scored, so
        # coverage stays against the data version the run was made with.
        official = adapter.official_set()
        data["official_set"] = None if official is None else official.to_dict()
        results[benchmark] = data
    return results


def usage_totals(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Token and call counts per role over a run."""
    totals: dict[str, dict[str, int]] = {}
    for record in records:
        usage = (record.get("trajectory") or {}).get("usage") or {}
        for role, counts in usage.items():
            bucket = totals.setdefault(role, {})
            for name, value in counts.items():
                bucket[name] = bucket.get(name, 0) + int(value)
    return totals


def services_for_regrade(manifest: dict[str, Any], records: list[dict[str, Any]]) -> Services:
    """The judge (and user model name) the run was made with; the user simulator
    itself is not needed to score a stored trajectory."""
    from harness.models.settings import ModelSettings
    from harness.run.clients import aux_client

    adapters = list(adapters_of(r["benchmark"] for r in records).values())
    judge_model = manifest.get("judge_model")
    cache = manifest.get("cache")
    base = ModelSettings(name=judge_model or "", cache_dir=Path(cache) if cache else None)
    return Services(
        user_model=manifest.get("user_model"),
        judge_client=aux_client(judge_model, "judge", adapters, base),
        judge_model=judge_model,
        options={"prompt_mode": bool((manifest.get("model") or {}).get("prompt_mode"))},
    )


def check_overrides(overrides: dict[str, dict[str, Any]]) -> None:
    """Options asked for on the command line are ones their benchmarks take, and
    a credential among them is held (masked in scores.json like a suite's)."""
    adapters = adapters_of(overrides)
    for benchmark, options in overrides.items():
        adapters[benchmark].check_options(options, "--option")
    add_config_secrets(overrides)


def check_overrides_apply(
    overrides: dict[str, dict[str, Any]], records: list[dict[str, Any]]
) -> None:
    """Each benchmark given an --option has records in the run: an option for
    another benchmark would change nothing, yet be recorded in scores.json as if
    the scores had been made with it."""
    present = sorted({record["benchmark"] for record in records})
    for benchmark in overrides:
        if benchmark not in present:
            raise ConfigError(
                f"--option {benchmark}.*: the run has no {benchmark} records "
                f"(it has: {', '.join(present) or 'none'})"
            )


def score_run(
    run_dir: Path,
    services: Services | None = None,
    rescore: bool = True,
    overrides: dict[str, dict[str, Any]] | None = None,
    write: bool = True,
) -> dict[str, Any]:
    """Regrade (unless ``rescore`` is False) and aggregate a run; write scores.json
    (unless ``write`` is False: a command that only reads the run). ``overrides``
    (benchmark -> load options) regrade with other settings than the run was made
    with; they are recorded in scores.json."""
    check_overrides(overrides or {})
    store = RunStore(run_dir)
    manifest = store.read_manifest()
    # Aggregating alone reads no conversation: the records without it (run_store).
    records = list(store.records(conversation=rescore).values())
    check_overrides_apply(overrides or {}, records)
    data_dir = DataDirs.of(manifest.get("data_dir"))
    stats = RegradeStats()
    if rescore:
        services = services or services_for_regrade(manifest, records)
        try:
            stats = asyncio.run(regrade(records, services, data_dir, overrides))
        except ConfigError as exc:
            raise ConfigError(
                f"{exc} (the regrade uses what the run used; another setting: "
                "harness score RUN --option BENCH.KEY=VALUE)"
            ) from None
    planned = manifest.get("planned") or {}
    recorded: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for record in records:
        recorded[record["benchmark"]][record["subset"]].add(record["sample_id"])
    missing = {
        bench: {
            subset: count - len(recorded[bench][subset])
            for subset, count in subsets.items()
            if count - len(recorded[bench][subset]) > 0
        }
        for bench, subsets in planned.items()
    }
    scores = {
        "run_id": manifest.get("run_id"),
        "scored_at": now_iso(),
        "regrade": stats.__dict__,
        **({"regrade_overrides": overrides} if overrides and rescore else {}),
        "settings": {
            key: manifest.get(key)
            for key in (
                "model",
                "strategy",
                "user_model",
                "judge_model",
                "trials",
                "suite",
                "env_feedback",
            )
        },
        "versions": manifest.get("versions", {}),
        "benchmarks": aggregate_records(records, manifest.get("not_run")),
        "missing_samples": {b: m for b, m in missing.items() if m},
        "usage": usage_totals(records),
        "costs": aggregate_costs(records),
        "world_model": aggregate_world_model(records),
        "records": {
            r["key"]: {
                "status": r.get("status"),
                "score": r.get("score"),
                REGRADE_ERROR_KEY: r.get(REGRADE_ERROR_KEY),
            }
            for r in records
        },
    }
    if write:
        write_json_atomic(store.scores_path, scores)
    return scores
