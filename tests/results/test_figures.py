"""Figures a paper can print: three formats with TrueType fonts, labels and colours from
one labels file and the same in every figure, one kind of number per axis, published
rows as dashed lines, partial numbers marked, budget lines that join only runs of one
model and rehearser, pass^k with intervals and a legend off the lines."""

from __future__ import annotations

import json
import re

import pytest
from fake_runs import make_run, pass_fail_records, record

from harness.cli import main
from harness.report.labels import PALETTE, assign_styles, parse_labels
from harness.report.leaderboard import load_board, load_run
from harness.report.plots import PARTIAL_HATCH, budget_lines, build_plots, figure_context

MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-", "svg": b"<?xml"}


def tau2_run(root, name, outcomes, strategy="plain", model="m", manifest_extra=None, extra=()):
    records = pass_fail_records("tau2", "airline", outcomes) + list(extra)
    passes = sum(sum(t) / len(t) for t in outcomes) / len(outcomes)
    headlines = {"tau2": {"airline": passes, "tau2_mean": passes}}
    if extra:
        headlines["finmcp"] = {"micro_f1": 0.5}
    return make_run(
        root, name, records, headlines, model=model, strategy=strategy,
        manifest_extra=manifest_extra,
    )  # fmt: skip


TAU2_SIZES = {"airline": 50, "retail": 114, "telecom": 114}  # the official base task sets


def full_tau2_run(root, name):
    """Every official τ² task with two trials: a run that is not partial."""
    records, means = [], {}
    for subset, size in TAU2_SIZES.items():
        outcomes = [[i % 3 == 0, i % 2 == 0] for i in range(size)]
        records += pass_fail_records("tau2", subset, outcomes)
        means[subset] = sum(sum(t) / 2 for t in outcomes) / size
    headline = {f"pass^1/{s}": v for s, v in means.items()}
    headline["tau2_mean"] = sum(means.values()) / 3
    return make_run(root, name, records, {"tau2": headline}, model="m")


def finmcp_records():
    return [
        record("finmcp", "single_tool", f"f{i}", tool_counts=(1, 1, 0), passed=i % 2 == 0)
        for i in range(4)
    ]


@pytest.fixture
def two_runs(tmp_path):
    base = full_tau2_run(tmp_path, "base")
    better = tau2_run(
        tmp_path,
        "better",
        [[True, True, True], [True, False, True]] * 3,
        strategy={"name": "rehearsal-parallel:2", "mode": "parallel", "n": 2},
        manifest_extra={"limit": 6},
        extra=finmcp_records(),
    )
    return base, better


def _bars(figure):
    """(label, patch) of every bar of a figure (a bar's label is on its container)."""
    from matplotlib.container import BarContainer

    return [
        (container.get_label(), patch)
        for ax in figure.axes
        for container in ax.containers
        if isinstance(container, BarContainer)
        for patch in container.patches
    ]


def _colour_hex(rgba):
    from matplotlib.colors import to_hex

    return to_hex(rgba)


@pytest.mark.slow
def test_paper_figures_in_three_formats_with_truetype_fonts(tmp_path, two_runs):
    out = tmp_path / "figs"
    argv = ["plot", *map(str, two_runs), "--out", str(out), "--n-boot", "100"]
    assert main(argv) == 0
    stems = {"bars", "budget", "passk"}
    for stem in stems:
        for fmt, magic in MAGIC.items():
            data = (out / f"{stem}.{fmt}").read_bytes()
            assert data.startswith(magic), (stem, fmt)
    for stem in stems:
        fonts = pdf_font_subtypes((out / f"{stem}.pdf").read_bytes())
        assert fonts, f"{stem}.pdf embeds no font"
        # TrueType outlines (Type 42): a simple TrueType font, or a Type 0 font whose
        # descendant is CIDFontType2; never Type 3 (bitmap-like, refused by venues).
        assert set(fonts) <= TRUETYPE_SUBTYPES and set(fonts) & {"TrueType", "CIDFontType2"}, fonts


# The /Subtype values a PDF font dictionary can have (PDF 1.7, 9.6-9.7).
FONT_SUBTYPES = {"Type0", "Type1", "MMType1", "Type3", "TrueType", "CIDFontType0", "CIDFontType2"}
TRUETYPE_SUBTYPES = {"TrueType", "Type0", "CIDFontType2"}


def pdf_font_subtypes(data: bytes) -> list[str]:
    """The subtypes of the font dictionaries in a PDF whose objects are not
    compressed into object streams (matplotlib's are not); other /Subtype
    entries (images, forms, links) are not fonts."""
    found = re.findall(rb"/Subtype\s*/(\w+)", data)
    return [name.decode() for name in found if name.decode() in FONT_SUBTYPES]


def test_the_pdf_font_check_tells_type3_from_truetype(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    subtypes = {}
    for fonttype in (3, 42):
        with matplotlib.rc_context({"pdf.fonttype": fonttype}):
            figure, ax = plt.subplots()
            ax.set_title("τ² pass^k")
            figure.savefig(tmp_path / f"{fonttype}.pdf")
            plt.close(figure)
        subtypes[fonttype] = set(pdf_font_subtypes((tmp_path / f"{fonttype}.pdf").read_bytes()))
    assert subtypes[3] == {"Type3"}
    assert subtypes[42] == {"Type0", "CIDFontType2"}


def test_labels_file_names_and_colours_runs_the_same_in_every_figure(tmp_path, two_runs):
    base, better = two_runs
    labels = tmp_path / "labels.yaml"
    labels.write_text(
        f"{base}: {{label: Qwen3-8B baseline, colour: '#112233'}}\nbetter: EnvACE rehearsal\n",
        encoding="utf-8",
    )
    out = tmp_path / "figs"
    argv = ["plot", str(base), str(better), "--out", str(out), "--labels", str(labels)]
    assert main([*argv, "--n-boot", "100", "--format", "svg"]) == 0
    for stem in ("bars", "passk"):
        svg = (out / f"{stem}.svg").read_text(encoding="utf-8")
        assert "Qwen3-8B baseline" in svg and "EnvACE rehearsal" in svg, stem
        assert "base (partial)" not in svg and ">base<" not in svg

    results = [load_run(base, n_boot=50), load_run(better, n_boot=50)]
    context = figure_context(results, parse_labels({str(base): {"colour": "#112233"}}))
    bars, passk = build_plots(results, ["bars", "passk"], context)
    colours = {}
    for label, patch in _bars(bars.figure):
        colours.setdefault(label, set()).add(_colour_hex(patch.get_facecolor()))
    line_colours = {
        line.get_label(): _colour_hex(line.get_color()) for line in passk.figure.axes[0].lines
    }
    assert colours["base"] == {"#112233"}
    assert line_colours["base"] == "#112233"
    # The run the file gives no colour takes the palette colour of its place in the
    # sorted run order (second), in both figures.
    assert colours["better"] == {PALETTE[1].lower()}
    assert line_colours["better"] == PALETTE[1].lower()


def test_default_colours_follow_sorted_run_order_not_the_figure():
    one = assign_styles({"b": [], "a": [], "c": []}, {})
    other = assign_styles({"c": [], "a": [], "b": []}, {})
    assert one == other
    assert [one[k].colour for k in "abc"] == list(PALETTE[:3])


def test_pass_rates_and_f1_never_share_an_axis(tmp_path, two_runs):
    results = [load_run(r, n_boot=50) for r in two_runs]
    bars = build_plots(results, ["bars"])[0]
    axes = [ax for ax in bars.figure.axes if ax.get_visible()]
    assert [ax.get_ylabel().split(" (%)")[0] for ax in axes] == ["pass rate", "F1"]
    ticks = [[t.get_text() for t in ax.get_xticklabels()] for ax in axes]
    assert ticks == [["τ²-Bench (original)"], ["FinMCP-Bench"]]
    # The F1 panel holds the one FinMCP bar, at 50 %, with its value written above it.
    f1 = axes[1]
    assert [round(p.get_height(), 6) for p in f1.patches] == [50.0]
    assert "50" in [t.get_text() for t in f1.texts]


def test_partial_numbers_are_hatched_and_say_so_in_the_legend(tmp_path, two_runs):
    results = [load_run(r, n_boot=50) for r in two_runs]
    bars = build_plots(results, ["bars"])[0]
    hatches = {label: patch.get_hatch() for label, patch in _bars(bars.figure)}
    assert hatches["better"] == PARTIAL_HATCH  # 6 of 278 tasks, --limit 6
    assert hatches["base"] is None
    legend = [t.get_text() for t in bars.figure.legends[0].get_texts()]
    assert "better" in legend and any(t.startswith("hatched: partial") for t in legend)
    # Curves mark a partial run's points with open markers, explained in the legend.
    passk = build_plots(results, ["passk"])[0]
    lines = {line.get_label(): line for line in passk.figure.axes[0].lines}
    assert lines["better"].get_markerfacecolor() == "white"
    assert lines["base"].get_markerfacecolor() != "white"
    legend = [t.get_text() for t in passk.figure.legends[0].get_texts()]
    assert any(t.startswith("open marker: partial") for t in legend)


def test_published_rows_are_dashed_baselines_not_bars(tmp_path, two_runs):
    results, _ = load_board(list(two_runs), "tau2", n_boot=50)
    gpt = next(r for r in results if r.is_reference and r.model == "GPT-4.1")
    bars = build_plots([r for r in results if not r.is_reference] + [gpt], ["bars"])[0]
    ax = bars.figure.axes[0]
    assert {label for label, _ in _bars(bars.figure)} == {"base", "better"}
    dashed = [c for c in ax.collections if c.get_label() == "GPT-4.1 (published, tau2)"]
    assert len(dashed) == 1
    segment = dashed[0].get_segments()[0]
    assert segment[0][1] == pytest.approx(54.67) and segment[1][1] == pytest.approx(54.67)
    assert dashed[0].get_linestyle()[0][1] is not None  # a dash pattern, not a solid line


def test_budget_lines_join_only_runs_of_one_model_and_rehearser(tmp_path):
    def run(name, model, strategy):
        return tau2_run(tmp_path, name, [[True, False]] * 2, strategy=strategy, model=model)

    def rehearsal(n, rehearser=None):
        settings = {"rehearser_model": rehearser} if rehearser else {"rehearser_model": None}
        return {"name": f"rehearsal-parallel:{n}", "mode": "parallel", "n": n, "settings": settings}

    runs = [
        run("a0", "model-a", "plain"),
        run("a1", "model-a", rehearsal(1)),
        run("a2", "model-a", rehearsal(2)),
        run("a2x", "model-a", rehearsal(2, "openai/big-rehearser")),
        run("b0", "model-b", "plain"),
        run("b2", "model-b", rehearsal(2)),
        run("c4", "model-c", rehearsal(4)),
    ]
    results = [load_run(r, n_boot=20) for r in runs]
    lines = {
        (line.model, line.rehearser): [r.name for r in line.runs] for line in budget_lines(results)
    }
    assert lines == {
        ("model-a", "openai/big-rehearser"): ["a0", "a2x"],
        ("model-a", "self"): ["a0", "a1", "a2"],
        ("model-b", "self"): ["b0", "b2"],
        ("model-c", "self"): ["c4"],
    }
    plot = build_plots(results, ["budget"])[0]
    from matplotlib.container import ErrorbarContainer

    drawn = sorted(
        tuple(container.lines[0].get_xdata())
        for container in plot.figure.axes[0].containers
        if isinstance(container, ErrorbarContainer)
    )
    assert drawn == sorted([(0, 2), (0, 1, 2), (0, 2), (4,)])


def test_pass_k_curves_have_intervals_and_a_legend_off_the_axes(tmp_path):
    outcomes = [[True, True, False, True], [True, False, False, False], [True, True, True, True]]
    run = tau2_run(tmp_path, "r", outcomes * 3)
    plot = build_plots([load_run(run, n_boot=50)], ["passk"])[0]
    ax = plot.figure.axes[0]
    values = list(ax.lines[0].get_ydata())
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert min(band) < min(values) and max(band) > max(values[1:])  # a band, not a line
    assert values[0] == pytest.approx(100 * 8 / 12)  # 3 + 1 + 4 of 12 trials
    assert ax.get_legend() is None and len(plot.figure.legends) == 1


def test_a_bad_labels_file_is_one_line_and_exit_2(tmp_path, two_runs, capsys):
    labels = tmp_path / "labels.yaml"
    labels.write_text("base: {label: B, colour: not-a-colour}\n", encoding="utf-8")
    argv = ["plot", *map(str, two_runs), "--out", str(tmp_path / "o"), "--labels", str(labels)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "'not-a-colour' is not a colour" in err and len(err.splitlines()) == 1
    labels.write_text("base: {label: B, shade: red}\n", encoding="utf-8")
    assert main(argv) == 2
    assert "unknown key(s) shade" in capsys.readouterr().err


def test_non_standard_numbers_carry_their_mark_in_the_bar_labels(tmp_path, two_runs):
    base, better = two_runs
    scores = json.loads((better / "scores.json").read_text())
    scores["benchmarks"]["tau2"]["nonstandard"] = ["option malformed_calls: continue"]
    (better / "scores.json").write_text(json.dumps(scores))
    results = [load_run(r, n_boot=50) for r in two_runs]
    bars = build_plots(results, ["bars"])[0]
    labels = [t.get_text() for ax in bars.figure.axes for t in ax.texts]
    assert sum(text.endswith("§") for text in labels) == 1  # better's tau2 bar only
    legend = [t.get_text() for t in bars.figure.legends[0].get_texts()]
    assert any(t.startswith("§ on a value: not the benchmark's standard") for t in legend)
