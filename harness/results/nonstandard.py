"""Numbers made under a setting that is not the benchmark's own: their mark.

An adapter names, in its aggregate (``BenchmarkResult.nonstandard``), each
setting of a run that departs from how its benchmark is officially run (a
lenient rule the benchmark does not have, prompts that are not its own, ...).
Every table cell of such a benchmark carries ``NONSTANDARD_MARK``, explained
once (``LEGEND``) with what departed, as a partial number carries its mark.
"""

from __future__ import annotations

NONSTANDARD_MARK = "§"
LEGEND = (
    f"{NONSTANDARD_MARK} = not the benchmark's standard configuration; "
    "not comparable with its official numbers"
)


def note(run: str, benchmark_label: str, reasons: list[str]) -> str:
    return f"{NONSTANDARD_MARK} {run} {benchmark_label}: {'; '.join(reasons)}"


def with_legend(notes: list[str]) -> list[str]:
    """The mark's meaning once, then what each marked benchmark departs in."""
    unique = list(dict.fromkeys(notes))
    return [LEGEND, *unique] if unique else []
