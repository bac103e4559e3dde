"""The statistics of `harness compare` at small n, checked against scipy and statsmodels.

Wilson, Newcombe (paired, method 10), McNemar, Holm and the design's MDE are each
compared with an independent implementation or a published value; the small-n
rationale (bootstrap undercovers, Newcombe does not) is re-derived exactly over
every outcome of a six-task design.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from fake_runs import make_run, pass_fail_records
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from harness.results import stats
from harness.results.headlines import estimator_for
from harness.results.stats import PassFailTable, TaskOutcome
from harness.task.estimators import MEAN_PASS


def task(subset: str, sample_id: str, outcomes: list[bool], bench: str = "tau2") -> TaskOutcome:
    trials = {
        i: {"ok": 1.0, "passed": float(p), "reward": float(p)} for i, p in enumerate(outcomes)
    }
    return TaskOutcome(bench, subset, sample_id, trials)


def pairs_of(a: list[bool], b: list[bool], subset: str = "airline") -> list[tuple]:
    return [
        (task(subset, str(i), [x]), task(subset, str(i), [y]))
        for i, (x, y) in enumerate(zip(a, b, strict=True))
    ]


def table_pairs(table: PassFailTable, subset: str = "airline") -> list[tuple]:
    a = [True] * table.both + [True] * table.a_only + [False] * (table.b_only + table.neither)
    b = [True] * table.both + [False] * table.a_only + [True] * table.b_only
    b += [False] * table.neither
    return pairs_of(a, b, subset)


# --- the six-task example: null (A) against oracle (B) on τ² --------------------------------
# airline: both pass both tasks; retail and telecom: only the oracle passes.
SIX_A = {"airline": [True, True], "retail": [False, False], "telecom": [False, False]}
SIX_B = {"airline": [True, True], "retail": [True, True], "telecom": [True, True]}


def six_task_strata() -> dict[str, list[tuple]]:
    return {s: pairs_of(SIX_A[s], SIX_B[s], s) for s in SIX_A}


# --- Wilson and Newcombe --------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 6, 30, 161])
def test_wilson_interval_matches_statsmodels(n):
    for successes in range(n + 1):
        ours = stats.wilson_interval(successes, n)
        low, high = proportion_confint(successes, n, alpha=0.05, method="wilson")
        assert (ours.low, ours.high) == pytest.approx((low, high), abs=1e-12)


def test_newcombe_paired_matches_the_published_example():
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables", ch. 8:
    # complete response before/after consolidation therapy (Cavo et al. 2012), first
    # classification in rows: [[59, 6], [16, 80]] -> -0.0621 (95% CI -0.1186 to -0.0046).
    # Rows are B, columns A: both=59, B only=6, A only=16, neither=80.
    table = PassFailTable(both=59, a_only=16, b_only=6, neither=80)
    interval = stats.newcombe_paired_interval(table)
    assert table.diff == pytest.approx(-0.0621, abs=5e-5)
    assert (interval.low, interval.high) == pytest.approx((-0.1186, -0.0046), abs=5e-5)


def test_newcombe_paired_without_correlation_is_statsmodels_square_and_add():
    # When phi is 0 (a margin is empty, or 0 <= ad - bc <= n/2) the paired interval is
    # the square-and-add of the two Wilson intervals: statsmodels' "newcomb".
    checked = 0
    for n in (2, 6, 12, 30):
        for both in range(n + 1):
            for a_only in range(n + 1 - both):
                for b_only in range(n + 1 - both - a_only):
                    table = PassFailTable(both, a_only, b_only, n - both - a_only - b_only)
                    b_pass, a_pass = both + b_only, both + a_only
                    cross = table.both * table.neither - table.a_only * table.b_only
                    empty = 0 in (b_pass, n - b_pass, a_pass, n - a_pass)
                    if not (empty or 0 <= cross <= n / 2):
                        continue
                    ours = stats.newcombe_paired_interval(table)
                    low, high = confint_proportions_2indep(
                        b_pass, n, a_pass, n, method="newcomb", compare="diff"
                    )
                    assert (ours.low, ours.high) == pytest.approx((low, high), abs=1e-9)
                    checked += 1
    assert checked > 500


def test_newcombe_interval_of_the_six_task_example_is_wide_and_honest():
    table = PassFailTable(both=2, a_only=0, b_only=4, neither=0)
    interval = stats.newcombe_paired_interval(table)
    assert table.diff == pytest.approx(4 / 6)
    assert interval.contains(4 / 6)
    assert interval.low == pytest.approx(0.1311, abs=5e-5)
    assert interval.high == pytest.approx(0.9032, abs=5e-5)


def _all_tables(n: int):
    for both in range(n + 1):
        for a_only in range(n + 1 - both):
            for b_only in range(n + 1 - both - a_only):
                yield PassFailTable(both, a_only, b_only, n - both - a_only - b_only)


def _probability(table: PassFailTable, cells: tuple[float, float, float, float]) -> float:
    counts = (table.both, table.a_only, table.b_only, table.neither)
    p = math.factorial(table.n)
    for k, q in zip(counts, cells, strict=True):
        p *= q**k / math.factorial(k)
    return p


# P(both), P(A only), P(B only), P(neither): designs with 12-40% of tasks flipping.
DESIGNS = [(0.4, 0.05, 0.15, 0.4), (0.3, 0.1, 0.3, 0.3), (0.45, 0.02, 0.1, 0.43)]


@pytest.mark.parametrize("cells", DESIGNS)
def test_at_six_tasks_newcombe_holds_its_level_and_the_bootstrap_does_not(cells):
    """Why compare warns below MIN_PAIRED_TASKS: exact coverage over every outcome."""
    true_diff = cells[2] - cells[1]
    newcombe = bootstrap = 0.0
    for table in _all_tables(6):
        p = _probability(table, cells)
        newcombe += p * stats.newcombe_paired_interval(table).contains(true_diff)
        _, _, replicates = stats.paired_replicates({"s": table_pairs(table)}, MEAN_PASS, 500)
        interval = stats.percentile_interval(replicates)
        bootstrap += p * (interval.low - 1e-12 <= true_diff <= interval.high + 1e-12)
    assert newcombe >= 0.95
    assert bootstrap < 0.90  # 0.45-0.85 over these designs


# --- McNemar, Holm ----------------------------------------------------------------------------


def test_mcnemar_exact_matches_scipy_and_statsmodels():
    for a_only in range(12):
        for b_only in range(12):
            ours = stats.mcnemar_exact(a_only, b_only)
            n = a_only + b_only
            if n:
                assert ours == pytest.approx(binomtest(a_only, n, 0.5).pvalue, abs=1e-12)
            table = [[3, a_only], [b_only, 4]]
            assert ours == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)


@pytest.mark.slow  # statsmodels over many random families: about 100 s on 2 cores
def test_holm_matches_statsmodels():
    rng = random.Random(3)
    for size in (1, 2, 5, 20):
        for _ in range(20):
            p = [rng.choice([rng.random(), rng.random() / 50, 1.0]) for _ in range(size)]
            expected = multipletests(p, alpha=0.05, method="holm")[1]
            assert stats.holm_adjust(p) == pytest.approx(list(expected), abs=1e-12)


def test_compare_runs_holm_adjusts_every_row_and_warns_when_significance_is_lost():
    # airline: B wins 6 of 6 flips (p = 2/64); retail: nothing flips (p = 1). The
    # family is 3 rows (headline, airline, retail); the headline also has p = 2/64.
    a = {
        t.key: t
        for t in [task("airline", str(i), [False]) for i in range(6)]
        + [task("airline", "x", [True])]
        + [task("retail", str(i), [i % 2 == 0]) for i in range(30)]
    }
    b = dict(a)
    b.update({t.key: t for t in [task("airline", str(i), [True]) for i in range(6)]})
    (result,) = stats.compare_runs(a, b, n_boot=200)
    rows = [result.headline, *result.subsets]
    assert [r.p_value for r in rows] == pytest.approx([2 / 64, 2 / 64, 1.0])
    assert [r.p_holm for r in rows] == pytest.approx([6 / 64, 6 / 64, 1.0])
    for row in rows[:2]:  # significant before the correction only
        assert "holm" in [w.kind for w in row.warnings]
    assert "holm" not in [w.kind for w in rows[2].warnings]


# --- MDE of the design ------------------------------------------------------------------------


def test_null_standard_error_of_a_pass_rate_is_root_discordance_over_n():
    a = [True] * 5 + [False] * 7 + [True] * 8 + [False] * 20
    b = [False] * 5 + [True] * 7 + [True] * 8 + [False] * 20
    se = stats.null_standard_error({"airline": pairs_of(a, b)}, MEAN_PASS)
    assert se == pytest.approx(math.sqrt(12) / 40, rel=1e-6)


def test_mde_agrees_with_statsmodels_power_for_a_paired_mean():
    a = [True] * 5 + [False] * 7 + [True] * 8 + [False] * 20
    b = [False] * 5 + [True] * 7 + [True] * 8 + [False] * 20
    result = stats.compare_paired("x", {"airline": pairs_of(a, b)}, MEAN_PASS, n_boot=200)
    n = 40
    sigma = math.sqrt(12 / n)  # per-task sd of the difference under no difference
    effect = NormalIndPower().solve_power(nobs1=n, alpha=0.05, power=0.8, ratio=0)
    assert result.mde == pytest.approx(effect * sigma, rel=1e-4)


def test_null_standard_error_weights_subsets_as_the_estimator_does():
    # mean over subsets of the pass rate: weight 1/(K n_s) per task of subset s.
    strata = {
        "airline": pairs_of([False] * 3 + [True] * 7, [True] * 3 + [True] * 7, "airline"),
        "retail": pairs_of([True] * 2 + [False] * 38, [False] * 2 + [False] * 38, "retail"),
    }
    expected = math.sqrt(3 / (2 * 10) ** 2 + 2 / (2 * 40) ** 2)
    assert stats.null_standard_error(strata, MEAN_PASS) == pytest.approx(expected, rel=1e-6)


def test_null_standard_error_of_micro_f1_matches_swapping_runs_per_task():
    # The design's SE under no difference is the spread of Δ when each task's A and B
    # are swapped at random; for a non-linear metric (micro F1) the linearisation
    # must agree with that permutation distribution.
    rng = np.random.default_rng(5)

    def f1_task(i: int, tp: int, fp: int, fn: int) -> TaskOutcome:
        values = {"ok": 1.0, "passed": 0.0, "reward": 0.0}
        values.update({"tool_tp": tp, "tool_fp": fp, "tool_fn": fn})
        return TaskOutcome("finmcp", "all", str(i), {0: values})

    pairs = []
    for i in range(200):
        a = rng.integers(0, 4, size=3)
        b = rng.integers(0, 4, size=3)
        pairs.append((f1_task(i, *a), f1_task(i, *b)))
    estimator = estimator_for("finmcp", "micro_f1")
    se = stats.null_standard_error({"all": pairs}, estimator)
    diffs = []
    for _ in range(250):
        swap = rng.random(len(pairs)) < 0.5
        mixed = [(b, a) if s else (a, b) for (a, b), s in zip(pairs, swap, strict=True)]
        value_a, value_b, _ = stats.paired_replicates({"all": mixed}, estimator, n_boot=1)
        diffs.append(value_b - value_a)
    assert se == pytest.approx(float(np.std(diffs)), rel=0.15)


def test_mde_is_none_when_no_task_differs_not_zero():
    outcomes = [True, False] * 20
    result = stats.compare_paired("x", {"airline": pairs_of(outcomes, outcomes)}, MEAN_PASS, 200)
    assert result.mde is None
    assert "no_mde" in [w.kind for w in result.warnings]


# --- degenerate bootstrap, small-n warning ------------------------------------------------------


def test_the_six_task_example_warns_and_reports_an_honest_interval():
    result = stats.compare_paired("tau2", six_task_strata(), estimator_for("tau2"), n_boot=2000)
    assert result.diff == pytest.approx(2 / 3)
    # The stratified bootstrap has nothing to resample: every subset's tasks agree.
    assert result.interval.low == result.interval.high == pytest.approx(2 / 3)
    assert result.bootstrap_degenerate
    assert result.table == PassFailTable(both=2, a_only=0, b_only=4, neither=0)
    assert result.newcombe.high - result.newcombe.low > 0.5
    # MDE from the design (4 flips of 6, mean over 3 subsets of 2), not a zero-width CI.
    assert result.null_se == pytest.approx(math.sqrt(4) / 6)
    assert result.mde == pytest.approx(stats.minimum_detectable_effect(1 / 3))
    kinds = [w.kind for w in result.warnings]
    assert {"small_n", "degenerate_bootstrap", "too_few_flips", "below_mde"} <= set(kinds)


def test_a_varied_bootstrap_is_not_degenerate():
    a = [False, True, False, True, False, False, True, False] * 5
    b = [True, True, False, False, True, False, True, True] * 5
    result = stats.compare_paired("x", {"airline": pairs_of(a, b)}, MEAN_PASS, n_boot=300)
    assert not result.bootstrap_degenerate
    assert "degenerate_bootstrap" not in [w.kind for w in result.warnings]


@pytest.mark.parametrize("n, warned", [(29, True), (30, False)])
def test_small_n_warning_below_the_minimum_paired_tasks(n, warned):
    a = [i % 3 == 0 for i in range(n)]
    b = [i % 2 == 0 for i in range(n)]
    result = stats.compare_paired("x", {"airline": pairs_of(a, b)}, MEAN_PASS, n_boot=200)
    assert ("small_n" in [w.kind for w in result.warnings]) is warned
    assert stats.MIN_PAIRED_TASKS == 30


# --- the command ------------------------------------------------------------------------------


def _six_task_runs(tmp_path):
    a_records, b_records = [], []
    for subset in SIX_A:
        a_records += pass_fail_records("tau2", subset, SIX_A[subset])
        b_records += pass_fail_records("tau2", subset, SIX_B[subset])
    a = make_run(tmp_path, "null", a_records, {})
    b = make_run(tmp_path, "oracle", b_records, {})
    return a, b


def _cells(text: str, scope: str) -> list[str]:
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == scope:
            return cells
    raise AssertionError(f"no row {scope!r} in:\n{text}")


def test_compare_command_on_six_tasks_warns_and_shows_newcombe(tmp_path, capsys):
    from harness.cli import main

    a, b = _six_task_runs(tmp_path)
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    header = _cells(out, "scope")
    row = dict(zip(header, _cells(out, "tau2"), strict=True))
    assert row["Δ (pts)"] == "+66.67"
    assert row["bootstrap 95% CI (pts)"] == "degenerate"
    assert row["Newcombe 95% CI (pts)"] == "[+13.11, +90.32]"
    assert row["MDE (pts)"] == f"{100 * stats.minimum_detectable_effect(1 / 3):.2f}"
    assert row["McNemar p"] == "0.125" and row["Holm p"] == "0.5"
    assert "- tau2: 6 paired tasks (< 30)" in out
    assert "bootstrap degenerate" in out and "Why:" in out
    # Columns line up: every table line has its pipes at the same places.
    table = [line for line in out.splitlines() if line.startswith("|")]
    pipes = {tuple(i for i, ch in enumerate(line) if ch == "|") for line in table}
    assert len(pipes) == 1


def test_compare_json_is_typed_and_documented(tmp_path, capsys):
    from harness.cli import main
    from harness.report.compare import CompareJSON, RowJSON

    a, b = _six_task_runs(tmp_path)
    assert main(["compare", str(a), str(b), "--format", "json", "--n-boot", "300"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == set(CompareJSON.__annotations__)
    head = data["benchmarks"][0]["headline"]
    assert set(head) == set(RowJSON.__annotations__)
    assert head["bootstrap_degenerate"] is True
    assert head["pass_fail"] == {"both": 2, "a_only": 0, "b_only": 4, "neither": 0}
    assert head["newcombe_interval"]["low"] == pytest.approx(0.1311, abs=5e-5)
    assert head["p_value"] == pytest.approx(0.125) and head["p_holm"] == pytest.approx(0.5)
    assert {w["kind"] for w in head["warnings"]} <= set(data["warning_notes"])
    assert data["min_paired_tasks"] == 30 and data["unit"] == "fraction"


def test_newcombe_cell_names_its_own_difference_when_it_is_not_the_metrics():
    # Three trials per task: the metric (pass rate over trials) moves by 1/3, the
    # per-task majority pass/fail that Newcombe and McNemar use moves by 1.
    from harness.report.compare import newcombe_cell

    pairs = [
        (
            task("airline", str(i), [True, False, False]),
            task("airline", str(i), [True, True, False]),
        )
        for i in range(40)
    ]
    result = stats.compare_paired("x", {"airline": pairs}, MEAN_PASS, n_boot=200)
    assert result.diff == pytest.approx(1 / 3) and result.table.diff == pytest.approx(1.0)
    assert newcombe_cell(result).startswith("+100.00 [")
    same = stats.compare_paired(
        "x", {"airline": table_pairs(PassFailTable(5, 3, 9, 23))}, MEAN_PASS, 200
    )
    assert newcombe_cell(same).startswith("[")
