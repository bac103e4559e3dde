"""``harness plot RUN_DIR... --out DIR``: figures comparing runs, as PNG, PDF and SVG."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "figures over runs (bars with CIs, rehearsal budget, pass^k, cost, training step)"

KINDS = ("bars", "budget", "passk", "cost", "step")
# --x picks the line plot by its x axis.
X_AXES = {"step": "step", "budget": "budget", "cost": "cost", "k": "passk"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dirs", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, required=True, help="folder for the figures")
    parser.add_argument(
        "--kind",
        default="auto",
        help=f"comma-separated kinds among {', '.join(KINDS)}; auto: every kind with data",
    )
    parser.add_argument(
        "--x",
        choices=sorted(X_AXES),
        help="shorthand for the line plot with this x axis (step: training step of checkpoints)",
    )
    parser.add_argument(
        "--metric",
        help="the step plot's metric: any headline metric (overall_run, pass^1/airline) or "
        "BENCH:METRIC (default: each benchmark's headline over the subsets run)",
    )
    parser.add_argument(
        "--subsets",
        action="store_true",
        help="the step plot as small multiples, one panel per benchmark subset",
    )
    parser.add_argument(
        "--format", default="png,pdf,svg", help="comma-separated: png, pdf (TrueType fonts), svg"
    )
    parser.add_argument(
        "--labels", type=Path, help="YAML: run folder -> label and colour (see harness paper)"
    )
    parser.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples for CIs")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")


def _kinds(args: argparse.Namespace) -> list[str] | None:
    from harness.errors import ConfigError

    if args.x:
        return [X_AXES[args.x]]
    if args.kind == "auto":
        # --metric and --subsets are the step plot's: they ask for it.
        return ["step"] if args.metric or args.subsets else None
    kinds = [k.strip() for k in args.kind.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ConfigError(f"unknown plot kind(s) {', '.join(unknown)} (known: {', '.join(KINDS)})")
    return kinds


def _check_steps(results: list) -> None:
    """One line when the step plot cannot be drawn: no run, or one run, has a step."""
    from harness.errors import ConfigError
    from harness.report.plots import stepped_runs

    stepped = stepped_runs(results)  # ConfigError when none has a step
    if len(stepped) < 2:
        raise ConfigError(
            f"the step plot needs two runs with a training step; only {stepped[0].name} "
            f"has one (step {stepped[0].step})"
        )


def run(args: argparse.Namespace) -> int:
    from harness.config.validate import n_boot, writable_folder
    from harness.errors import ConfigError
    from harness.report.labels import load_labels
    from harness.report.leaderboard import load_run
    from harness.report.plots import FORMATS, build_plots, figure_context, save_plots, step_figure
    from harness.results.selection import runs_or_error

    n_boot(args.n_boot)
    writable_folder(args.out, "--out")
    kinds = _kinds(args)
    formats = tuple(f.strip() for f in args.format.split(",") if f.strip())
    if not formats or any(f not in FORMATS for f in formats):
        raise ConfigError(f"--format takes {', '.join(FORMATS)}")
    if (args.metric or args.subsets) and "step" not in (kinds or []):
        raise ConfigError("--metric and --subsets are for the step plot (--x step)")
    run_dirs = runs_or_error(args.run_dirs)
    results = [load_run(d, n_boot=args.n_boot, seed=args.seed) for d in run_dirs]
    context = figure_context(results, load_labels(args.labels))
    if kinds is not None and "step" in kinds:
        _check_steps(results)
        others = [k for k in kinds if k != "step"]
        plots = build_plots(results, others, context) if others else []
        figure = step_figure(
            results, context, args.metric, args.subsets, n_boot=args.n_boot, seed=args.seed
        )
        plots += [figure] if figure is not None else []
    else:
        plots = build_plots(results, kinds, context)
    if not plots:
        wanted = ", ".join(kinds or KINDS)
        raise ConfigError(f"no data for the requested plot(s) ({wanted}) in these runs")
    if kinds:
        missing = sorted(set(kinds) - {p.name.partition("_")[0] for p in plots})
        for kind in missing:
            print(f"no data for the '{kind}' plot in these runs", file=sys.stderr)
    for path in save_plots(plots, args.out, formats):
        print(path)
    return 0
