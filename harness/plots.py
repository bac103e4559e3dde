"""Figures for comparing runs, written as PNG and PDF.

Kinds:
- ``bars``: the primary metric of each benchmark (and the composite) per run, with 95% CIs;
- ``budget``: score against the test-time budget N (from the strategy settings,
  e.g. ``rehearsal-parallel:2``; the plain strategy is N = 0), one line per strategy family;
- ``passk``: pass^k against k for each run (needs at least two trials per task);
- ``cost``: score against tokens per episode (all roles: actor, user, judge, rehearsal);
- ``step``: score against training step for a series of checkpoints (the manifest's
  "step" or "checkpoint", or a number in the run name such as ``step_200``).

Figures are drawn on the Agg canvas directly (never through pyplot), so nothing
depends on a display or on global plotting state.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.headlines import benchmark_label, sort_benchmarks
from harness.leaderboard import RunResult
from harness.stats import Interval, by_benchmark, pass_hat_k_curve

KINDS = ("bars", "budget", "passk", "cost", "step")
FORMATS = ("png", "pdf")
_BUDGET_KEYS = ("n", "N", "budget", "rehearsals", "num_rehearsals", "n_rehearsals")


@dataclass
class Plot:
    name: str  # file stem
    title: str
    figure: Any


@dataclass(frozen=True)
class Point:
    value: float
    interval: Interval | None


def rehearsal_budget(settings: dict[str, Any]) -> tuple[str, int] | None:
    """(strategy family, N) of a run, or None when the strategy has no budget."""
    name = str(settings.get("name") or "")
    family, _, arg = name.partition(":")
    mode = settings.get("mode")
    if isinstance(mode, str) and mode and mode not in family:
        family = f"{family}-{mode}"
    for key in _BUDGET_KEYS:
        value = settings.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return family, value
    if arg.isdigit():
        return family, int(arg)
    if family in ("plain", ""):
        return "plain", 0
    return None


def _points(result: RunResult) -> dict[str, Point]:
    """Primary metric per benchmark, plus the composite under "overall"."""
    points = {
        bench: Point(float(entry.primary_value), entry.interval)
        for bench, entry in result.benchmarks.items()
        if entry.primary_value is not None
    }
    if result.composite.value is not None:
        points["overall"] = Point(result.composite.value, result.composite.interval)
    return points


def _label(key: str) -> str:
    return "Overall" if key == "overall" else benchmark_label(key)


def _series_keys(results: list[RunResult]) -> list[str]:
    keys = sort_benchmarks({b for r in results for b in _points(r) if b != "overall"})
    if any("overall" in _points(r) for r in results):
        keys.append("overall")
    return keys


def _yerr(points: list[Point | None]) -> list[list[float]]:
    low, high = [], []
    for point in points:
        if point is None or point.interval is None:
            low.append(0.0)
            high.append(0.0)
        else:
            low.append(max(0.0, 100 * (point.value - point.interval.low)))
            high.append(max(0.0, 100 * (point.interval.high - point.value)))
    return [low, high]


def _new_figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _integer_ticks(ax: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _axes_grid(figure: Any, count: int) -> list[Any]:
    columns = min(count, 3)
    rows = (count + columns - 1) // columns
    axes = figure.subplots(rows, columns, squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[count:]:
        ax.set_visible(False)
    return flat[:count]


def bars_plot(results: list[RunResult]) -> Plot | None:
    keys = _series_keys(results)
    if not keys or not results:
        return None
    figure = _new_figure(max(6.0, 1.2 * len(keys) * max(1, len(results)) ** 0.5 + 3), 4.2)
    ax = figure.add_subplot()
    width = 0.8 / len(results)
    for i, result in enumerate(results):
        points = _points(result)
        series = [points.get(k) for k in keys]
        xs = [j + (i - (len(results) - 1) / 2) * width for j in range(len(keys))]
        heights = [100 * p.value if p is not None else 0.0 for p in series]
        ax.bar(xs, heights, width, yerr=_yerr(series), capsize=3, label=result.name)
    ax.set_xticks(range(len(keys)), [_label(k) for k in keys])
    ax.set_ylabel("score (%), 95% CI")
    ax.set_title("Primary metric per benchmark")
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return Plot("bars", "Primary metric per benchmark and run", figure)


def budget_plot(results: list[RunResult]) -> Plot | None:
    budgets = {id(r): rehearsal_budget(r.strategy_settings) for r in results}
    with_budget = [r for r in results if budgets[id(r)] is not None]
    if not any(budgets[id(r)][1] > 0 for r in with_budget):
        return None
    keys = _series_keys(with_budget)
    families = sorted({budgets[id(r)][0] for r in with_budget if budgets[id(r)][1] > 0})
    figure = _new_figure(4.5 * min(len(keys), 3), 3.6 * ((len(keys) + 2) // 3))
    for ax, key in zip(_axes_grid(figure, len(keys)), keys, strict=True):
        for family in families:
            # The plain strategy (N = 0) is the starting point of every family's line.
            members = [
                r
                for r in with_budget
                if budgets[id(r)][0] in (family, "plain") and key in _points(r)
            ]
            members.sort(key=lambda r: budgets[id(r)][1])
            if not members:
                continue
            series = [_points(r)[key] for r in members]
            ax.errorbar(
                [budgets[id(r)][1] for r in members],
                [100 * p.value for p in series],
                yerr=_yerr(series),
                marker="o",
                capsize=3,
                label=family,
            )
        ax.set_title(_label(key))
        _integer_ticks(ax)
        ax.set_xlabel("test-time budget N (rehearsals; K samples for self-consistency)")
        ax.set_ylabel("score (%)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    return Plot("budget", "Score against rehearsal budget", figure)


def passk_plot(results: list[RunResult]) -> Plot | None:
    curves: dict[str, dict[str, dict[int, float]]] = {}
    for result in results:
        for bench, tasks in by_benchmark(result.tasks.values()).items():
            curve = pass_hat_k_curve(tasks)
            if len(curve) >= 2:  # one trial per task gives a single point: nothing to show
                curves.setdefault(bench, {})[result.name] = curve
    if not curves:
        return None
    benches = sort_benchmarks(set(curves))
    figure = _new_figure(4.5 * min(len(benches), 3), 3.6 * ((len(benches) + 2) // 3))
    for ax, bench in zip(_axes_grid(figure, len(benches)), benches, strict=True):
        for name, curve in curves[bench].items():
            ks = sorted(curve)
            ax.plot(ks, [100 * curve[k] for k in ks], marker="o", label=name)
        ax.set_title(benchmark_label(bench))
        _integer_ticks(ax)
        ax.set_xlabel("k")
        ax.set_ylabel("pass^k (%)")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    return Plot("passk", "pass^k against k", figure)


def tokens_per_episode(run_dir: Path) -> dict[str, float]:
    """Mean prompt + completion tokens per record (all roles), per benchmark."""
    from harness.store import RunStore

    totals: dict[str, list[int]] = {}
    for record in RunStore(run_dir).records().values():
        usage = (record.get("trajectory") or {}).get("usage") or {}
        tokens = sum(
            int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0))
            for u in usage.values()
        )
        totals.setdefault(record["benchmark"], []).append(tokens)
    return {bench: sum(values) / len(values) for bench, values in totals.items() if values}


def cost_plot(results: list[RunResult]) -> Plot | None:
    costs = {r.name: tokens_per_episode(r.run_dir) for r in results if r.run_dir is not None}
    keys = [k for k in _series_keys(results) if k != "overall"]
    keys = [k for k in keys if any(costs.get(r.name, {}).get(k) for r in results)]
    if not keys:
        return None
    figure = _new_figure(4.5 * min(len(keys), 3), 3.6 * ((len(keys) + 2) // 3))
    for ax, key in zip(_axes_grid(figure, len(keys)), keys, strict=True):
        for result in results:
            tokens = costs.get(result.name, {}).get(key)
            point = _points(result).get(key)
            if not tokens or point is None:
                continue
            ax.errorbar(
                [tokens],
                [100 * point.value],
                yerr=_yerr([point]),
                marker="o",
                capsize=3,
                label=result.name,
            )
        ax.set_title(_label(key))
        ax.set_xlabel("tokens per episode (all roles)")
        ax.set_ylabel("score (%)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    return Plot("cost", "Score against cost", figure)


def step_plot(results: list[RunResult]) -> Plot | None:
    stepped = sorted((r for r in results if r.step is not None), key=lambda r: r.step)
    if len(stepped) < 2:
        return None
    strategies = sorted({r.strategy for r in stepped})
    figure = _new_figure(7.0, 4.2)
    ax = figure.add_subplot()
    for key in _series_keys(stepped):
        for strategy in strategies:
            members = [r for r in stepped if r.strategy == strategy and key in _points(r)]
            if not members:
                continue
            series = [_points(r)[key] for r in members]
            steps = [r.step for r in members]
            label = _label(key) if len(strategies) == 1 else f"{_label(key)} ({strategy})"
            line = ax.plot(steps, [100 * p.value for p in series], marker="o", label=label)[0]
            if all(p.interval is not None for p in series):
                ax.fill_between(
                    steps,
                    [100 * p.interval.low for p in series],
                    [100 * p.interval.high for p in series],
                    color=line.get_color(),
                    alpha=0.15,
                    linewidth=0,
                )
    ax.set_xlabel("training step")
    ax.set_ylabel("score (%), 95% CI band")
    ax.set_title("Score across checkpoints")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return Plot("step", "Score against training step", figure)


BUILDERS = {
    "bars": bars_plot,
    "budget": budget_plot,
    "passk": passk_plot,
    "cost": cost_plot,
    "step": step_plot,
}


def build_plots(results: list[RunResult], kinds: list[str] | None = None) -> list[Plot]:
    """The figures of the given kinds (default: every kind the runs have data for)."""
    plots = []
    for kind in kinds or list(KINDS):
        plot = BUILDERS[kind](results)
        if plot is not None:
            plots.append(plot)
    return plots


def save_plots(plots: list[Plot], out_dir: Path, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for plot in plots:
        for fmt in formats:
            path = out_dir / f"{plot.name}.{fmt}"
            plot.figure.savefig(path, format=fmt, dpi=150)
            written.append(path)
    return written


def png_bytes(plot: Plot, dpi: int = 110) -> bytes:
    buffer = io.BytesIO()
    plot.figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()
