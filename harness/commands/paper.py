"""``harness paper RUN... --baseline RUN --labels labels.yaml --out DIR``: a paper pack.

Writes into DIR:
- ``figures/<kind>.{pdf,svg,png}``: every figure the runs have data for (PDF with
  TrueType fonts), labels and colours from the labels file, the same in every figure;
- ``table.tex`` / ``table.md``: the results table (chosen ``--columns``, mean ± CI,
  the best in bold, significance against the baseline after Holm's correction);
- ``appendix.md`` / ``appendix.tex``: the reproducibility appendix from the manifests.
"""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "a paper pack: figures (PDF/SVG/PNG), a LaTeX results table and a reproducibility appendix"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dirs", type=Path, nargs="+", help="run folders")
    parser.add_argument(
        "--baseline",
        type=Path,
        required=True,
        help="the run the others are tested against (one of the runs listed)",
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for the pack")
    parser.add_argument(
        "--labels", type=Path, help="YAML: run folder -> label and colour (default: run names)"
    )
    parser.add_argument(
        "--columns",
        help="table columns, comma-separated: BENCH (its primary metric), BENCH:METRIC or "
        "overall (default: every benchmark's primary metric, then overall)",
    )
    parser.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="TABLE[:MODEL]",
        help="published rows to draw as dashed baselines and list in the table, e.g. "
        "envace:Qwen3-8B (repeatable; TABLE alone: all its rows)",
    )
    parser.add_argument("--format", default="pdf,svg,png", help="figure formats: pdf, svg, png")
    parser.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples for CIs")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")


def _references(specs: list[str]) -> list:
    """Published rows named by ``TABLE[:MODEL]``."""
    from harness.errors import ConfigError
    from harness.report.leaderboard import reference_rows
    from harness.results.reference import load_reference

    rows = []
    for spec in specs:
        name, _, model = spec.partition(":")
        table_rows = reference_rows(load_reference(name.strip()))
        chosen = [r for r in table_rows if not model or r.model == model.strip()]
        if not chosen:
            models = ", ".join(r.model for r in table_rows)
            raise ConfigError(f"--reference {spec}: no row '{model}' (rows: {models})")
        rows += chosen
    return rows


def _same_folder(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def run(args: argparse.Namespace) -> int:
    from harness.config.validate import n_boot, writable_folder
    from harness.errors import ConfigError
    from harness.report.appendix import build_appendix
    from harness.report.appendix import render_latex as appendix_latex
    from harness.report.appendix import render_markdown as appendix_markdown
    from harness.report.labels import load_labels
    from harness.report.leaderboard import load_run, mark_drift
    from harness.report.paper_table import build_table, parse_columns
    from harness.report.paper_table import render_latex as table_latex
    from harness.report.paper_table import render_markdown as table_markdown
    from harness.report.plots import FORMATS, build_plots, figure_context, save_plots
    from harness.results.selection import runs_or_error

    n_boot(args.n_boot)
    writable_folder(args.out, "--out")
    formats = tuple(f.strip() for f in args.format.split(",") if f.strip())
    if not formats or any(f not in FORMATS for f in formats):
        raise ConfigError(f"--format takes {', '.join(FORMATS)}")
    specs = load_labels(args.labels)
    run_dirs = runs_or_error(args.run_dirs)
    if not any(_same_folder(d, args.baseline) for d in run_dirs):
        # As report's --baseline: a name that is none of the runs is a typo, not a run to add.
        listed = ", ".join(str(d) for d in run_dirs)
        raise ConfigError(f"--baseline {args.baseline} is none of the runs listed ({listed})")
    runs = [load_run(d, n_boot=args.n_boot, seed=args.seed) for d in run_dirs]
    baseline = next(
        r for r, d in zip(runs, run_dirs, strict=True) if _same_folder(d, args.baseline)
    )
    references = _references(args.reference)
    mark_drift(runs + references)  # the cells made under other conditions than their column's
    columns = parse_columns(args.columns, runs)

    context = figure_context(runs + references, specs)
    labels = {name: style.label for name, style in context.styles.items()}
    written = save_plots(
        build_plots(runs + references, None, context), args.out / "figures", formats
    )
    table = build_table(runs, baseline, columns, labels, references, args.n_boot, args.seed)
    appendix = build_appendix(runs, labels)
    outputs = {
        "table.tex": table_latex(table),
        "table.md": table_markdown(table),
        "appendix.md": appendix_markdown(appendix),
        "appendix.tex": appendix_latex(appendix),
    }
    from harness.boundary.atomic import write_atomic

    for name, text in outputs.items():
        path = args.out / name
        write_atomic(path, text)
        written.append(path)
    for path in written:
        print(path)
    return 0
