"""--data-dir: a root with one folder per benchmark, or NAME=PATH per benchmark."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.config.data_dirs import DataDirs
from harness.config.suites import load_suite
from harness.errors import ConfigError
from harness.run.suite_samples import load_suite_samples

KNOWN = ["bfcl", "finmcp", "tau2", "vitabench"]


def test_a_root_gives_each_benchmark_its_own_folder(tmp_path):
    (tmp_path / "vitabench").mkdir()
    dirs = DataDirs.parse([str(tmp_path)], known=KNOWN)
    assert dirs.for_benchmark("vitabench") == tmp_path / "vitabench"
    # No folder of its own: the path itself (one benchmark's folder, as before).
    assert dirs.for_benchmark("finmcp") == tmp_path
    assert DataDirs.parse(None).for_benchmark("finmcp") is None


def test_per_benchmark_paths_win_and_round_trip(tmp_path):
    (tmp_path / "vitabench").mkdir()
    own = tmp_path / "elsewhere"
    dirs = DataDirs.parse([str(tmp_path), f"vitabench={own}"], known=KNOWN)
    assert dirs.for_benchmark("vitabench") == own
    assert DataDirs.of(dirs.to_manifest()) == dirs
    assert DataDirs.parse(dirs.to_args(), known=KNOWN) == dirs
    assert DataDirs.of(str(tmp_path)).root == tmp_path  # an older manifest's plain path


@pytest.mark.parametrize(
    "values, message",
    [
        (["nope=/x"], "unknown benchmark 'nope'"),
        (["finmcp="], "no path"),
        (["/a", "/b"], "one root"),
    ],
)
def test_bad_data_dirs_are_one_clear_error(values, message):
    with pytest.raises(ConfigError, match=message):
        DataDirs.parse(values, known=KNOWN)


def test_the_flag_repeats():
    args = build_parser().parse_args(
        ["run", "--suite", "s", "--model", "m", "--data-dir", "/r", "--data-dir", "finmcp=/f"]
    )
    assert args.data_dir == ["/r", "finmcp=/f"]


def test_a_root_finds_the_benchmark_folder_inside_it(shared_data: Path):
    suite = load_suite("finmcp")
    plan = load_suite_samples(suite, limit=1, data_dir=DataDirs.parse([str(shared_data)]))
    assert plan.samples and {s.benchmark for s in plan.samples} == {"finmcp"}
    missing = [n for n in plan.not_run if "not found" in n.reason.lower()]
    assert not missing
    by_name = load_suite_samples(
        suite, limit=1, data_dir=DataDirs.parse([f"finmcp={shared_data / 'finmcp'}"])
    )
    assert [s.key for s in by_name.samples] == [s.key for s in plan.samples]
