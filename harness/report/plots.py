"""Figures for comparing runs, written as PDF (TrueType fonts), SVG and PNG.

Kinds:
- ``bars``: the primary metric of each benchmark (and the composite) per run, with 95% CIs;
- ``budget``: score against the test-time budget N (from the strategy settings,
  e.g. ``rehearsal-parallel:2``; the plain strategy is N = 0), one line per model,
  strategy family and rehearser (runs of different models are never joined);
- ``passk``: pass^k against k for each run, with 95% bootstrap bands (needs at least
  two trials per task);
- ``cost``: score against tokens per episode (all roles: actor, user, judge, rehearsal);
- ``step``: score against training step for a series of checkpoints, any headline
  metric (default: the one covering what was run), or one panel per subset, the y axis
  scaled to the data. A run's step: ``harness.results.frames.training_step`` (the
  manifest's step or checkpoint, its ``--model-revision``, or its name).

Every figure follows the same rules: a run has one label and one colour in every
figure (``FigureContext``, from a labels file, see ``harness.report.labels``); one axis
shows one kind of number (a pass rate and an F1 are never on one axis: one panel
per kind, the adapters' ``primary_quantity``); a number over less than its full
set is hatched and its run's legend entry says "partial"; published rows are
dashed lines; the legend sits outside the axes, below them.

Figures are drawn on the Agg canvas directly (never through pyplot), so nothing
depends on a display or on global plotting state.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.boundary.atomic import write_atomic
from harness.errors import ConfigError
from harness.report.labels import LabelSpec, RunStyle, assign_styles
from harness.report.leaderboard import RunResult
from harness.report.leaderboard.cells import zero_width_text
from harness.report.leaderboard.columns import ColumnSpec, column_cell
from harness.results import stats
from harness.results.headlines import (
    benchmark_info,
    benchmark_label,
    is_count_metric,
    primary_quantity,
    sort_benchmarks,
)
from harness.results.nonstandard import NONSTANDARD_MARK
from harness.results.stats import Estimate, Interval

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

KINDS = ("bars", "budget", "passk", "cost", "step")
FORMATS = ("png", "pdf", "svg")
DEFAULT_FORMATS = ("png", "pdf")
_BUDGET_KEYS = ("n", "N", "budget", "rehearsals", "num_rehearsals", "n_rehearsals")
PARTIAL_HATCH = "///"
PARTIAL_NOTE = "hatched: partial (less than the full set)"
NONSTANDARD_NOTE = f"{NONSTANDARD_MARK} on a value: not the benchmark's standard configuration"
OPEN_NOTE = "open marker: partial (less than the full set)"
OVERALL = "overall"
# Text sizes (points) of small-multiple panels (pass^k, step per subset).
PANEL_TITLE_SIZE = 13
PANEL_LABEL_SIZE = 12
PANEL_TICK_SIZE = 11
# Value labels sit on a light box, so a dashed baseline through them leaves them legible.
LABEL_BOX = {"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8}


@dataclass
class Plot:
    name: str  # file stem
    title: str
    figure: Figure


@dataclass(frozen=True)
class Point:
    value: float
    interval: Interval | None


@dataclass
class FigureContext:
    """What every figure of one set shares: styles, published baselines, partial marks."""

    styles: dict[str, RunStyle]  # by RunResult.name
    references: list[RunResult] = field(default_factory=list)
    # run name -> benchmark (or "overall") -> why the number covers less than its set
    partial: dict[str, dict[str, str]] = field(default_factory=dict)
    # run name -> benchmarks whose numbers are not the benchmark's standard configuration
    nonstandard: dict[str, set[str]] = field(default_factory=dict)

    def style(self, result: RunResult) -> RunStyle:
        return self.styles.get(result.name) or RunStyle(result.name, "#333333")

    def label(self, result: RunResult) -> str:
        return self.style(result).label

    def is_partial(self, result: RunResult, key: str) -> bool:
        return bool(self.partial.get(result.name, {}).get(key))

    def is_nonstandard(self, result: RunResult, key: str) -> bool:
        return key in self.nonstandard.get(result.name, set())


# --- what is partial ----------------------------------------------------------------


def partial_reasons(result: RunResult) -> dict[str, str]:
    """benchmark (or "overall") -> why its number is over less than the benchmark's
    official set (``harness.results.coverage``), for the numbers that are."""
    if result.is_reference:
        return {}
    reasons = {}
    for bench, entry in result.benchmarks.items():
        if entry.partial and entry.coverage is not None:
            reasons[bench] = "; ".join(entry.coverage.reasons()) or "partial"
    if result.composite.value is not None and result.composite.caveats:
        reasons[OVERALL] = "; ".join(result.composite.caveats)
    return reasons


def figure_context(
    results: list[RunResult], labels: dict[str, LabelSpec] | None = None
) -> FigureContext:
    """Labels and colours from a labels file's entries (``harness.report.labels``; default: run
    names and palette colours by sorted run order), published rows of ``results`` as
    baselines, and what each run covers less of than its full set."""
    runs = [r for r in results if not r.is_reference]
    references = [r for r in results if r.is_reference]
    names = {r.name: _names(r) for r in runs}
    ref_keys = [reference_key(r) for r in references]
    styles = assign_styles(names, labels or {}, ref_keys)
    for ref, key in zip(references, ref_keys, strict=True):
        if styles[key].label == key:  # not named by the labels file
            styles[key] = RunStyle(reference_label(ref), styles[key].colour)
    return FigureContext(
        styles=styles,
        references=references,
        partial={r.name: partial_reasons(r) for r in runs},
        nonstandard={
            r.name: {bench for bench, entry in r.benchmarks.items() if entry.nonstandard}
            for r in runs
        },
    )


def _names(result: RunResult) -> list[str]:
    """What a labels file may call a run: its folder as given, the folder's name."""
    if result.run_dir is None:
        return []
    return [str(result.run_dir), Path(result.run_dir).name]


def default_context(results: list[RunResult]) -> FigureContext:
    return figure_context(results, None)


def reference_key(result: RunResult) -> str:
    """How a labels file names a published row: ``ref:<table>/<model>``."""
    return f"ref:{result.reference}/{result.model}"


def _reference_style(context: FigureContext, ref: RunResult) -> RunStyle:
    return context.styles.get(reference_key(ref)) or RunStyle(reference_label(ref), "#555555")


def reference_label(ref: RunResult) -> str:
    return f"{ref.model} (published, {ref.reference})"


# Published rows are told apart by their dash pattern (all dashed), not only by colour.
DASHES = ("--", (0, (6, 2, 1, 2)), (0, (2, 1.5)), (0, (9, 3)), (0, (4, 2, 1, 2, 1, 2)))


# --- values ------------------------------------------------------------------------


def rehearsal_budget(settings: Mapping[str, object]) -> tuple[str, int] | None:
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


def rehearser_of(result: RunResult) -> str:
    """The model that answered the rehearsals' tool calls ("self": the model under test)."""
    settings = result.strategy_settings.get("settings") or {}
    name = settings.get("rehearser_model") if isinstance(settings, dict) else None
    if not name or str(name).lower() in ("self", "none", "default"):
        return "self"
    return str(name)


def _points(result: RunResult) -> dict[str, Point]:
    """Primary metric per benchmark, plus the composite under "overall"."""
    points = {
        bench: Point(float(entry.primary_value), entry.interval)
        for bench, entry in result.benchmarks.items()
        if entry.primary_value is not None
    }
    if result.composite.value is not None:
        points[OVERALL] = Point(result.composite.value, result.composite.interval)
    return points


def _label(key: str) -> str:
    return "Overall" if key == OVERALL else benchmark_label(key)


def quantity_of(key: str) -> str:
    """The kind of number a series is; the composite (a mean of the benchmarks it
    names) is of their kind when they share one."""
    if key != OVERALL:
        return primary_quantity(key)
    from harness.results.composite import default_composite

    definition = default_composite()
    kinds = {primary_quantity(b) for b in definition.benchmarks} if definition else set()
    return kinds.pop() if len(kinds) == 1 else "score"


def _axis_label(quantity: str, suffix: str = "") -> str:
    return f"{quantity} (%){suffix}"


def _series_keys(results: list[RunResult]) -> list[str]:
    keys = sort_benchmarks({b for r in results for b in _points(r) if b != OVERALL})
    if any(OVERALL in _points(r) for r in results):
        keys.append(OVERALL)
    return keys


def _by_quantity(keys: list[str]) -> dict[str, list[str]]:
    """Keys grouped by their kind of number, in first-seen order: one panel each."""
    groups: dict[str, list[str]] = {}
    for key in keys:
        groups.setdefault(quantity_of(key), []).append(key)
    return groups


def _yerr(points: Sequence[Point | None]) -> list[list[float]]:
    low, high = [], []
    for point in points:
        if point is None or point.interval is None:
            low.append(0.0)
            high.append(0.0)
        else:
            low.append(max(0.0, 100 * (point.value - point.interval.low)))
            high.append(max(0.0, 100 * (point.interval.high - point.value)))
    return [low, high]


def _fmt(value: float) -> str:
    """A value label: one decimal below 10, none above (percent)."""
    return f"{value:.1f}" if abs(value) < 10 else f"{value:.0f}"


# --- figure scaffolding -----------------------------------------------------------------


def _new_figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _integer_ticks(ax: Axes) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _panels(figure: Figure, count: int, width_ratios: list[float] | None = None) -> list[Axes]:
    columns = min(count, 3)
    rows = (count + columns - 1) // columns
    axes = figure.subplots(
        rows, columns, squeeze=False, width_ratios=width_ratios if rows == 1 else None
    )
    flat = [ax for row in axes for ax in row]
    for ax in flat[count:]:
        ax.set_visible(False)
    return flat[:count]


def _panel_grid(count: int) -> tuple[Figure, list[Axes]]:
    """A figure of ``count`` panels, three to a row, and its panels (the line plots')."""
    figure = _new_figure(4.2 * min(count, 3), 3.4 * ((count + 2) // 3) + 0.8)
    return figure, _panels(figure, count)


def _percent_axis(ax: Axes, top: float = 100.0) -> None:
    # Room above the highest bar or point for its value label.
    ax.set_ylim(0, max(100.0, top) * 1.12)
    ax.set_yticks([0, 20, 40, 60, 80, 100])
    ax.grid(axis="y", alpha=0.3)


def _legend_below(
    figure: Figure,
    axes: list[Axes],
    extra: Sequence[tuple[Artist, str]] = (),
    fontsize: str | float = "small",
) -> None:
    """One legend for the figure, outside and below the axes, so it covers no line."""
    handles: dict[str, Artist] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    for handle, label in extra:
        handles.setdefault(label, handle)
    if handles:
        figure.legend(
            list(handles.values()),
            list(handles),
            loc="outside lower center",
            ncols=min(len(handles), 3),
            fontsize=fontsize,
            frameon=False,
        )


def _partial_handle() -> tuple[Artist, str]:
    from matplotlib.patches import Patch

    return Patch(facecolor="white", edgecolor="#333333", hatch=PARTIAL_HATCH), PARTIAL_NOTE


def _nonstandard_handle() -> tuple[Artist, str]:
    from matplotlib.patches import Patch

    # A text-only entry: the mark is on the value labels.
    return Patch(facecolor="none", edgecolor="none"), NONSTANDARD_NOTE


def _open_marker_handle() -> tuple[Artist, str]:
    from matplotlib.lines import Line2D

    marker = Line2D([], [], marker="o", linestyle="", mfc="white", mec="#333333")
    return marker, OPEN_NOTE


def _reference_lines(
    ax: Axes, context: FigureContext, key: str, x_span: tuple[float, float] | None = None
) -> None:
    """Published values of ``key`` as dashed lines (across ``x_span``, or the whole axes)."""
    for i, ref in enumerate(context.references):
        point = _points(ref).get(key)
        if point is None:
            continue
        style = _reference_style(context, ref)
        value = 100 * point.value
        dashes = DASHES[i % len(DASHES)]
        if x_span is None:
            ax.axhline(
                value, color=style.colour, linestyle=dashes, linewidth=1.2, label=style.label
            )
        else:
            ax.hlines(
                value,
                *x_span,
                color=style.colour,
                linestyle=dashes,
                linewidth=1.2,
                label=style.label,
            )


# --- the figures ------------------------------------------------------------------------


def bars_plot(results: list[RunResult], context: FigureContext | None = None) -> Plot | None:
    context = context or default_context(results)
    runs = [r for r in results if not r.is_reference]
    keys = _series_keys(runs)
    if not keys or not runs:
        return None
    groups = _by_quantity(keys)
    most = max(len([r for r in runs if key in _points(r)]) for key in keys)
    per_key = 0.9 + 0.45 * most
    width_total = sum(len(g) for g in groups.values()) * per_key + 1.2 * len(groups)
    figure = _new_figure(max(5.0, min(width_total, 14.0)), 4.4)
    ratios = [len(g) + 0.6 for g in groups.values()]
    axes = _panels(figure, len(groups), ratios)
    width = 0.8 / most
    crowded = most >= 5  # value labels turn upright to fit narrow bars
    any_partial = any_nonstandard = False
    for ax, (quantity, group) in zip(axes, groups.items(), strict=True):
        top = 100.0
        for j, key in enumerate(group):
            # Only the runs with a value here share the group's width, in run order.
            present = [r for r in runs if key in _points(r)]
            for i, result in enumerate(present):
                style = context.style(result)
                point = _points(result)[key]
                partial = context.is_partial(result, key)
                any_partial = any_partial or partial
                x = j + (i - (len(present) - 1) / 2) * width
                bars = ax.bar(
                    [x],
                    [100 * point.value],
                    width,
                    yerr=_yerr([point]),
                    capsize=3,
                    color=style.colour,
                    edgecolor="#333333" if partial else style.colour,
                    hatch=PARTIAL_HATCH if partial else None,
                    linewidth=0.6,
                    error_kw={"elinewidth": 0.8, "ecolor": "#333333"},
                    label=context.label(result),
                )
                high = 100 * (point.interval.high if point.interval else point.value)
                top = max(top, high)
                nonstandard = context.is_nonstandard(result, key.partition("/")[0])
                any_nonstandard = any_nonstandard or nonstandard
                ax.annotate(
                    _fmt(100 * point.value) + (NONSTANDARD_MARK if nonstandard else ""),
                    (bars[0].get_x() + width / 2, high),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=6 if crowded else 7,
                    rotation=90 if crowded else 0,
                    bbox=LABEL_BOX,
                )
        for j, key in enumerate(group):
            _reference_lines(ax, context, key, (j - 0.45, j + 0.45))
        ax.set_xticks(range(len(group)), [_label(k) for k in group])
        ax.set_xlim(-0.6, len(group) - 0.4)
        ax.set_ylabel(_axis_label(quantity, ", 95% CI"))
        _percent_axis(ax, top)
    extra = [_partial_handle()] if any_partial else []
    if any_nonstandard:
        extra.append(_nonstandard_handle())
    _legend_below(figure, axes, extra)
    return Plot("bars", "Primary metric per benchmark and run", figure)


@dataclass(frozen=True)
class BudgetLine:
    """Runs of one model with one strategy family and one rehearser, by budget N."""

    model: str
    family: str
    rehearser: str
    runs: tuple[RunResult, ...]  # sorted by N; the model's plain run (N = 0) first


def budget_of(result: RunResult) -> int:
    """The run's test-time budget N (0 for a strategy without one, e.g. plain)."""
    found = rehearsal_budget(result.strategy_settings)
    return 0 if found is None else found[1]


def budget_lines(results: list[RunResult]) -> list[BudgetLine]:
    """One line per (model, family, rehearser) with a budget N > 0; the same model's
    plain runs (N = 0) start each of its lines. Runs of different models, or with
    different rehearsers, are never joined."""
    plain: dict[str, RunResult] = {}
    grouped: dict[tuple[str, str, str], list[RunResult]] = {}
    for result in results:
        found = None if result.is_reference else rehearsal_budget(result.strategy_settings)
        if found is None:
            continue
        family, n = found
        if n == 0:
            plain.setdefault(result.model, result)
        else:
            grouped.setdefault((result.model, family, rehearser_of(result)), []).append(result)
    lines = []
    for (model, family, rehearser), members in sorted(grouped.items()):
        members.sort(key=budget_of)
        start = [plain[model]] if model in plain else []
        lines.append(BudgetLine(model, family, rehearser, tuple(start + members)))
    return lines


def _budget_label(line: BudgetLine, context: FigureContext) -> str:
    """'<model>, <family>[, rehearser R]'; the model as the labels file names its plain
    run when the line starts at one."""
    model = line.model
    start = line.runs[0]
    if budget_of(start) == 0 and context.style(start).label != start.name:
        model = context.style(start).label
    rehearser = "" if line.rehearser == "self" else f", rehearser {line.rehearser}"
    return f"{model}, {line.family}{rehearser}"


def budget_plot(results: list[RunResult], context: FigureContext | None = None) -> Plot | None:
    context = context or default_context(results)
    lines = budget_lines(results)
    if not lines:
        return None
    # A panel needs a point with a budget: plain runs alone draw no budget curve.
    budgeted = [r for line in lines for r in line.runs if budget_of(r)]
    keys = _series_keys(budgeted)
    if not keys:
        return None
    figure, axes = _panel_grid(len(keys))
    any_partial = False
    for ax, key in zip(axes, keys, strict=True):
        top = 100.0
        for line in lines:
            members = [r for r in line.runs if key in _points(r)]
            if not members:
                continue
            # A line takes the colour of its first run with a budget (stable across figures).
            first = next((r for r in members if budget_of(r)), None)
            colour = context.style(first or members[0]).colour
            xs = [budget_of(r) for r in members]
            series = [_points(r)[key] for r in members]
            ys = [100 * p.value for p in series]
            ax.errorbar(
                xs, ys, yerr=_yerr(series), marker="", capsize=3, color=colour,
                label=_budget_label(line, context),
            )  # fmt: skip
            for x, y, result in zip(xs, ys, members, strict=True):
                partial = context.is_partial(result, key)
                any_partial = any_partial or partial
                # An open marker: this point covers less than its benchmark's full set.
                face = "white" if partial else colour
                ax.plot([x], [y], marker="o", linestyle="", mfc=face, mec=colour, mew=1.5)
                ax.annotate(
                    _fmt(y), (x, y), xytext=(4, 4), textcoords="offset points", fontsize=7,
                    bbox=LABEL_BOX,
                )  # fmt: skip
            top = max([top] + [100 * (p.interval.high if p.interval else p.value) for p in series])
        _reference_lines(ax, context, key)
        ax.set_title(_label(key))
        _integer_ticks(ax)
        budgets = [budget_of(r) for line in lines for r in line.runs]
        ax.set_xlim(min(budgets) - 0.3, max(budgets) + 0.5)  # room for the value labels
        ax.set_xlabel("test-time budget N")
        ax.set_ylabel(_axis_label(quantity_of(key)))
        _percent_axis(ax, top)
        ax.grid(axis="x", alpha=0.3)
    _legend_below(figure, axes, [_open_marker_handle()] if any_partial else [])
    return Plot("budget", "Score against test-time budget (rehearsals N)", figure)


def passk_plot(results: list[RunResult], context: FigureContext | None = None) -> Plot | None:
    """One panel per benchmark subset that reports pass^k (the adapters' own choice,
    e.g. each domain of a benchmark), the intervals from ``harness.results.stats.pass_hat_k_estimates``."""
    context = context or default_context(results)
    curves: dict[tuple[str, str], list[tuple[RunResult, dict[int, Estimate]]]] = {}
    for result in results:
        for bench, entry in result.benchmarks.items():
            for subset, curve in entry.pass_hat_k.items():
                if len(curve) >= 2:  # one trial per task gives one point: nothing to show
                    curves.setdefault((bench, subset), []).append((result, curve))
    if not curves:
        return None
    order = {b: i for i, b in enumerate(sort_benchmarks({b for b, _ in curves}))}
    panels = sorted(curves, key=lambda key: (order[key[0]], key[1]))
    figure, axes = _panel_grid(len(panels))
    any_partial = False
    for ax, (bench, subset) in zip(axes, panels, strict=True):
        for result, curve in curves[(bench, subset)]:
            style = context.style(result)
            ks = sorted(curve)
            coverage = result.benchmarks[bench].coverage
            partial = coverage is not None and coverage.restrict([subset]).partial
            any_partial = any_partial or partial
            ax.plot(
                ks,
                [100 * curve[k].value for k in ks],
                marker="o",
                color=style.colour,
                mfc="white" if partial else style.colour,
                label=context.label(result),
            )
            ax.fill_between(
                ks,
                [100 * curve[k].interval.low for k in ks],
                [100 * curve[k].interval.high for k in ks],
                color=style.colour,
                alpha=0.15,
                linewidth=0,
            )
        # Panels are small: text a size up from matplotlib's defaults, to read in a report.
        ax.set_title(f"{benchmark_label(bench)} {subset}", fontsize=PANEL_TITLE_SIZE)
        _integer_ticks(ax)
        ax.set_xlabel("k (trials that must all pass)", fontsize=PANEL_LABEL_SIZE)
        ax.set_ylabel("pass^k (%), 95% CI band", fontsize=PANEL_LABEL_SIZE)
        ax.tick_params(labelsize=PANEL_TICK_SIZE)
        _percent_axis(ax)
        ax.set_ylim(-3, 105)
    _legend_below(
        figure, axes, [_open_marker_handle()] if any_partial else [], fontsize=PANEL_LABEL_SIZE
    )
    return Plot("passk", "pass^k against k", figure)


def tokens_per_episode(records: pd.DataFrame) -> dict[str, float]:
    """Mean prompt + completion tokens per record (all roles), per benchmark, of a
    run's record table (``harness.results.frames.records``)."""
    means = records.groupby("benchmark", sort=False)["all_roles_tokens"].mean()
    return {str(bench): float(value) for bench, value in means.items()}


def cost_plot(results: list[RunResult], context: FigureContext | None = None) -> Plot | None:
    context = context or default_context(results)
    runs = [r for r in results if not r.is_reference and r.run_dir is not None]
    costs = {r.name: tokens_per_episode(r.records) for r in runs if r.records is not None}
    keys = [k for k in _series_keys(runs) if k != OVERALL]
    keys = [k for k in keys if any(costs.get(r.name, {}).get(k) for r in runs)]
    if not keys:
        return None
    figure, axes = _panel_grid(len(keys))
    any_partial = False
    for ax, key in zip(axes, keys, strict=True):
        for result in runs:
            tokens = costs.get(result.name, {}).get(key)
            point = _points(result).get(key)
            if not tokens or point is None:
                continue
            style = context.style(result)
            partial = context.is_partial(result, key)
            any_partial = any_partial or partial
            ax.errorbar(
                [tokens], [100 * point.value], yerr=_yerr([point]), marker="o", capsize=3,
                color=style.colour, mfc="white" if partial else style.colour,
                label=context.label(result),
            )  # fmt: skip
            ax.annotate(
                _fmt(100 * point.value),
                (tokens, 100 * point.value),
                xytext=(4, 4),
                textcoords="offset points",
                fontsize=7,
            )
        _reference_lines(ax, context, key)
        ax.set_title(_label(key))
        ax.set_xlabel("tokens per episode (all roles)")
        ax.set_ylabel(_axis_label(quantity_of(key)))
        _percent_axis(ax)
        ax.margins(x=0.15)
    _legend_below(figure, axes, [_open_marker_handle()] if any_partial else [])
    return Plot("cost", "Score against cost", figure)


NO_STEP = (
    "no run has a training step: name the run folders step_N or checkpoint-N, or run with "
    "--model-revision step-N (where a step comes from: docs/results.md)"
)
# The least span of the y axis (percent points), so that noise is not blown up.
MIN_SPAN = 4.0


@dataclass(frozen=True)
class Series:
    """One line: a metric of a benchmark (or the composite) at each step."""

    key: str  # benchmark, or "overall" for the composite
    metric: str | None  # None: the benchmark's primary metric (or the composite)
    label: str
    quantity: str  # the kind of number: one panel per kind
    subset: str = ""  # a subset's own quantity (small multiples)


@dataclass(frozen=True)
class StepPoint:
    step: int
    point: Point
    partial: bool


def stepped_runs(results: list[RunResult]) -> list[RunResult]:
    """The runs (not published rows) that have a step, by step; ConfigError when none has."""
    runs = [r for r in results if r.step is not None and not r.is_reference]
    if not runs:
        raise ConfigError(NO_STEP)
    return sorted(runs, key=lambda r: r.step or 0)


def _metrics_of(runs: list[RunResult], bench: str) -> list[str]:
    found: dict[str, None] = {}
    for result in runs:
        entry = result.benchmarks.get(bench)
        for key in entry.headline if entry is not None else []:
            if not is_count_metric(key):
                found.setdefault(key)
    return list(found)


def default_metric(runs: list[RunResult], bench: str) -> str | None:
    """The benchmark's run metric (``Reporting.run_metric``) when some checkpoint left
    a subset out and the run metric is there to say how it did on the rest; None (its
    primary) otherwise."""
    run_metric = benchmark_info(bench).run_metric
    if not run_metric:
        return None
    for result in runs:
        entry = result.benchmarks.get(bench)
        if entry is None or entry.coverage is None or run_metric not in entry.headline:
            continue
        if entry.coverage.subsets_missing:
            return run_metric
    return None


def _series(bench: str, metric: str | None) -> Series:
    info = benchmark_info(bench)
    name = metric or info.primary or "primary"
    label = f"{info.label} {name}"
    if metric is not None and metric == info.run_metric and info.primary:
        label += f" (subsets run; official: {info.primary})"
    quantity = info.quantity if metric in (None, info.primary, info.run_metric) else name
    return Series(bench, metric, label, quantity)


def choose_series(runs: list[RunResult], metric: str | None) -> list[Series]:
    """The lines to draw: ``metric`` (``NAME`` in every benchmark that has it, or
    ``BENCH:NAME``), else each benchmark's default metric and the composite."""
    benches = sort_benchmarks({b for r in runs for b in r.benchmarks})
    if metric is None:
        chosen = [_series(b, default_metric(runs, b)) for b in benches]
        if any(r.composite.value is not None for r in runs):
            chosen.append(Series(OVERALL, None, "Overall", quantity_of(OVERALL)))
        return chosen
    bench, sep, name = metric.partition(":")
    wanted = [bench] if sep else benches
    name = name if sep else metric
    chosen = [_series(b, name) for b in wanted if name in _metrics_of(runs, b)]
    if not chosen:
        known = "; ".join(f"{b}: {', '.join(_metrics_of(runs, b))}" for b in benches)
        raise ConfigError(f"--metric {metric}: no run with a step has it (metrics: {known})")
    return chosen


def subset_series(runs: list[RunResult]) -> list[Series]:
    """One series per benchmark subset the checkpoints ran (small multiples)."""
    out = []
    for bench in sort_benchmarks({b for r in runs for b in r.benchmarks}):
        estimator = benchmark_info(bench).subset_estimator
        subsets = sorted({t.subset for r in runs for t in r.tasks.values() if t.benchmark == bench})
        for subset in subsets:
            label = f"{benchmark_label(bench)} {subset}"
            out.append(Series(bench, None, label, estimator.name, subset))
    return out


def _subset_point(result: RunResult, series: Series, n_boot: int, seed: int) -> StepPoint | None:
    tasks = [
        t for t in result.tasks.values() if t.benchmark == series.key and t.subset == series.subset
    ]
    if not tasks or result.step is None:
        return None
    estimator = benchmark_info(series.key).subset_estimator
    found = stats.estimate(
        {series.subset: tasks},
        estimator,
        n_boot,
        stats.derive_seed(seed, series.key, series.subset),
    )
    entry = result.benchmarks.get(series.key)
    coverage = entry.coverage if entry is not None else None
    partial = coverage is not None and coverage.restrict([series.subset]).partial
    return StepPoint(result.step, Point(found.value, found.interval), partial)


def series_point(
    result: RunResult, series: Series, context: FigureContext, n_boot: int, seed: int
) -> StepPoint | None:
    """The value of one series at one checkpoint, with its interval and partial mark."""
    if result.step is None:
        return None
    if series.subset:
        return _subset_point(result, series, n_boot, seed)
    if series.key == OVERALL:
        point = _points(result).get(OVERALL)
        if point is None:
            return None
        return StepPoint(result.step, point, context.is_partial(result, OVERALL))
    cell = column_cell(result, ColumnSpec(series.key, series.metric), n_boot, seed)
    if cell.value is None:
        return None
    return StepPoint(result.step, Point(cell.value, cell.interval), cell.partial)


def scaled_limits(values: list[float]) -> tuple[float, float]:
    """The y range (percent) for ``values`` (points and interval ends): the data with
    a margin, at least ``MIN_SPAN`` points, within 0-100."""
    low, high = min(values), max(values)
    span = max(high - low, MIN_SPAN)
    centre = (low + high) / 2
    bottom, top = centre - 0.6 * span, centre + 0.6 * span
    if bottom < 0:
        bottom, top = 0.0, top - bottom
    if top > 100:
        bottom, top = max(0.0, bottom - (top - 100)), 100.0
    return bottom, min(100.0, top + 0.04 * (top - bottom))  # room for a value label


def _draw_series(
    ax: Axes, points: list[StepPoint], colour: str, label: str
) -> tuple[list[float], bool]:
    """A line with error bars and value labels; the values the axis must show."""
    steps = [p.step for p in points]
    ys = [100 * p.point.value for p in points]
    low = [
        100 * (p.point.value - p.point.interval.low) if p.point.interval else 0.0 for p in points
    ]
    high = [
        100 * (p.point.interval.high - p.point.value) if p.point.interval else 0.0 for p in points
    ]
    ax.plot(steps, ys, color=colour, linewidth=1.6, label=label)
    ax.errorbar(
        steps, ys, yerr=[[max(0.0, v) for v in low], [max(0.0, v) for v in high]],
        fmt="none", ecolor=colour, capsize=4, elinewidth=1.0,
    )  # fmt: skip
    for p, y in zip(points, ys, strict=True):
        face = "white" if p.partial else colour
        ax.plot([p.step], [y], marker="o", markersize=6, linestyle="", mfc=face, mec=colour)
        text = _fmt(y)
        if p.point.interval is not None and p.point.interval.zero_width:
            # No bar to draw: the label says how few tasks the point rests on.
            text += f" ({zero_width_text(p.point.interval)})"
        ax.annotate(
            text, (p.step, y), xytext=(5, 5), textcoords="offset points", fontsize=9,
            bbox=LABEL_BOX,
        )  # fmt: skip
    shown = ys + [y - d for y, d in zip(ys, low, strict=True)]
    shown += [y + d for y, d in zip(ys, high, strict=True)]
    return shown, any(p.partial for p in points)


def step_figure(
    results: list[RunResult],
    context: FigureContext | None = None,
    metric: str | None = None,
    subsets: bool = False,
    n_boot: int = stats.N_BOOT,
    seed: int = stats.SEED,
) -> Plot | None:
    """Score against training step; None when fewer than two runs have a step.

    ``metric``: any headline metric of a benchmark (``NAME`` in every benchmark that has
    it, or ``BENCH:NAME``); by default the headline that covers what was run (a
    benchmark's run metric when its official number counts a subset not run as 0 and
    some checkpoint left one out, its label saying so). ``subsets``: small multiples,
    one panel per benchmark subset (the adapter's per-subset quantity). Each point has
    its 95% interval as an error bar where it can be recomputed to the official value,
    an open marker when partial; the y axis is scaled to the data and the intervals."""
    context = context or default_context(results)
    runs = [r for r in results if r.step is not None and not r.is_reference]
    if len(runs) < 2:
        return None
    runs.sort(key=lambda r: r.step or 0)
    chosen = subset_series(runs) if subsets else choose_series(runs, metric)
    from harness.report.labels import PALETTE

    # Lines are series, not runs: coloured by series, the same in every panel.
    colours = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(chosen)}
    panels: dict[str, list[Series]] = {}
    for series in chosen:
        panels.setdefault(series.label if subsets else series.quantity, []).append(series)
    figure = _new_figure(*_figure_size(len(panels), subsets))
    axes = _panels(figure, len(panels))
    any_partial = False
    for ax, (title, members) in zip(axes, panels.items(), strict=True):
        shown: list[float] = []
        for series in members:
            points = [series_point(r, series, context, n_boot, seed) for r in runs]
            present = [p for p in points if p is not None]
            if not present:
                continue
            values, partial = _draw_series(ax, present, colours[series], series.label)
            shown += values
            any_partial = any_partial or partial
            if not subsets and series.metric is None:
                _reference_lines(ax, context, series.key)
        if shown:
            ax.set_ylim(*scaled_limits(shown))
        if subsets:
            ax.set_title(title, fontsize=PANEL_TITLE_SIZE)
        ax.set_xlabel("training step", fontsize=PANEL_LABEL_SIZE)
        quantity = members[0].quantity
        ax.set_ylabel(f"{quantity} (%), 95% CI", fontsize=PANEL_LABEL_SIZE)
        ax.tick_params(labelsize=PANEL_TICK_SIZE)
        ax.grid(alpha=0.3)
        # Every panel spans all the steps, a panel with one point too.
        first, last = runs[0].step or 0, runs[-1].step or 0
        pad = 0.08 * (last - first) or 1.0
        ax.set_xlim(first - pad, last + pad)
    # Small multiples are titled by their series: the legend only explains the markers.
    extra = [_open_marker_handle()] if any_partial else []
    _legend_below(figure, [] if subsets else axes, extra)
    name = "step_subsets" if subsets else "step"
    return Plot(name, "Score against training step", figure)


def _figure_size(panels: int, subsets: bool) -> tuple[float, float]:
    if not subsets:
        return max(6.0, 4.8 * panels), 4.4
    columns = min(panels, 3)
    rows = (panels + columns - 1) // columns
    return 4.2 * columns, 3.2 * rows + 0.8


def step_plot(results: list[RunResult], context: FigureContext | None = None) -> Plot | None:
    """Score against training step with each benchmark's default metric (``step_figure``)."""
    return step_figure(results, context)


BUILDERS: dict[str, Callable[[list[RunResult], FigureContext | None], Plot | None]] = {
    "bars": bars_plot,
    "budget": budget_plot,
    "passk": passk_plot,
    "cost": cost_plot,
    "step": step_plot,
}


def build_plots(
    results: list[RunResult],
    kinds: list[str] | None = None,
    context: FigureContext | None = None,
) -> list[Plot]:
    """The figures of the given kinds (default: every kind the runs have data for).
    Published rows among ``results`` are drawn as baselines, not as runs."""
    context = context or default_context(results)
    plots = []
    for kind in kinds or list(KINDS):
        plot = BUILDERS[kind](results, context)
        if plot is not None:
            plots.append(plot)
    return plots


def save_figure(figure: Figure, path: Path, fmt: str, dpi: int = 200) -> None:
    """One figure in one format, with embeddable fonts and nothing clipped.

    Drawn in memory, then written by the atomic writer: matplotlib's own file
    writing, failing on a full disk, raised an error of its own while cleaning
    up (its PDF stream), which hid the disk's."""
    import matplotlib

    buffer = io.BytesIO()
    # TrueType (Type 42) fonts in PDF and PostScript: venues reject Type 3 fonts. SVG
    # keeps its text as text, so labels stay searchable and editable.
    with matplotlib.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none"}):
        figure.savefig(buffer, format=fmt, dpi=dpi, bbox_inches="tight", pad_inches=0.05)
    write_atomic(path, buffer.getvalue())


def save_plots(
    plots: list[Plot], out_dir: Path, formats: tuple[str, ...] = DEFAULT_FORMATS
) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for plot in plots:
        for fmt in formats:
            path = out_dir / f"{plot.name}.{fmt}"
            save_figure(plot.figure, path, fmt)
            written.append(path)
    return written


def png_bytes(plot: Plot, dpi: int = 110) -> bytes:
    buffer = io.BytesIO()
    plot.figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()
