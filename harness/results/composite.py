"""Composite scores across benchmarks, defined as data beside the reference tables.

A composite is the plain mean of the primary metrics of the benchmarks it names.
Its definition is a YAML file under ``results/reference/composites/`` (installed:
``harness/reference_data/composites/``), because it belongs to whoever published
it, not to the harness::

    name: paper
    label: Overall
    definition: Overall = mean(A, B, C)
    source: the composite of some paper (where it was published)
    benchmarks: [bench_a, bench_b, bench_c]     # adapter names

The leaderboard uses the first definition (by file name) and shows it only when
some row holds every benchmark it names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError
from harness.results.reference import reference_dirs

FOLDER = "composites"


@dataclass(frozen=True)
class CompositeDefinition:
    name: str
    label: str  # the column header
    definition: str  # the formula, in words
    source: str  # whose composite it is
    benchmarks: tuple[str, ...]

    def applies_to(self, benchmarks: set[str]) -> bool:
        return set(self.benchmarks) <= benchmarks


def _definition(path: Path) -> CompositeDefinition:
    from harness.config.validate import read_yaml

    data = read_yaml(path, f"composite definition {path}")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a composite definition is a mapping")
    benchmarks = data.get("benchmarks")
    if not isinstance(benchmarks, list) or not benchmarks:
        raise ConfigError(f"{path}: a composite needs a non-empty 'benchmarks' list")
    return CompositeDefinition(
        name=str(data.get("name") or path.stem),
        label=str(data.get("label") or "composite"),
        definition=str(data.get("definition") or f"mean({', '.join(map(str, benchmarks))})"),
        source=str(data.get("source") or ""),
        benchmarks=tuple(str(b) for b in benchmarks),
    )


def composite_definitions() -> list[CompositeDefinition]:
    """Every composite definition found, the installed package's first, by file name."""
    seen: dict[str, Path] = {}
    for folder in reference_dirs():
        for path in sorted((folder / FOLDER).glob("*.yaml")):
            seen.setdefault(path.stem, path)
    return [_definition(seen[name]) for name in sorted(seen)]


def default_composite() -> CompositeDefinition | None:
    definitions = composite_definitions()
    return definitions[0] if definitions else None
