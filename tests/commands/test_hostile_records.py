"""Hand-edited or foreign records never make a command fail with a traceback.

Each shape below changes one field of a record, at one level (the record, its
score, its trajectory, a usage entry, a turn, a tool call, a message), into
something a reader would choke on: a wrong type, a huge integer, null inside a
list, NaN, a missing key, text where an object belongs; a few are allowed
changes (keys of another version). Every command that reads records (score,
also without a regrade, leaderboard in every format, report, compare, plot,
paper, export-bfcl, export-tau2) runs on a run folder holding it, in-process:
a damaged record is refused in one line naming samples.jsonl, its line and the
field, with exit code 2 (docs/reliability.md: a run folder of the wrong shape);
an allowed one is read (exit 0, or a one-line refusal the command makes of any
run of that kind, such as export-tau2 without the benchmark's checkout).
"""

from __future__ import annotations

import copy
import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_runs import make_run, record

from harness.cli import main

Record = dict[str, Any]


def _set(path: str, value: Any) -> Callable[[Record], None]:
    """Set the field at ``path`` (dots; ``[n]`` for a list index) to ``value``."""

    def change(data: Record) -> None:
        *parents, last = _steps(path)
        target: Any = data
        for step in parents:
            target = target[step]
        target[last] = copy.deepcopy(value)

    return change


def _drop(path: str) -> Callable[[Record], None]:
    def change(data: Record) -> None:
        *parents, last = _steps(path)
        target: Any = data
        for step in parents:
            target = target[step]
        del target[last]

    return change


def _steps(path: str) -> list[str | int]:
    steps: list[str | int] = []
    for part in path.split("."):
        name, _, index = part.partition("[")
        steps.append(name)
        if index:
            steps.append(int(index.rstrip("]")))
    return steps


def _later_keys_in_the_turns(data: Record) -> None:
    """A later version's keys in every turn and tool call, as they are stored (a
    record without turns gets one)."""
    trajectory = data["trajectory"]
    if not trajectory["turns"]:
        call = {"id": "c", "name": "add", "arguments": {"n": 1}}
        trajectory["turns"] = [{"content": None, "tool_calls": [call]}]
    for turn in trajectory["turns"]:
        turn["later"] = 2
        for call in turn.get("tool_calls") or []:
            call["later"] = 1


def _point_a_reply_at_no_turn(data: Record) -> None:
    """The first assistant message stored as a reply of a turn the record lacks."""
    messages = data["trajectory"]["messages"]
    first = next(i for i, m in enumerate(messages) if m.get("role") == "assistant")
    messages[first] = {"role": "assistant", "turn": 99}


HUGE = 10**30
NAN = math.nan

# name -> (the change, whether the record is still one a reader reads).
DAMAGED: dict[str, Callable[[Record], None]] = {
    # the record itself
    "trial_huge": _set("trial", HUGE),
    "trial_negative": _set("trial", -1),
    "trial_text": _set("trial", "0"),
    "trial_float": _set("trial", 1.5),
    "trial_null": _set("trial", None),
    "key_missing": _drop("key"),
    "key_number": _set("key", 5),
    "benchmark_null": _set("benchmark", None),
    "sample_id_list": _set("sample_id", [1]),
    "sample_id_huge": _set("sample_id", HUGE),
    "status_object": _set("status", {"ok": True}),
    "seed_huge": _set("seed", HUGE),
    "latency_nan": _set("latency_s", NAN),
    "latency_text": _set("latency_s", "fast"),
    "error_number": _set("error", 5),
    "metadata_text": _set("metadata", "m"),
    "load_options_text": _set("load_options", "str"),
    # the score
    "score_text": _set("score", "passed"),
    "score_passed_text": _set("score.passed", "yes"),
    "score_reward_nan": _set("score.reward", NAN),
    "score_reward_text": _set("score.reward", "1"),
    "score_progress_infinite": _set("score.progress", math.inf),
    "score_tool_tp_huge": _set("score.tool_tp", HUGE),
    "score_details_list": _set("score.details", [1]),
    # the trajectory
    "trajectory_list": _set("trajectory", [1]),
    "trajectory_tool_calls_text": _set("trajectory.tool_calls", "3"),
    "trajectory_usage_text": _set("trajectory.usage", "x"),
    "usage_actor_null": _set("trajectory.usage.actor", None),
    "usage_tokens_text": _set("trajectory.usage.actor.completion_tokens", "x"),
    "usage_tokens_huge": _set("trajectory.usage.actor.prompt_tokens", HUGE),
    "usage_calls_negative": _set("trajectory.usage.actor.calls", -3),
    "usage_tokens_nan": _set("trajectory.usage.actor.prompt_tokens", NAN),
    "turns_null_inside": _set("trajectory.turns", [None]),
    "turns_text": _set("trajectory.turns", "t"),
    "turn_usage_text": _set("trajectory.turns", [{"content": "x", "usage": {"calls": "x"}}]),
    "turn_tool_calls_null_inside": _set("trajectory.turns", [{"tool_calls": [None]}]),
    "tool_call_arguments_text": _set(
        "trajectory.turns", [{"tool_calls": [{"id": "c", "name": "add", "arguments": "n=1"}]}]
    ),
    "tool_call_without_name": _set(
        "trajectory.turns", [{"tool_calls": [{"id": "c", "arguments": {}}]}]
    ),
    "messages_null_inside": _set("trajectory.messages", [None]),
    "message_pointing_at_no_turn": lambda data: _point_a_reply_at_no_turn(data),
    "messages_object": _set("trajectory.messages", {"role": "user"}),
    "message_role_number": _set("trajectory.messages", [{"role": 3, "content": "x"}]),
    "context_resets_null_inside": _set("trajectory.context_resets", [None]),
    "reset_histories_null_inside": _set("trajectory.reset_histories", [[None]]),
    "trajectory_extra_text": _set("trajectory.extra", "e"),
}
ALLOWED: dict[str, Callable[[Record], None]] = {
    "extra_key_on_the_record": _set("from_a_later_version", {"x": [1, None]}),
    "extra_key_in_the_score": _set("score.from_a_later_version", [None]),
    "extra_key_in_the_usage": _set("trajectory.usage.actor.reasoning_tokens", 7),
    "extra_key_in_a_turn_and_call": lambda data: _later_keys_in_the_turns(data),
    "score_keys_missing": _set("score", {}),
    "score_passed_missing": _drop("score.passed"),
    "metadata_values_of_other_types": _set(
        "metadata", {"mode": 5, "error_flag": [1], "domain": None}
    ),
    "score_details_of_other_types": _set("score.details", {"prompt_mode": "x", "checks": None}),
    "score_reward_null": _set("score.reward", None),
    "trajectory_keys_missing": _set("trajectory", {}),
}
SHAPES = {**DAMAGED, **ALLOWED}
# Damage inside the conversation (messages, turns, earlier contexts) is met by
# the commands that read it (a regrade, the report's transcripts, the exports);
# those that read only numbers leave the conversation unread.
IN_THE_CONVERSATION = {
    name for name in DAMAGED if name.startswith(("turn", "tool_call", "message", "reset_histories"))
}
READS_THE_CONVERSATION = {"score", "report", "export_bfcl", "export_tau2"}
# Allowed shapes a command refuses for what they mean, not for their form: one line, exit 2.
REFUSED_FOR_WHAT_IT_SAYS = {
    # "prompt_mode": "x" makes that record a prompt-mode one beside FC ones.
    ("score_details_of_other_types", "export_bfcl"): "records mix FC and prompt mode",
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """One run folder per shape per benchmark kind (toy: scored by its adapter;
    bfcl, tau3: for their exports), and an untouched toy run to compare with."""
    root = tmp_path_factory.mktemp("hostile")
    env = pytest.MonkeyPatch()
    env.setenv("HARNESS_ADAPTERS", "toy=toy_adapter:ToyAdapter")
    env.delenv("TAU2_DATA_DIR", raising=False)
    suite = root / "toy.yaml"
    suite.write_text("name: toy\nentries:\n  - benchmark: toy\n    subsets: [easy]\n    limit: 2\n")
    good = root / "good"
    assert (
        main(["run", "--suite", str(suite), "--model", "oracle", "--quiet", "--out", str(good)])
        == 0
    )
    bfcl = make_run(root, "bfcl", [record("bfcl", "simple_python", f"simple_python_{i}") for i in range(2)], {"bfcl": {}})  # fmt: skip
    tau3 = make_run(root, "tau3", [record("tau3", "airline", str(i)) for i in range(2)], {"tau3": {}})  # fmt: skip
    folders = {"good": good}
    for base_name, base in (("toy", good), ("bfcl", bfcl), ("tau3", tau3)):
        lines = (base / "samples.jsonl").read_text().splitlines()
        for name, change in SHAPES.items():
            folder = root / f"{base_name}-{name}"
            shutil.copytree(base, folder)
            (folder / "scores.json").unlink(missing_ok=True)  # read from the records
            data = json.loads(lines[-1])
            change(data)
            text = "\n".join([*lines[:-1], json.dumps(data)]) + "\n"  # NaN written as NaN
            (folder / "samples.jsonl").write_text(text)
            folders[f"{base_name}-{name}"] = folder
    yield folders
    env.undo()


def commands(folders: dict[str, Path], name: str, out: Path) -> dict[str, list[str]]:
    toy, bfcl, tau3 = (str(folders[f"{kind}-{name}"]) for kind in ("toy", "bfcl", "tau3"))
    few = ["--n-boot", "20"]
    return {
        "score": ["score", toy],
        "score_no_rescore": ["score", toy, "--no-rescore"],
        "score_bfcl_no_rescore": ["score", bfcl, "--no-rescore"],
        **{f"leaderboard_{fmt}": ["leaderboard", toy, "--format", fmt, *few] for fmt in ("md", "csv", "json", "latex")},
        "report": ["report", toy, "--out", str(out / "r.html"), *few],
        "compare": ["compare", str(folders["good"]), toy, *few],
        "plot": ["plot", toy, "--out", str(out / "figures"), "--format", "svg", *few],
        "paper": ["paper", toy, "--baseline", toy, "--out", str(out / "pack"), "--format", "svg", *few],
        "export_bfcl": ["export-bfcl", bfcl, str(out / "bfcl")],
        "export_tau2": ["export-tau2", tau3, str(out / "tau2"), "--submission-type", "standard",
                        "--organization", "o", "--email", "e@example.org"],
    }  # fmt: skip


def test_the_table_has_at_least_thirty_damaged_shapes():
    assert len(DAMAGED) >= 30 and len(SHAPES) == len(DAMAGED) + len(ALLOWED)
    assert len(DAMAGED) - len(IN_THE_CONVERSATION) >= 30  # met by every command


@pytest.mark.parametrize("name", list(SHAPES))
def test_no_command_answers_a_hostile_record_with_a_traceback(runs, name, tmp_path, capsys):
    outcomes = {}
    for command, argv in commands(runs, name, tmp_path).items():
        code = main(argv)  # an exception escaping main is the failure this test is for
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err, f"{command}: {err[-2000:]}"
        outcomes[command] = (code, err.strip().splitlines())
    for command, (code, lines) in outcomes.items():
        unread = name in IN_THE_CONVERSATION and command not in READS_THE_CONVERSATION
        if name in DAMAGED and not unread:
            assert code == 2, f"{command}: exit {code}: {lines[-3:]}"
            assert len(lines) == 1, f"{command}: {lines}"
            assert "samples.jsonl line " in lines[0] and "the file is damaged" in lines[0], lines
        elif command == "export_tau2":  # no tau2-bench checkout is named: refused as for any run
            assert code == 2 and len(lines) == 1 and lines[0].startswith("harness: error: ")
        elif (name, command) in REFUSED_FOR_WHAT_IT_SAYS:
            assert code == 2 and len(lines) == 1, lines
            assert REFUSED_FOR_WHAT_IT_SAYS[name, command] in lines[0], lines
        else:
            assert code == 0, f"{command}: exit {code}: {lines[-3:]}"
