"""Records typed from writing to reading: scoring reads Record objects, the
statuses and termination reasons are spelled once, and scores.json is one type
that writes the file and reads it back."""

from __future__ import annotations

import ast
import json
import re

import pytest
from fake_runs import make_run, pass_fail_records, record
from support import REPO

from harness.errors import ConfigError
from harness.run.scoring import aggregate_records, score_run
from harness.store.records import INFRA_ERROR, OK, SCORE_ERROR, STATUSES, Record
from harness.store.run_store import RunStore
from harness.store.scores import ScoredRecord, ScoresError, ScoresFile
from harness.types import TerminationReason, Trajectory, trajectory_extra

SCORING = REPO / "harness" / "run" / "scoring.py"


def test_scoring_reads_records_by_their_fields_not_by_string_keys():
    source = SCORING.read_text(encoding="utf-8")
    assert not re.search(r"""\b(record|r)\[["']""", source)
    assert not re.search(r"""\b(record|r)\.get\(""", source)
    # No string subscript of anything a record could be, nor a "score_error" key.
    tree = ast.parse(source)
    keyed = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("record", "r", "records")
        and isinstance(node.slice, ast.Constant)
    ]
    assert keyed == []
    # A status is compared by its name, never spelled.
    spelled = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(
            isinstance(side, ast.Constant) and side.value in STATUSES
            for side in (node.left, *node.comparators)
        )
    ]
    assert spelled == []


def test_aggregation_counts_the_statuses_of_record_objects():
    rows = pass_fail_records("tau2", "airline", [[True, False], [True, True]])
    rows.append(record("tau2", "airline", "t9", status=INFRA_ERROR))
    records = [Record.from_dict(row) for row in rows]
    records[0].score_error = "ValueError: the scorer failed"  # a regrade that failed
    records[1].status = SCORE_ERROR
    counts = aggregate_records(records)["tau2"]["counts"]
    assert counts == {"records": 5, "ok": 3, "infra_errors": 1, "score_errors": 2}
    with pytest.raises(AttributeError):  # the JSON form is no record
        aggregate_records(rows)


def test_the_regrade_error_is_a_field_written_only_when_set():
    row = record("tau2", "airline", "t1")
    plain = Record.from_dict(row)
    assert plain.score_error is None and "score_error" not in plain.to_dict()
    assert plain.to_dict() == row  # a record reads and writes back as it was
    failed = Record.from_dict({**row, "score_error": "KeyError: 'x'"})
    assert failed.score_error == "KeyError: 'x'" and failed.extra == {}
    assert failed.to_dict()["score_error"] == "KeyError: 'x'"
    assert Record(key="k", benchmark="b", subset="s", sample_id="1", trial=0).ok
    assert OK == "ok"


def test_scores_json_reads_back_as_it_was_written(tmp_path):
    rows = [
        record("tau2", "airline", "t1", extra={"costs": {"total": {"usd": 0.25}}}),
        record("tau2", "airline", "t2", passed=False),
        record("tau2", "retail", "t3", status=INFRA_ERROR),
    ]
    run_dir = make_run(tmp_path, "run", rows, {}, manifest_extra={"planned": {"tau2": {"x": 2}}})
    scores = score_run(run_dir, rescore=False)
    written = (run_dir / "scores.json").read_bytes()
    assert json.loads(written) == scores.to_dict()
    read = RunStore(run_dir).load_scores()
    assert read == scores
    assert read.records["tau2/airline/t2#0"].status == OK
    assert read.missing_samples == {"tau2": {"x": 2}}
    # Written again from what was read: the same bytes.
    again = tmp_path / "again"
    again.mkdir()
    RunStore(again).write_scores(read)
    assert (again / "scores.json").read_bytes() == written
    assert RunStore(run_dir).read_scores() == read.to_dict()


def test_scores_json_keeps_the_keys_of_another_version(tmp_path):
    data = ScoresFile(run_id="r", records={"k": ScoredRecord(OK, {"passed": True})}).to_dict()
    data["a_later_key"] = {"kept": [1, 2]}
    read = ScoresFile.from_dict(data)
    assert read.extra == {"a_later_key": {"kept": [1, 2]}}
    assert read.to_dict() == data
    assert list(read.to_dict()) == list(data)
    with pytest.raises(ScoresError, match="records"):
        ScoresFile.from_dict({**data, "records": {"k": {"status": 3}}})


def test_an_older_scores_json_reads_with_empty_entries(tmp_path):
    run_dir = make_run(tmp_path, "old", [record("tau2", "airline", "t1")], {"tau2": {"x": 1.0}})
    read = RunStore(run_dir).load_scores()  # written without costs and world_model
    assert read.costs == {} and read.world_model == {} and read.regrade_overrides is None
    assert read.benchmarks["tau2"]["headline"] == {"x": 1.0}


def _string_returns(function: ast.AST) -> set[str]:
    return {
        node.value.value
        for node in ast.walk(function)
        if isinstance(node, ast.Return)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def produced_terminations() -> set[str]:
    """Every termination text the code spells: a user turn's ``stop``, a
    trajectory's ``termination``, what the episode loop's limits and the
    benchmarks' stop rules return, and tau2's ending words."""
    found: set[str] = set()
    files = [*(REPO / "harness").rglob("*.py"), *(REPO / "adapters").rglob("*.py")]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg in ("stop", "termination"):
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    found.add(node.value.value)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                value = node.value.value
                for target in node.targets:
                    named = target.attr if isinstance(target, ast.Attribute) else None
                    named = target.id if isinstance(target, ast.Name) else named
                    if named in ("stop", "termination") and isinstance(value, str):
                        found.add(value)
            elif isinstance(node, ast.FunctionDef) and (
                node.name.endswith("stop_rule") or node.name in ("limit_reached", "agent_turn")
            ):
                found |= _string_returns(node)
    from harness.adapters.tau2 import transcript

    found |= {
        transcript.USER_STOP,
        transcript.AGENT_STOP,
        transcript.MAX_STEPS,
        transcript.TOO_MANY_ERRORS,
        transcript.AGENT_ERROR,
        transcript.USER_ERROR,
        transcript.ABORTED,
    }
    from harness.models.base import CONTEXT_OVERFLOW

    found.add(CONTEXT_OVERFLOW)
    return found


def test_termination_reasons_cover_every_reason_the_code_produces():
    produced = produced_terminations()
    # The scan finds the words where they are spelled (a check of the check).
    assert {"user_stop", "invalid_agent_message", "agent_stop", "max_steps"} <= produced
    values = {reason.value for reason in TerminationReason}
    assert produced - values == set()


def test_a_termination_reason_reads_and_writes_as_its_text():
    reason = TerminationReason.MAX_TOOL_ERRORS
    assert reason == "max_tool_errors" and str(reason) == f"{reason}" == "max_tool_errors"
    assert json.dumps(reason) == '"max_tool_errors"'
    trajectory = Trajectory(termination=reason)
    assert type(trajectory.to_dict()["termination"]) is str
    assert Trajectory().to_dict()["termination"] == "completed"
    assert Trajectory.from_dict({"termination": "a_later_reason"}).termination == "a_later_reason"


def test_trajectory_extra_reads_the_keys_it_declares():
    stored = {
        "wall_time_s": 1.5,
        "costs": {"total": {"usd": 1.0}},
        "void_attempts": [{"attempt": 1}],
        "world_model": "not a list",
    }
    extra = trajectory_extra(stored)
    assert extra == {
        "wall_time_s": 1.5,
        "costs": {"total": {"usd": 1.0}},
        "void_attempts": [{"attempt": 1}],
    }
    assert Trajectory.from_dict({"extra": stored}).extra == extra


def test_no_module_compares_a_record_status_spelled_out():
    """Statuses are named in harness/store/records.py and imported everywhere else."""
    spelled = []
    for path in [*(REPO / "harness").rglob("*.py"), *(REPO / "adapters").rglob("*.py")]:
        if path == REPO / "harness" / "store" / "records.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and any(
                isinstance(side, ast.Constant) and side.value in STATUSES
                for side in (node.left, *node.comparators)
            ):
                spelled.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert spelled == []


def test_scores_json_is_indented_with_each_record_on_a_line(tmp_path):
    records = [record("bfcl", "simple", f"s{i}", passed=i % 2 == 0) for i in range(5)]
    records.append(record("bfcl", "simple", 'odd "id"\n\u00e9', status="infra_error"))
    run_dir = make_run(tmp_path, "r", records, {})
    scores = score_run(run_dir, rescore=False)
    text = (run_dir / "scores.json").read_text(encoding="utf-8")
    assert json.loads(text) == RunStore(run_dir).read_scores()
    assert ScoresFile.from_dict(json.loads(text)) == scores
    lines = text.splitlines()
    assert lines[0] == "{" and lines[1].startswith('  "run_id": ')
    start = lines.index('  "records": {')
    entries = lines[start + 1 : start + 1 + len(records)]
    assert [line.split('": ', 1)[0].strip().strip('"') for line in entries][:5] == [
        f"bfcl/simple/s{i}#0" for i in range(5)
    ]
    assert all(json.loads("{" + line.rstrip(",") + "}") for line in entries)
    assert lines[start + 1 + len(records) :] == ["  }", "}"]


def test_a_scores_json_with_bytes_that_are_not_utf8_is_not_readable(tmp_path):
    run_dir = make_run(tmp_path, "r", [record("bfcl", "simple", "s0")], {})
    score_run(run_dir, rescore=False)
    path = run_dir / "scores.json"
    path.write_bytes(path.read_bytes().replace(b'"run_id": "r"', b'"run_id": "r\xff"'))
    with pytest.raises(ConfigError, match="not readable JSON"):
        RunStore(run_dir).read_scores()
