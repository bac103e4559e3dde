"""``--ids``: the samples a run picks, by plain id or by benchmark-qualified id.

A plain id (``12``) is looked up in every subset of the suite, as before. A
benchmark-qualified id names its benchmark and subset too,
``<benchmark>/<subset>:<id>`` (e.g. ``tau3/retail:12``,
``tau3/banking_knowledge:task_093``), so one command can pick samples of several
entries. An id is qualified when its text before the first ``/`` is a benchmark
of the suite and what follows starts with one of that benchmark's subsets and
``:`` (the longest such subset; sample ids may themselves hold ``/`` and ``:``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from harness.errors import ConfigError


@dataclass(frozen=True)
class IdSelection:
    plain: tuple[str, ...] = ()
    qualified: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.plain and not self.qualified

    def for_subset(self, benchmark: str, subset: str) -> list[str] | None:
        """The ids to load from one subset: None when the selection names none of it
        (only qualified ids given, none of this subset), else the plain ids and its own."""
        own = self.qualified.get((benchmark, subset), [])
        if not self.plain and not own:
            return None
        return [*self.plain, *own]

    def check_covered(self, planned: set[tuple[str, str]]) -> None:
        """Refuse, in one line, a qualified id of a subset the suite does not run."""
        for (benchmark, subset), ids in self.qualified.items():
            if (benchmark, subset) not in planned:
                raise ConfigError(
                    f"--ids {benchmark}/{subset}:{ids[0]}: the suite has no {benchmark} "
                    f"entry with subset {subset}"
                )


def parse_ids(ids: Sequence[str], subsets_of: Callable[[str], list[str] | None]) -> IdSelection:
    """Split ``--ids`` into plain and qualified ids; ``subsets_of(benchmark)`` gives a
    benchmark's subsets, None for a name that is not a benchmark of the run."""
    plain: list[str] = []
    qualified: dict[tuple[str, str], list[str]] = {}
    for text in ids:
        found = _qualified(text, subsets_of)
        if found is None:
            plain.append(text)
        else:
            benchmark, subset, sample_id = found
            qualified.setdefault((benchmark, subset), []).append(sample_id)
    return IdSelection(tuple(plain), qualified)


def _qualified(
    text: str, subsets_of: Callable[[str], list[str] | None]
) -> tuple[str, str, str] | None:
    benchmark, slash, rest = text.partition("/")
    if not slash:
        return None
    subsets = subsets_of(benchmark)
    if not subsets:
        return None
    matches = [s for s in subsets if rest.startswith(f"{s}:") and len(rest) > len(s) + 1]
    if not matches:
        return None
    subset = max(matches, key=len)
    return benchmark, subset, rest[len(subset) + 1 :]
