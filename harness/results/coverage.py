"""What a headline number covers: samples scored of the official set, subsets, trials.

A number over 78 of a benchmark's 613 items, over two of its four task sets, or
over an interrupted run's first trials reads like the full benchmark's unless it
says otherwise. Every headline therefore travels with a ``Coverage``:

- samples scored / samples in the benchmark's official set (a sample counts when
  at least one of its trials was scored);
- (sample, trial) pairs scored / official samples x the trials the run asked for;
- subsets run / subsets in the headline's formula;
- the trials asked for, the data version the official sizes are of, and the
  sample limit the run was started with (``--limit`` or a suite's ``limit``).

Subsets scored outside the official set (a subset a benchmark reports but leaves
out of its overall number) do not count towards its totals; the summary names them and their
samples beside the totals, so a run of only such a subset does not read as nothing
scored.

The official set comes from the adapter (``Adapter.official_set``), never from
what happened to load: a data folder with fewer items is a partial run. A number
over less than its official set is *partial*; every table, comparison and report
cell marks it with ``PARTIAL_MARK``, explained once beside it (``LEGEND``).
An adapter that declares no official set gets coverage without a denominator,
which is never called partial (nothing says what full would be).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from harness.task.official_set import OfficialSet

if TYPE_CHECKING:
    from harness.store.manifest import Manifest

PARTIAL_MARK = "*"
MAX_NAMED = 4  # missing subsets named in a note before "and N more"
LEGEND = (
    f"{PARTIAL_MARK} = partial: over less than the benchmark's official set "
    "(samples, subsets or trials; coverage listed below)"
)


class SubsetCoverageJSON(TypedDict):
    samples_scored: int
    samples_official: int | None
    pairs_scored: int


class CoverageJSON(TypedDict):
    partial: bool
    samples_scored: int
    samples_official: int | None
    pairs_scored: int
    pairs_official: int | None
    subsets_run: list[str]
    subsets_official: list[str]
    trials: int
    limit: int | None
    data_version: str
    reasons: list[str]
    by_subset: dict[str, SubsetCoverageJSON]


@dataclass(frozen=True)
class SubsetCoverage:
    """What one subset of a run covers."""

    name: str
    samples_scored: int
    pairs_scored: int  # (sample, trial) pairs with a score
    samples_official: int | None  # None: not a subset of the official set


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class Coverage:
    """What a headline value covers (see the module docstring)."""

    subsets: tuple[SubsetCoverage, ...]  # the official subsets first, each once
    official_subsets: tuple[str, ...]  # () when the adapter declares no official set
    trials: int  # trials per sample the run asked for
    data_version: str = ""
    limit: int | None = None  # the sample limit per subset the run was started with

    # -- totals over the official subsets ------------------------------------------------

    @property
    def declared(self) -> bool:
        """Whether the adapter declared an official set to compare with."""
        return bool(self.official_subsets)

    def _official(self) -> list[SubsetCoverage]:
        return [s for s in self.subsets if s.samples_official is not None]

    @property
    def samples_scored(self) -> int:
        scope = self._official() if self.declared else list(self.subsets)
        return sum(s.samples_scored for s in scope)

    @property
    def pairs_scored(self) -> int:
        scope = self._official() if self.declared else list(self.subsets)
        return sum(s.pairs_scored for s in scope)

    @property
    def samples_official(self) -> int | None:
        if not self.declared:
            return None
        return sum(s.samples_official or 0 for s in self._official())

    @property
    def pairs_official(self) -> int | None:
        total = self.samples_official
        return None if total is None else total * self.trials

    @property
    def subsets_run(self) -> tuple[str, ...]:
        """Official subsets with at least one scored sample (all run subsets when
        no official set is declared)."""
        scope = self._official() if self.declared else list(self.subsets)
        return tuple(s.name for s in scope if s.samples_scored)

    @property
    def subsets_outside(self) -> tuple[SubsetCoverage, ...]:
        """Subsets scored that are not in the declared official set (a subset reported
        but left out of the overall number): said beside the totals, which
        count the official set only."""
        if not self.declared:
            return ()
        return tuple(s for s in self.subsets if s.samples_official is None and s.samples_scored)

    @property
    def subsets_missing(self) -> tuple[str, ...]:
        return tuple(s for s in self.official_subsets if s not in self.subsets_run)

    @property
    def partial(self) -> bool:
        """Whether the number is over less than the official set (samples, subsets
        or trials). Never for a benchmark that declares no official set."""
        if not self.declared:
            return False
        return self.pairs_scored < (self.pairs_official or 0) or bool(self.subsets_missing)

    # -- views ------------------------------------------------------------------------

    def restrict(self, names: Iterable[str]) -> Coverage:
        """The coverage of the given subsets only (e.g. of a per-subset metric)."""
        wanted = set(names)
        subsets = tuple(s for s in self.subsets if s.name in wanted)
        official = tuple(s for s in self.official_subsets if s in wanted)
        return Coverage(subsets, official, self.trials, self.data_version, self.limit)

    def for_metric(self, metric: str, scope: Iterable[str] | None = None) -> Coverage:
        """What one headline metric covers: the subsets ``scope`` names (its adapter's
        ``metric_subsets``), else those its name names (``pass^1/airline``,
        ``cross/avg@4``), else the whole benchmark."""
        if scope is not None:
            return self.restrict(scope)
        known = {s.name for s in self.subsets} | set(self.official_subsets)
        parts = [p for p in metric.split("/") if p in known]
        return self.restrict(parts) if parts else self

    def summary(self) -> str:
        """One short cell, e.g. '78/613 samples, 3/3 subsets, 1 trial'."""
        official = self.samples_official
        if official is None:
            parts = [f"{self.samples_scored}/? samples (no official size declared)"]
        else:
            parts = [f"{self.samples_scored}/{official} samples"]
        if self.declared:
            parts.append(f"{len(self.subsets_run)}/{len(self.official_subsets)} subsets")
        parts.append(_plural(self.trials, "trial"))
        if self.declared and self.trials > 1:
            parts.append(f"{self.pairs_scored}/{self.pairs_official} pairs")
        outside = self.subsets_outside
        if outside:
            samples = sum(s.samples_scored for s in outside)
            if len(outside) == 1:
                named = outside[0].name
            else:
                named = ", ".join(f"{s.name} ({s.samples_scored})" for s in outside[:MAX_NAMED])
                if len(outside) > MAX_NAMED:
                    named += f" and {len(outside) - MAX_NAMED} more"
            parts.append(f"+{_plural(samples, 'sample')} of {named} (not in the official set)")
        return ", ".join(parts)

    def reasons(self) -> list[str]:
        """Why the number is partial ([] when it is not)."""
        if not self.partial:
            return []
        reasons = []
        missing = self.subsets_missing
        if missing:
            names = ", ".join(missing[:MAX_NAMED])
            more = f" and {len(missing) - MAX_NAMED} more" if len(missing) > MAX_NAMED else ""
            reasons.append(f"not run or nothing scored: {names}{more}")
        if self.samples_scored < (self.samples_official or 0):
            reasons.append(f"{self.samples_scored} of {self.samples_official} samples scored")
        expected = self.samples_scored * self.trials
        if self.pairs_scored < expected:
            reasons.append(
                f"{expected - self.pairs_scored} trial(s) of scored samples not scored "
                "(interrupted or errored)"
            )
        if self.limit is not None:
            reasons.append(f"run with a limit of {self.limit} sample(s) per subset")
        return reasons

    def describe(self) -> str:
        """The coverage line for the notes under a table."""
        text = self.summary()
        if self.data_version:
            text += f" (official set: {self.data_version})"
        reasons = self.reasons()
        return text + (f" — {'; '.join(reasons)}" if reasons else "")

    def to_dict(self) -> CoverageJSON:
        return {
            "partial": self.partial,
            "samples_scored": self.samples_scored,
            "samples_official": self.samples_official,
            "pairs_scored": self.pairs_scored,
            "pairs_official": self.pairs_official,
            "subsets_run": list(self.subsets_run),
            "subsets_official": list(self.official_subsets),
            "trials": self.trials,
            "limit": self.limit,
            "data_version": self.data_version,
            "reasons": self.reasons(),
            "by_subset": {
                s.name: {
                    "samples_scored": s.samples_scored,
                    "samples_official": s.samples_official,
                    "pairs_scored": s.pairs_scored,
                }
                for s in self.subsets
            },
        }


def coverage_of(
    official: OfficialSet | None,
    scored: Mapping[str, Mapping[str, int]],
    trials: int,
    limit: int | None = None,
) -> Coverage:
    """Coverage from scored trials per subset and sample (subset -> sample id ->
    number of its trials that were scored; samples with none may be listed as 0)."""
    sizes = dict(official.sizes) if official is not None else {}
    names = list(sizes) + sorted(set(scored) - set(sizes))
    subsets = tuple(
        SubsetCoverage(
            name=name,
            samples_scored=sum(1 for n in (scored.get(name) or {}).values() if n > 0),
            pairs_scored=sum((scored.get(name) or {}).values()),
            samples_official=sizes.get(name),
        )
        for name in names
    )
    return Coverage(
        subsets=subsets,
        official_subsets=tuple(sizes),
        trials=max(1, int(trials)),
        data_version=official.version if official is not None else "",
        limit=limit,
    )


def run_limit(manifest: Manifest, benchmark: str) -> int | None:
    """The smallest sample limit per subset a run was started with for ``benchmark``:
    the command's ``--limit`` or the suite entry's ``limit``."""
    limits = []
    if isinstance(manifest.limit, int):
        limits.append(manifest.limit)
    suite = manifest.suite
    entries = suite.get("entries") if isinstance(suite, dict) else None
    for entry in entries or []:
        if isinstance(entry, dict) and entry.get("benchmark") == benchmark:
            if isinstance(entry.get("limit"), int):
                limits.append(entry["limit"])
    return min(limits) if limits else None
