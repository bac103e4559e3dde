"""The leaderboard as Markdown tables."""

from __future__ import annotations

import io

from harness.report.leaderboard.cells import format_cell
from harness.report.leaderboard.table import Table


def _md_escape(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_markdown(tables: list[Table], footer: list[str]) -> str:
    out = io.StringIO()
    for table in tables:
        out.write(f"\n### {table.title}\n\n")
        out.write("| " + " | ".join(_md_escape(c.header) for c in table.columns) + " |\n")
        out.write("|" + "---|" * len(table.columns) + "\n")
        for row in table.rows:
            cells = [_md_escape(format_cell(row.get(c.key), c.kind)) for c in table.columns]
            out.write("| " + " | ".join(cells) + " |\n")
        if table.notes:
            out.write("\n" + "\n".join(f"- {_md_escape(n)}" for n in table.notes) + "\n")
    if footer:
        out.write("\n" + "\n".join(f"- {_md_escape(n)}" for n in footer) + "\n")
    return out.getvalue()
