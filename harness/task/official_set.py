"""A benchmark's official full set, as its adapter declares it
(``Adapter.official_set``): samples per subset of the headline formula, and the
data version these sizes are of. ``harness.results.coverage`` measures a run
against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.boundary.json_value import JsonObject


@dataclass(frozen=True)
class OfficialSet:
    """A benchmark's official full set as its adapter declares it: samples per
    subset of the headline formula, and the data version these sizes are of."""

    sizes: Mapping[str, int] = field(hash=False)
    version: str

    @property
    def subsets(self) -> tuple[str, ...]:
        return tuple(self.sizes)

    def to_dict(self) -> JsonObject:
        sizes: JsonObject = dict(self.sizes)
        return {"sizes": sizes, "version": self.version}

    @classmethod
    def from_dict(cls, data: object) -> OfficialSet | None:
        """An official set as scores.json records it; None for anything else."""
        if not isinstance(data, Mapping):
            return None
        given = data.get("sizes")
        if not isinstance(given, Mapping):
            return None
        sizes = {str(k): int(v) for k, v in given.items() if isinstance(v, int)}
        return cls(sizes, str(data.get("version") or "")) if sizes else None

    @property
    def samples(self) -> int:
        return sum(self.sizes.values())
