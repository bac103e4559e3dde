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
from typing import TypeAlias

from harness.boundary.json_value import JsonObject, JsonValue
from harness.config.data_dirs import DataDirs
from harness.errors import ConfigError
from harness.models.redact import MASK, add_config_secrets, is_credential_name, scrub_secrets
from harness.run.explanations import with_explanation
from harness.store.cost_totals import aggregate_costs
from harness.store.manifest import Manifest
from harness.store.records import INFRA_ERROR, OK, SCORE_ERROR, Record, now_iso
from harness.store.run_store import RunStore
from harness.store.scores import ScoredRecord, ScoresFile
from harness.store.world_model_figures import aggregate_world_model
from harness.task.contract import Adapter, BenchmarkResult, RecordView, Sample, Services
from harness.task.registry import get_adapter
from harness.types import Score, Trajectory

# Load options asked for on the command line, by benchmark (``harness score --option``).
Overrides: TypeAlias = dict[str, JsonObject]


@dataclass
class RegradeStats:
    regraded: int = 0
    changed: int = 0
    failed: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"regraded": self.regraded, "changed": self.changed, "failed": self.failed}


# What a score says: a regrade that changes only its details (how it was
# computed, e.g. from the live state or a replay) changes no score.
SCORE_VALUES = ("passed", "reward", "progress", "tool_tp", "tool_fp", "tool_fn", "excluded")

# The settings of the manifest that scores.json repeats.
SETTINGS = ("model", "strategy", "user_model", "judge_model", "trials", "suite", "env_feedback")


def score_values(score: JsonObject | None) -> tuple[JsonValue, ...] | None:
    return None if not score else tuple(score.get(name) for name in SCORE_VALUES)


def _record_view(record: Record) -> RecordView:
    return RecordView(
        sample_id=str(record.sample_id),
        subset=record.subset,
        trial=record.trial,
        status=record.status,
        score=Score.from_dict(record.score) if record.score else None,
        metadata=record.metadata or {},
    )


def adapters_of(benchmarks: Iterable[str]) -> dict[str, Adapter]:
    """Each benchmark's adapter, asked of the registry once for a scoring pass."""
    return {name: get_adapter(name) for name in sorted(set(benchmarks))}


def regrade_options(
    adapter: Adapter, record: Record, overrides: Overrides | None = None
) -> JsonObject:
    """The load options a record is regraded with: those it was loaded with, what the
    run resolved when it ran (``Adapter.recorded_options``), then ``overrides`` (asked
    for on the command line: ``harness score --option BENCH.KEY=VALUE``)."""
    benchmark = adapter.name
    options: JsonObject = {
        **(record.load_options or {}),
        **adapter.recorded_options(record.metadata or {}),
        **((overrides or {}).get(benchmark) or {}),
    }
    _refuse_masked_credentials(benchmark, options)
    return options


def _refuse_masked_credentials(benchmark: str, options: JsonObject) -> None:
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
    records: list[Record],
    data_dir: Path | None,
    overrides: Overrides | None = None,
) -> dict[tuple[str, str], Sample]:
    """The samples behind the given records, loaded once per (subset, options)."""
    groups: dict[tuple[str, str], tuple[JsonObject, set[str]]] = {}
    for record in records:
        options = regrade_options(adapter, record, overrides)
        group_key = (record.subset, repr(sorted(options.items())))
        groups.setdefault(group_key, (options, set()))[1].add(str(record.sample_id))
    samples: dict[tuple[str, str], Sample] = {}
    for (subset, _), (options, ids) in groups.items():
        for sample in adapter.load(subset, ids=sorted(ids), data_dir=data_dir, options=options):
            samples[(subset, sample.id)] = sample
    return samples


async def regrade(
    records: list[Record],
    services: Services,
    data_dir: Path | DataDirs | None = None,
    overrides: Overrides | None = None,
) -> RegradeStats:
    """Score every stored trajectory again, updating the records in place (a
    record whose regrade fails keeps its score and says why in ``score_error``)."""
    stats = RegradeStats()
    by_benchmark: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        if record.status == OK and record.trajectory is not None:
            by_benchmark[record.benchmark].append(record)
    adapters = adapters_of(by_benchmark)
    for benchmark, group in by_benchmark.items():
        adapter = adapters[benchmark]
        folder = DataDirs.of(data_dir).for_benchmark(benchmark)
        samples = _reload_samples(adapter, group, folder, overrides)
        for record in group:
            sample = samples.get((record.subset, str(record.sample_id)))
            if sample is None or record.trajectory is None:
                stats.failed += 1
                record.score_error = "sample no longer in the benchmark data"
                continue
            try:  # reading the trajectory back is part of scoring it
                trajectory = Trajectory.from_dict(record.trajectory)
                score = await adapter.score(sample, trajectory, services)
                score = with_explanation(adapter, sample, trajectory, score)
            except Exception as exc:  # shown in scores.json, never a silent zero
                stats.failed += 1
                record.score_error = scrub_secrets(f"{type(exc).__name__}: {exc}")
                continue
            new = score.to_dict()
            stats.regraded += 1
            if score_values(record.score) != score_values(new):
                stats.changed += 1
            record.score = new
    return stats


def _not_run_entries(entries: list[JsonObject] | None) -> list[dict[str, str]]:
    """The manifest's subsets left out of the run (benchmark, subset, reason), their
    text fields as read (``NotRun`` entries)."""
    return [
        {key: value for key, value in entry.items() if isinstance(value, str)}
        for entry in entries or []
    ]


def aggregate_records(
    records: list[Record], not_run: list[dict[str, str]] | None = None
) -> dict[str, JsonObject]:
    """Per-benchmark aggregates (official formulas) with counts that are always shown."""
    by_benchmark: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        by_benchmark[record.benchmark].append(record)
    for item in not_run or []:
        by_benchmark.setdefault(item["benchmark"], [])
    results: dict[str, JsonObject] = {}
    adapters = adapters_of(by_benchmark)
    for benchmark, group in sorted(by_benchmark.items()):
        adapter = adapters[benchmark]
        result: BenchmarkResult = adapter.aggregate([_record_view(r) for r in group])
        skipped = [n for n in (not_run or []) if n["benchmark"] == benchmark]
        for item in skipped:
            if item["subset"] not in result.not_run:
                result.not_run.append(item["subset"])
        data: JsonObject = result.to_dict()
        counts: JsonObject = {
            "records": len(group),
            "ok": sum(1 for r in group if r.status == OK),
            "infra_errors": sum(1 for r in group if r.status == INFRA_ERROR),
            "score_errors": sum(1 for r in group if r.status == SCORE_ERROR)
            + sum(1 for r in group if r.score_error),
        }
        data["counts"] = counts
        excluded = sum(1 for r in group if (r.score or {}).get("excluded"))
        if excluded:
            # Scored, but left out of the metrics by the benchmark's own rule.
            counts["excluded"] = excluded
        data["not_run_reasons"] = {n["subset"]: n["reason"] for n in skipped}
        # The official set as the adapter declared it when the run was scored, so
        # coverage stays against the data version the run was made with.
        official = adapter.official_set()
        data["official_set"] = None if official is None else official.to_dict()
        results[benchmark] = data
    return results


def _count(value: JsonValue) -> int:
    """A stored count as a whole number (TypeError for one that is none)."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"a count cannot be {type(value).__name__}")


def usage_totals(records: list[Record]) -> dict[str, dict[str, int]]:
    """Token and call counts per role over a run."""
    totals: dict[str, dict[str, int]] = {}
    for record in records:
        usage = (record.trajectory or {}).get("usage") or {}
        if not isinstance(usage, dict):
            raise TypeError("a trajectory's usage is not an object")
        for role, counts in usage.items():
            bucket = totals.setdefault(role, {})
            if not isinstance(counts, dict):
                raise TypeError(f"the usage of {role} is not an object")
            for name, value in counts.items():
                bucket[name] = bucket.get(name, 0) + _count(value)
    return totals


def services_for_regrade(manifest: Manifest, records: list[Record]) -> Services:
    """The judge (and user model name) the run was made with; the user simulator
    itself is not needed to score a stored trajectory."""
    from harness.models.settings import ModelSettings
    from harness.run.clients import aux_client

    adapters = list(adapters_of(r.benchmark for r in records).values())
    judge_model = manifest.judge_model
    cache = manifest.cache
    base = ModelSettings(name=judge_model or "", cache_dir=Path(cache) if cache else None)
    return Services(
        user_model=manifest.user_model,
        judge_client=aux_client(judge_model, "judge", adapters, base),
        judge_model=judge_model,
        options={"prompt_mode": bool((manifest.model or {}).get("prompt_mode"))},
    )


def check_overrides(overrides: Overrides) -> None:
    """Options asked for on the command line are ones their benchmarks take, and
    a credential among them is held (masked in scores.json like a suite's)."""
    adapters = adapters_of(overrides)
    for benchmark, options in overrides.items():
        adapters[benchmark].check_options(options, "--option")
    add_config_secrets(overrides)


def check_overrides_apply(overrides: Overrides, records: list[Record]) -> None:
    """Each benchmark given an --option has records in the run: an option for
    another benchmark would change nothing, yet be recorded in scores.json as if
    the scores had been made with it."""
    present = sorted({record.benchmark for record in records})
    for benchmark in overrides:
        if benchmark not in present:
            raise ConfigError(
                f"--option {benchmark}.*: the run has no {benchmark} records "
                f"(it has: {', '.join(present) or 'none'})"
            )


def missing_samples(
    planned: dict[str, dict[str, int]], records: list[Record]
) -> dict[str, dict[str, int]]:
    """Samples planned but without a record, per benchmark and subset (those with some)."""
    recorded: dict[str, dict[str, set[str | int]]] = defaultdict(lambda: defaultdict(set))
    for record in records:
        recorded[record.benchmark][record.subset].add(record.sample_id)
    missing = {
        bench: {
            subset: count - len(recorded[bench][subset])
            for subset, count in subsets.items()
            if count - len(recorded[bench][subset]) > 0
        }
        for bench, subsets in planned.items()
    }
    return {b: m for b, m in missing.items() if m}


def score_run(
    run_dir: Path,
    services: Services | None = None,
    rescore: bool = True,
    overrides: Overrides | None = None,
    write: bool = True,
) -> ScoresFile:
    """Regrade (unless ``rescore`` is False) and aggregate a run; write scores.json
    (unless ``write`` is False: a command that only reads the run). ``overrides``
    (benchmark -> load options) regrade with other settings than the run was made
    with; they are recorded in scores.json. Returns what scores.json holds
    (``ScoresFile.to_dict`` is its JSON form)."""
    return score_run_records(run_dir, services, rescore, overrides, write).scores


@dataclass(frozen=True)
class ScoredRun:
    """What scoring a run folder wrote, and the records it read to write it."""

    scores: ScoresFile
    # key -> record as scored (without its conversation unless regraded): what
    # the run's tables and summary read next, rather than the file again.
    records: dict[str, Record]


def score_run_records(
    run_dir: Path,
    services: Services | None = None,
    rescore: bool = True,
    overrides: Overrides | None = None,
    write: bool = True,
) -> ScoredRun:
    """``score_run``, with the records it read."""
    check_overrides(overrides or {})
    store = RunStore(run_dir)
    written = store.read_manifest()
    manifest = Manifest.from_dict(written)
    # Aggregating alone reads no conversation: the records without it (run_store).
    records = list(store.load_records(conversation=rescore).values())
    check_overrides_apply(overrides or {}, records)
    data_dir = DataDirs.of(manifest.data_dir)
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
    versions = written.get("versions", {})  # a dict or None (manifest_problem)
    # Aggregates read the records' JSON form, as stored.
    stored = [record.to_dict() for record in records]
    scores = ScoresFile(
        run_id=manifest.run_id,
        scored_at=now_iso(),
        regrade=stats.to_dict(),
        regrade_overrides=overrides if overrides and rescore else None,
        settings={key: written.get(key) for key in SETTINGS},
        versions=versions if isinstance(versions, dict) else None,
        benchmarks=aggregate_records(records, _not_run_entries(manifest.not_run)),
        missing_samples=missing_samples(manifest.planned or {}, records),
        usage=usage_totals(records),
        costs=aggregate_costs(stored),
        world_model=aggregate_world_model(stored),
        records={
            r.key: ScoredRecord(status=r.status, score=r.score, score_error=r.score_error)
            for r in records
        },
    )
    if write:
        store.write_scores(scores)
    return ScoredRun(scores, {record.key: record for record in records})
