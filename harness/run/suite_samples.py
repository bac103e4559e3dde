"""The samples a suite names: ``load_suite_samples`` loads them through each
benchmark's adapter, listing (not dropping) the subsets that cannot run here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.config.data_dirs import DataDirs
from harness.config.suites import Suite
from harness.errors import ConfigError, DataNotFoundError
from harness.run.id_selection import parse_ids
from harness.task.contract import Adapter, Sample
from harness.task.registry import get_adapter


@dataclass
class NotRun:
    benchmark: str
    subset: str
    reason: str


def not_run_lines(not_run: list[NotRun], names_shown: int = 4) -> list[str]:
    """One line per distinct reason, naming the subsets it holds for (and how
    many, when several): an offline Hub is one line, not one per subset."""
    groups: dict[str, list[str]] = {}
    for entry in not_run:
        groups.setdefault(entry.reason, []).append(f"{entry.benchmark}/{entry.subset}")
    lines = []
    for reason, names in groups.items():
        if len(names) == 1:
            lines.append(f"{names[0]}: {reason}")
            continue
        shown = ", ".join(names[:names_shown]) + (", ..." if len(names) > names_shown else "")
        lines.append(f"{len(names)} subsets ({shown}): {reason}")
    return lines


@dataclass
class SuiteSamples:
    """The samples a suite names, loaded; the subsets that cannot run here, each
    with its reason; each sample's load options; each benchmark's adapter."""

    samples: list[Sample]
    not_run: list[NotRun] = field(default_factory=list)
    adapters: dict[str, Adapter] = field(default_factory=dict)  # benchmark -> adapter
    # sample.key -> the suite entry's load options, so scoring can reload samples
    load_options: dict[str, dict[str, object]] = field(default_factory=dict)

    def planned_counts(
        self, owned: Callable[[str], bool] | None = None
    ) -> dict[str, dict[str, int]]:
        """Samples per benchmark and subset (only those ``owned`` selects, if given)."""
        counts: dict[str, dict[str, int]] = {}
        for sample in self.samples:
            if owned is not None and not owned(sample.key):
                continue
            per_subset = counts.setdefault(sample.benchmark, {})
            per_subset[sample.subset] = per_subset.get(sample.subset, 0) + 1
        return counts


def load_suite_samples(
    suite: Suite,
    limit: int | None = None,
    data_dir: Path | DataDirs | None = None,
    ids: list[str] | None = None,
) -> SuiteSamples:
    """Load every sample a suite names; subsets that cannot run here are listed, not dropped.
    ``data_dir``: a root with one folder per benchmark, or a DataDirs; ``ids``: plain or
    benchmark-qualified sample ids (harness.run.id_selection)."""
    # Each benchmark's adapter, asked of the registry once for the whole run.
    adapters = {entry.benchmark: get_adapter(entry.benchmark) for entry in suite.entries}
    plan = SuiteSamples(samples=[], adapters=adapters)
    data_dirs = DataDirs.of(data_dir)
    selection = parse_ids(
        ids or [], lambda name: adapters[name].subsets() if name in adapters else None
    )
    selected: set[tuple[str, str]] = set()
    for entry in suite.entries:
        adapter = adapters[entry.benchmark]
        known = adapter.subsets()
        subsets = known if entry.subsets == "all" else list(entry.subsets)
        unknown = [s for s in subsets if s not in known]
        if unknown:
            raise ConfigError(
                f"suite '{suite.name}': benchmark '{entry.benchmark}' has no subset(s) "
                f"{', '.join(unknown)} (known: {', '.join(known)})"
            )
        for subset in subsets:
            wanted_ids = entry.ids
            if not selection.empty:
                wanted_ids = selection.for_subset(entry.benchmark, subset)
                if wanted_ids is None:
                    continue  # --ids picks nothing of this subset
                selected.add((entry.benchmark, subset))
            reason = adapter.unavailable_reason(subset)
            if reason:
                plan.not_run.append(NotRun(entry.benchmark, subset, reason))
                continue
            caps = [c for c in (entry.limit, limit) if c is not None]
            try:
                samples = adapter.load(
                    subset,
                    limit=min(caps) if caps else None,
                    ids=wanted_ids,
                    data_dir=data_dirs.for_benchmark(entry.benchmark),
                    options=entry.options,
                )
            except DataNotFoundError as exc:
                plan.not_run.append(NotRun(entry.benchmark, subset, str(exc)))
                continue
            plan.samples.extend(samples)
            for sample in samples:
                sample.adapter = adapter
                plan.load_options[sample.key] = dict(entry.options)
    selection.check_covered(selected)
    return plan
