"""The leaderboard as booktabs LaTeX tables."""

from __future__ import annotations

import io
from typing import Any

from harness.report.leaderboard.cells import format_cell
from harness.report.leaderboard.rows import MetricValue
from harness.report.leaderboard.table import Table
from harness.results.coverage import PARTIAL_MARK

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # Characters of our labels that pdflatex does not take as text.
    "τ": r"$\tau$",
    "²": r"$^2$",
    "³": r"$^3$",
    "§": r"\S{}",
    "–": "--",
    "—": "---",
    "…": r"\ldots{}",
    "Δ": r"$\Delta$",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in " ".join(text.split()))


def _latex_cell(value: Any, kind: str) -> str:
    if kind == "metric" and isinstance(value, MetricValue) and value.value is not None:
        text = f"{100 * float(value.value):.2f}{latex_escape(value.note)}"
        if value.interval is not None:
            low, high = 100 * value.interval.low, 100 * value.interval.high
            text += rf" {{\scriptsize[{low:.1f}, {high:.1f}]}}"
        if value.partial:
            text += rf"$^{{{PARTIAL_MARK}}}$"
        if value.nonstandard:
            text += r"$^{\S}$"
        return text
    return latex_escape(format_cell(value, kind))


def render_latex(tables: list[Table], footer: list[str]) -> str:
    """booktabs tables, one per leaderboard table (needs \\usepackage{booktabs})."""
    out = io.StringIO()
    for table in tables:
        spec = "".join("r" if c.kind != "text" else "l" for c in table.columns)
        out.write("\\begin{table}[t]\n\\centering\n\\small\n")
        out.write(f"\\begin{{tabular}}{{{spec}}}\n\\toprule\n")
        out.write(" & ".join(latex_escape(c.header) for c in table.columns) + " \\\\\n\\midrule\n")
        for row in table.rows:
            cells = [_latex_cell(row.get(c.key), c.kind) for c in table.columns]
            out.write(" & ".join(cells) + " \\\\\n")
        out.write("\\bottomrule\n\\end{tabular}\n")
        out.write(f"\\caption{{{latex_escape(table.title)}}}\n\\end{{table}}\n")
        for note in table.notes:
            out.write(f"% {' '.join(note.split())}\n")
        out.write("\n")
    for note in footer:
        out.write(f"% {' '.join(note.split())}\n")
    return out.getvalue()
