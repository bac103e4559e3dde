"""Joining the shard folders of one run (``harness run --shard I/N``, ``--parts K``)
into one run folder: the shards must be parts of one run and own their records;
the merged manifest, the gaps between them, the samples' inputs (each once) and a
scoring of the whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.store.manifest import Manifest
    from harness.store.records import Record


# Shown before "...and N more" in a message.
LISTED = 10


@dataclass
class ShardFolder:
    root: Path
    manifest: Manifest
    records: dict[str, Record]  # the last record of each key

    @property
    def label(self) -> str:
        return str(self.manifest.shard or "1/1")


@dataclass
class Gaps:
    """Planned (sample, trial) pairs in no shard."""

    missing_keys: list[str] = field(default_factory=list)  # of samples some shard has
    unseen_samples: dict[str, int] = field(default_factory=dict)  # "bench/subset" -> count
    missing_shards: list[str] = field(default_factory=list)  # "2/3" when all shards are of N

    def count(self, trials: int) -> int:
        return len(self.missing_keys) + trials * sum(self.unseen_samples.values())

    def describe(self) -> str:
        parts = []
        if self.missing_shards:
            parts.append(f"no folder of shard {', '.join(self.missing_shards)}")
        for where, count in sorted(self.unseen_samples.items()):
            parts.append(f"{where}: {count} sample(s) in no shard")
        if self.missing_keys:
            parts.append("missing " + _listed(self.missing_keys))
        return "; ".join(parts)


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:LISTED])
    return shown + (f" and {len(items) - LISTED} more" if len(items) > LISTED else "")


def _load(root: Path) -> ShardFolder:
    from harness.errors import ConfigError
    from harness.store.run_store import RunStore

    store = RunStore(root)
    manifest = store.load_manifest()
    if manifest.merged_from is not None:
        raise ConfigError(f"{root} is already a merged run; merge its shard folders instead")
    return ShardFolder(root, manifest, store.load_records())


def check_same_run(shards: list[ShardFolder]) -> None:
    """Every shard has the first one's identity, trials and planned work."""
    from harness.errors import ConfigError
    from harness.store.manifest import IDENTITY_KEYS

    keys = [key for key in IDENTITY_KEYS if key != "shard"] + ["trials", "planned_full"]
    first = shards[0]
    for other in shards[1:]:
        differ = [k for k in keys if getattr(first.manifest, k) != getattr(other.manifest, k)]
        if differ:
            raise ConfigError(
                f"{other.root} is not a shard of the same run as {first.root} "
                f"(different {', '.join(differ)})"
            )
        from harness.models.fingerprint import check_same_weights

        check_same_weights(first.manifest.to_dict(), other.manifest.to_dict(), other.root)


def check_ownership(shards: list[ShardFolder]) -> None:
    """Each record belongs to its folder's shard, and no key is in two folders."""
    from harness.config.shard import Shard
    from harness.errors import ConfigError

    owner: dict[str, Path] = {}
    overlap: list[str] = []
    for shard in shards:
        partition = Shard.parse(shard.label)
        strays = [key for key in shard.records if not partition.owns(key)]
        if strays:
            raise ConfigError(
                f"{shard.root} holds records of another shard than its {partition.label()}: "
                + _listed(sorted(strays))
            )
        for key in shard.records:
            if key in owner:
                overlap.append(f"{key} ({owner[key]} and {shard.root})")
            owner[key] = shard.root
    if overlap:
        raise ConfigError("the same (sample, trial) is in two shards: " + _listed(sorted(overlap)))


def find_gaps(shards: list[ShardFolder]) -> Gaps:
    """What of the whole suite's planned work no shard holds.

    The manifest plans sample counts per subset, not ids: a missing trial of a
    sample that some shard has is named exactly; samples that no shard has
    are counted (and the shard folders not given are named).
    """
    manifest = shards[0].manifest
    trials = int(manifest.trials or 1)
    seen: dict[tuple[str, str], dict[str, set[int]]] = {}
    for shard in shards:
        for record in shard.records.values():
            bench_subset = (record.benchmark, record.subset)
            seen.setdefault(bench_subset, {}).setdefault(str(record.sample_id), set()).add(
                record.trial
            )
    gaps = Gaps()
    for bench, subsets in sorted((manifest.planned_full or {}).items()):
        for subset, planned in sorted(subsets.items()):
            samples = seen.get((bench, subset), {})
            for sample_id, done in sorted(samples.items()):
                for trial in range(trials):
                    if trial not in done:
                        gaps.missing_keys.append(f"{bench}/{subset}/{sample_id}#{trial}")
            if planned > len(samples):
                gaps.unseen_samples[f"{bench}/{subset}"] = planned - len(samples)
    labels = [s.label for s in shards]
    counts = {label.partition("/")[2] for label in labels}
    if len(counts) == 1 and (gaps.missing_keys or gaps.unseen_samples):
        count = int(counts.pop())
        gaps.missing_shards = [
            f"{i}/{count}" for i in range(1, count + 1) if f"{i}/{count}" not in labels
        ]
    return gaps


def merged_manifest(shards: list[ShardFolder], out: Path, gaps: Gaps) -> Manifest:
    first = shards[0].manifest
    trials = int(first.trials or 1)
    finished = [s.manifest.finished_at for s in shards]
    # Each shard's server held its own GPUs: their server time adds up.
    spans = [span for s in shards for span in s.manifest.server_spans or []]
    return replace(
        first,
        run_id=out.name,
        shard=f"merged from {', '.join(s.label for s in shards)}",
        merged_from=[str(s.root) for s in shards],
        planned=first.planned_full or {},
        created_at=min(str(s.manifest.created_at or "") for s in shards),
        # Shards run side by side: the merged run's wall time is first start to
        # last finish, not the sum of the shards' active spans.
        finished_at=max(str(f) for f in finished) if all(finished) else None,
        active_spans=None,
        resumed_at=None,
        last_summary=None,
        server_spans=spans or first.server_spans,
        # Merged with --allow-gaps. Kept here because the scores count missing
        # samples, not missing trials of a sample.
        merge_gaps={"pairs": gaps.count(trials), "what": gaps.describe()}
        if gaps.count(trials)
        else first.merge_gaps,
        # What may differ between machines, per shard, for the record.
        shards=[
            {
                "folder": str(s.root),
                "shard": s.manifest.shard,
                "created_at": s.manifest.created_at,
                "finished_at": s.manifest.finished_at,
                "versions": s.manifest.versions,
                "server": s.manifest.server,
                "last_summary": s.manifest.last_summary,
            }
            for s in shards
        ],
    )


def check_merge_target(out: Path, flag: str = "--out") -> None:
    """``out`` can take a merge: it is empty, absent, or an earlier merge (whose
    files a merge replaces). ``harness run --parts`` checks it before any work."""
    from harness.errors import ConfigError
    from harness.store.run_store import RunStore

    store = RunStore(out)
    if store.exists():
        if store.load_manifest().merged_from is None:
            raise ConfigError(f"{flag} {out} holds a run that is not a merge; use a new folder")
        return
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"{flag} {out} is not empty; merge into a new folder")


def _prepare_out(out: Path, shards: list[ShardFolder]) -> None:
    from harness.errors import ConfigError

    if any(out.resolve() == s.root.resolve() for s in shards):
        raise ConfigError(f"--out {out} is one of the shards; merge into a new folder")
    check_merge_target(out)


def merge_runs(shard_dirs: list[Path], out: Path, allow_gaps: bool = False) -> Gaps:
    """Check and merge ``shard_dirs`` into ``out``; returns the gaps (empty if none)."""
    from harness.boundary.atomic import open_atomic
    from harness.errors import ConfigError
    from harness.run.scoring import score_run
    from harness.store.inputs import merge_inputs
    from harness.store.run_store import SAMPLES, RunStore, record_line

    if len({d.resolve() for d in shard_dirs}) != len(shard_dirs):
        raise ConfigError("a shard folder is given twice")
    shards = [_load(Path(d)) for d in shard_dirs]
    check_same_run(shards)
    check_ownership(shards)
    gaps = find_gaps(shards)
    trials = int(shards[0].manifest.trials or 1)
    if gaps.count(trials) and not allow_gaps:
        raise ConfigError(
            f"the shards miss {gaps.count(trials)} planned (sample, trial) pair(s): "
            f"{gaps.describe()} (run the missing shards, or merge anyway with --allow-gaps)"
        )
    _prepare_out(out, shards)
    out.mkdir(parents=True, exist_ok=True)
    records = {key: record for shard in shards for key, record in shard.records.items()}
    with open_atomic(out / SAMPLES) as handle:
        for key in sorted(records):
            handle.write(record_line(records[key]) + "\n")
    merge_inputs([shard.root for shard in shards], out)
    RunStore(out).write_manifest(merged_manifest(shards, out, gaps))
    score_run(out, rescore=False)
    return gaps


RERUN_SHARDS = "rerun the shard commands to retry the failed records, then merge again"


def merged_lines(out: Path, shard_count: int, gaps: Gaps, rerun: str = RERUN_SHARDS) -> list[str]:
    """What a merge says on stderr: its records, its errors (and ``rerun``, how to
    retry them), its gaps."""
    from harness.store.run_store import RunStore

    records = RunStore(out).load_records()
    failed = sum(1 for r in records.values() if not r.ok)
    lines = [
        f"{out}: merged {shard_count} shard(s), {len(records)} records "
        f"({failed} infrastructure or scoring errors)"
    ]
    if failed:
        lines.append(rerun)
    if gaps.missing_keys or gaps.unseen_samples:
        lines.append(f"gaps (merged with --allow-gaps): {gaps.describe()}")
    return lines
