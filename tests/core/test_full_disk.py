"""Every file a command writes goes through the atomic writer: on a full disk the
command says so in one line (exit 1, rerun to resume) and leaves no temporary
file behind, and the file it was replacing is whole.

The disk is filled for one child process (support.fill_disk): the kernel refuses
any write past a few bytes, inside whichever library is writing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_runs import make_run, record
from support import fill_disk, harness_process

from harness.boundary.atomic import open_atomic, write_atomic
from harness.cli import main


def temporaries(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.tmp"))


def run_full(argv: list[str], room_bytes: int) -> tuple[int, list[str]]:
    """``harness ARGV`` with ``room_bytes`` left on the disk: (exit code, stderr lines)."""
    process = harness_process(argv, preexec_fn=fill_disk(room_bytes))
    _, err = process.communicate(timeout=300)
    return process.returncode, [line for line in err.splitlines() if line.strip()]


@pytest.fixture
def toy_run(toy_suite, tmp_path) -> Path:
    out = tmp_path / "run"
    argv = ["run", "--suite", str(toy_suite), "--model", "oracle", "--quiet", "--out", str(out)]
    assert main(argv) == 0
    return out


def assert_one_line_exit_1(code: int, lines: list[str]) -> None:
    assert code == 1, lines
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert lines[0].startswith("harness: error: File too large"), lines
    assert lines[0].endswith("rerun the same command to resume"), lines


def test_score_on_a_full_disk_keeps_scores_json_whole_and_leaves_no_temporary(toy_run):
    before = (toy_run / "scores.json").read_bytes()
    code, lines = run_full(["score", str(toy_run)], room_bytes=64)
    assert_one_line_exit_1(code, lines)
    assert temporaries(toy_run) == []
    assert (toy_run / "scores.json").read_bytes() == before  # the old file, whole


def test_report_on_a_full_disk_leaves_no_temporary(toy_run, tmp_path):
    out = tmp_path / "pages"
    out.mkdir()
    code, lines = run_full(["report", str(toy_run), "--out", str(out / "rep.html")], 4096)
    assert_one_line_exit_1(code, lines)
    assert temporaries(out) == [] and not (out / "rep.html").exists()


@pytest.mark.parametrize("fmt", ["pdf", "svg", "png"])
def test_paper_on_a_full_disk_is_one_line(toy_run, tmp_path, fmt):
    pack = tmp_path / "pack"
    argv = ["paper", str(toy_run), "--baseline", str(toy_run), "--out", str(pack)]
    argv += ["--format", fmt, "--n-boot", "50"]
    code, lines = run_full(argv, room_bytes=2048)
    assert_one_line_exit_1(code, lines)
    assert temporaries(pack) == []


def test_export_bfcl_on_a_full_disk_leaves_no_temporary(tmp_path):
    run = make_run(
        tmp_path, "bfcl", [record("bfcl", "simple_python", f"simple_python_{i}") for i in range(40)],
        {"bfcl": {}},
    )  # fmt: skip
    out = tmp_path / "export"
    code, lines = run_full(["export-bfcl", str(run), str(out)], room_bytes=256)
    assert_one_line_exit_1(code, lines)
    assert temporaries(out) == []
    assert list(out.rglob("*_result.json")) == []  # no half-written result file either


def test_the_writer_replaces_whole_or_not_at_all(tmp_path):
    target = tmp_path / "scores.json"
    write_atomic(target, json.dumps({"old": 1}))
    with pytest.raises(RuntimeError), open_atomic(target) as handle:
        handle.write('{"new": ')
        raise RuntimeError("the writer failed half way")
    assert json.loads(target.read_text()) == {"old": 1}
    assert temporaries(tmp_path) == []
    write_atomic(target, b"[]")
    assert target.read_bytes() == b"[]" and temporaries(tmp_path) == []
