"""Load options are checked against what each benchmark declares, and key-named
ones are held secrets.

Every adapter lists its load options (``Adapter.known_options``); a suite entry's
``options`` and ``harness score --option BENCH.KEY=VALUE`` are checked against
that list before any work starts: a misspelt name is one line naming the closest
known one and exit 2, never a run with the default instead. A credential among
the options (``api_key: X``) is masked like every secret the run holds.
"""

from __future__ import annotations

import pytest

from harness.cli import main
from harness.task.registry import get_adapter

# (benchmark, subset, misspelt option, the option meant)
TYPOS = [
    ("bfcl", "simple_python", "mdoe: prompt", "mode"),
    ("tau2", "airline", "max_step: 3", "max_steps"),
    ("vitabench", "delivery", "lanugage: en", "language"),
    ("finmcp", "single_tool", "tool_call_caps: 3", "tool_call_cap"),
]


def suite_with(path, benchmark: str, subset: str, options: str):
    path.write_text(
        f"name: t\nentries:\n  - benchmark: {benchmark}\n    subsets: [{subset}]\n"
        f"    limit: 1\n    options: {{{options}}}\n"
    )
    return path


def one_error_line(capsys) -> str:
    out, err = capsys.readouterr()
    lines = (out + err).strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("harness: error: "), lines
    return lines[0]


@pytest.mark.parametrize(("benchmark", "subset", "typo", "meant"), TYPOS)
def test_a_misspelt_option_is_one_line_with_a_suggestion(
    benchmark, subset, typo, meant, tmp_path, capsys
):
    suite = suite_with(tmp_path / "s.yaml", benchmark, subset, typo)
    out = tmp_path / "run"
    assert main(["run", "--suite", str(suite), "--model", "oracle", "--out", str(out)]) == 2
    line = one_error_line(capsys)
    wrong = typo.split(":")[0]
    assert f"unknown option '{wrong}' for {benchmark}" in line, line
    assert f"did you mean '{meant}'?" in line, line
    for name in get_adapter(benchmark).known_options():
        assert name in line  # every known option is named
    assert not out.exists()  # refused before anything was written


def test_a_misspelt_regrade_option_is_one_line_with_a_suggestion(tmp_path, capsys):
    # Checked before the run folder is read: the refusal is the option's.
    assert main(["score", str(tmp_path), "--option", "bfcl.mdoe=prompt"]) == 2
    line = one_error_line(capsys)
    assert "--option: unknown option 'mdoe' for bfcl (did you mean 'mode'?" in line, line


def test_an_option_with_nothing_close_is_named_without_a_guess(tmp_path, capsys):
    suite = suite_with(tmp_path / "s.yaml", "bfcl", "simple_python", "zzz: 1")
    assert (
        main(["run", "--suite", str(suite), "--model", "oracle", "--out", str(tmp_path / "o")]) == 2
    )
    line = one_error_line(capsys)
    assert "unknown option 'zzz' for bfcl (known: max_steps_per_turn, mode)" in line, line


def test_every_builtin_adapter_describes_each_of_its_options():
    for name in ("bfcl", "tau2", "tau3", "vitabench", "finmcp"):
        options = get_adapter(name).known_options()
        assert options, name
        for option, about in options.items():
            assert option.isidentifier() and about.strip() and "\n" not in about, (name, option)
    assert "retrieval" in get_adapter("tau3").known_options()
    assert "retrieval" not in get_adapter("tau2").known_options()


def test_the_options_a_benchmark_declares_are_accepted(tmp_path, capsys):
    suite = suite_with(tmp_path / "s.yaml", "bfcl", "simple_python", "mode: prompt")
    out = tmp_path / "run"
    assert (
        main(["run", "--suite", str(suite), "--model", "oracle", "--quiet", "--out", str(out)]) == 0
    )
    assert main(["score", str(out), "--option", "bfcl.mode=fc"]) == 0


SUITE_KEY = "suite-option-key-7f3a91"
SCORE_KEY = "score-option-key-2b8c44"


def run_with_a_keyed_option(tmp_path):
    """The oracle over the toy benchmark with SUITE_KEY as its ``api_key`` option;
    the run folder."""
    suite = tmp_path / "keyed.yaml"
    suite.write_text(
        "name: keyed\nentries:\n  - benchmark: toy\n    subsets: [easy]\n"
        f"    options: {{api_key: {SUITE_KEY}}}\n"
    )
    out = tmp_path / "run"
    assert main(["run", "--suite", str(suite), "--model", "oracle", "--out", str(out)]) == 0
    return out


def test_a_key_among_the_options_reaches_nothing_the_run_writes(toy_suite, tmp_path, capsys):
    out = run_with_a_keyed_option(tmp_path)
    score = ["score", str(out), "--option", f"toy.judge_api_key={SCORE_KEY}"]
    assert main([*score, "--option", f"toy.api_key={SUITE_KEY}"]) == 0
    streams = "".join(capsys.readouterr())
    files = [path for path in out.rglob("*") if path.is_file()]
    names = {path.name for path in files}
    assert {"manifest.json", "samples.jsonl", "scores.json"} <= names, names
    found = {
        key: sum(path.read_text(encoding="utf-8").count(key) for path in files)
        for key in (SUITE_KEY, SCORE_KEY)
    }
    assert found == {SUITE_KEY: 0, SCORE_KEY: 0}, found
    assert SUITE_KEY not in streams and SCORE_KEY not in streams
    # The options are still recorded, masked: a reader sees that one was given.
    assert '"api_key": "***"' in (out / "samples.jsonl").read_text(encoding="utf-8")
    assert '"judge_api_key": "***"' in (out / "scores.json").read_text(encoding="utf-8")


def test_a_regrade_asks_again_for_a_credential_the_records_hold_masked(tmp_path, capsys):
    # The mask is not the key: a regrade loading with "***" would judge something
    # the run did not, so it stops in one line naming the option to give again.
    out = run_with_a_keyed_option(tmp_path)
    capsys.readouterr()
    before = (out / "samples.jsonl").read_bytes()
    assert main(["score", str(out)]) == 2
    line = one_error_line(capsys)
    assert "toy option 'api_key' is masked in the records" in line
    assert "give it again with --option, naming toy.api_key" in line
    assert (out / "samples.jsonl").read_bytes() == before  # nothing rewritten


@pytest.mark.parametrize("value", ["12345678", "[a, b]", "{k: v}"])
def test_a_key_that_is_not_text_is_refused(value, toy_suite, tmp_path, capsys):
    # YAML reads an unquoted number as a number, which masking by text would miss.
    suite = tmp_path / "keyed.yaml"
    suite.write_text(
        "name: keyed\nentries:\n  - benchmark: toy\n    subsets: [easy]\n"
        f"    options: {{api_key: {value}}}\n"
    )
    out = tmp_path / "run"
    assert main(["run", "--suite", str(suite), "--model", "oracle", "--out", str(out)]) == 2
    line = one_error_line(capsys)
    assert "toy option 'api_key' holds a credential: give it as quoted text" in line, line
    assert "12345678" not in line and not out.exists()


def _two_entries(path, first: str, second: str):
    path.write_text(f"name: t\nentries:\n  - {first}\n  - {second}\n")
    return path


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # The same subset in two modes: the second's records would overwrite the first's.
        (
            "{benchmark: bfcl, subsets: [simple_python], limit: 1}",
            "{benchmark: bfcl, subsets: [simple_python], limit: 1, options: {mode: prompt}}",
        ),
        # "all" covers every subset.
        ("{benchmark: tau2, subsets: all}", "{benchmark: tau2, subsets: [retail]}"),
        # ids in common.
        (
            "{benchmark: bfcl, subsets: [multiple], ids: [multiple_0, multiple_1]}",
            "{benchmark: bfcl, subsets: [multiple], ids: [multiple_1]}",
        ),
    ],
)
def test_two_entries_asking_for_the_same_sample_are_one_line(first, second, tmp_path, capsys):
    suite = _two_entries(tmp_path / "s.yaml", first, second)
    out = tmp_path / "run"
    assert main(["run", "--suite", str(suite), "--model", "oracle", "--out", str(out)]) == 2
    line = one_error_line(capsys)
    assert "entries 1 and 2 both ask for" in line and "a run of its own" in line, line
    assert not out.exists()


def test_entries_of_one_benchmark_over_disjoint_samples_run(tmp_path, capsys):
    suite = _two_entries(
        tmp_path / "s.yaml",
        "{benchmark: bfcl, subsets: [multiple], ids: [multiple_0]}",
        "{benchmark: bfcl, subsets: [multiple, simple_python], ids: [multiple_1, simple_python_0]}",
    )
    out = tmp_path / "run"
    assert (
        main(["run", "--suite", str(suite), "--model", "oracle", "--out", str(out), "--quiet"]) == 0
    )
    lines = (out / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 3
