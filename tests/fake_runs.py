"""Hand-made run folders for the leaderboard, statistics, plot and report tests.

A run folder is written the way the runner and scorer write one (manifest.json,
samples.jsonl, scores.json), but with records and headline numbers chosen by the
test, so that expected values can be computed by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def record(
    benchmark: str,
    subset: str,
    sample_id: str,
    trial: int = 0,
    passed: bool = True,
    reward: float | None = None,
    status: str = "ok",
    tool_counts: tuple[int, int, int] | None = None,
    messages: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
    details: dict[str, Any] | None = None,
    usage: dict[str, dict[str, int]] | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One samples.jsonl record."""
    score = None
    if status == "ok":
        score = {
            "passed": passed,
            "reward": float(passed) if reward is None else reward,
            "progress": None,
            "tool_tp": None if tool_counts is None else tool_counts[0],
            "tool_fp": None if tool_counts is None else tool_counts[1],
            "tool_fn": None if tool_counts is None else tool_counts[2],
            "details": details or {},
        }
    error = None
    if status != "ok":
        error = {"type": "ModelError", "message": "server unavailable", "traceback": ""}
    return {
        "key": f"{benchmark}/{subset}/{sample_id}#{trial}",
        "benchmark": benchmark,
        "subset": subset,
        "sample_id": sample_id,
        "trial": trial,
        "seed": trial,
        "status": status,
        "error": error,
        "score": score,
        "metadata": metadata or {},
        "load_options": {},
        "started_at": "2026-01-01T00:00:00+00:00",
        "latency_s": 1.5,
        "trajectory": {
            "messages": messages
            or [
                {"role": "user", "content": f"task {sample_id}"},
                {"role": "assistant", "content": "done"},
            ],
            "turns": [],
            "termination": "completed",
            "tool_calls": 0,
            "tool_errors": 0,
            "usage": usage
            or {"actor": {"calls": 2, "prompt_tokens": 100, "completion_tokens": 10}},
            "context_resets": [],
            "reset_histories": [],
            "final_state": None,
            "extra": extra or {},
        },
    }


def make_run(
    root: Path,
    name: str,
    records: list[dict[str, Any]],
    headlines: dict[str, dict[str, float]],
    model: str = "test-model",
    strategy: str | dict[str, Any] = "plain",
    manifest_extra: dict[str, Any] | None = None,
    not_run: dict[str, dict[str, str]] | None = None,
    missing: dict[str, dict[str, int]] | None = None,
    env_feedback: str = "standard",
    user_model: str | None = "gpt-4.1-2025-04-14",
    judge_model: str | None = None,
    notes: dict[str, list[str]] | None = None,
) -> Path:
    """Write a run folder with the given records and per-benchmark headline metrics."""
    run_dir = root / name
    run_dir.mkdir(parents=True, exist_ok=True)
    strategy_dict = strategy if isinstance(strategy, dict) else {"name": strategy}
    manifest = {
        "run_id": name,
        "created_at": "2026-01-01T00:00:00+00:00",
        "finished_at": "2026-01-01T01:02:03+00:00",
        "model": {"name": model, "api_base": None, "prompt_mode": False},
        "strategy": strategy_dict,
        "env_feedback": env_feedback,
        "suite_name": "test",
        "trials": max((r["trial"] for r in records), default=0) + 1,
        "user_model": user_model,
        "judge_model": judge_model,
        "versions": {"harness": "0.1.0"},
        "planned": {},
        "not_run": [],
        **(manifest_extra or {}),
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with (run_dir / "samples.jsonl").open("w", encoding="utf-8") as handle:
        for item in records:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    benchmarks = {}
    for bench, headline in headlines.items():
        group = [r for r in records if r["benchmark"] == bench]
        skipped = (not_run or {}).get(bench, {})
        benchmarks[bench] = {
            "benchmark": bench,
            "headline": headline,
            "subsets": {},
            "not_run": sorted(skipped),
            "notes": (notes or {}).get(bench, []),
            "counts": {
                "records": len(group),
                "ok": sum(r["status"] == "ok" for r in group),
                "infra_errors": sum(r["status"] == "infra_error" for r in group),
                "score_errors": sum(r["status"] == "score_error" for r in group),
            },
            "not_run_reasons": skipped,
        }
    usage: dict[str, dict[str, int]] = {}
    for item in records:
        for role, counts in item["trajectory"]["usage"].items():
            for key, value in counts.items():
                usage.setdefault(role, {}).setdefault(key, 0)
                usage[role][key] += value
    scores = {
        "run_id": name,
        "scored_at": "2026-01-01T01:02:04+00:00",
        "regrade": {"regraded": 0, "changed": 0, "failed": 0},
        "settings": {
            "model": manifest["model"],
            "strategy": strategy_dict,
            "user_model": user_model,
            "judge_model": judge_model,
            "trials": manifest["trials"],
            "suite": None,
            "env_feedback": env_feedback,
        },
        "versions": manifest["versions"],
        "benchmarks": benchmarks,
        "missing_samples": missing or {},
        "usage": usage,
        "records": {
            r["key"]: {"status": r["status"], "score": r["score"], "score_error": None}
            for r in records
        },
    }
    (run_dir / "scores.json").write_text(json.dumps(scores, ensure_ascii=False), encoding="utf-8")
    return run_dir


def pass_fail_records(
    benchmark: str, subset: str, outcomes: list[bool | list[bool]], prefix: str = "t"
) -> list[dict[str, Any]]:
    """Records for tasks given as a pass/fail per task, or a list of them per trial."""
    out = []
    for i, outcome in enumerate(outcomes):
        trials = outcome if isinstance(outcome, list) else [outcome]
        for trial, passed in enumerate(trials):
            out.append(record(benchmark, subset, f"{prefix}{i}", trial, passed=passed))
    return out


def distinct_copy(record: dict[str, Any], copy: int) -> dict[str, Any]:
    """A real record as sample ``<id>~<copy>``, each message text marked with the copy
    (so that no copy is a duplicate of another; prompts and tools stay shared)."""
    record = json.loads(json.dumps(record))
    sample_id = f"{record['sample_id']}~{copy}"
    record["sample_id"] = sample_id
    record["key"] = f"{record['benchmark']}/{record['subset']}/{sample_id}#{record['trial']}"
    trajectory = record.get("trajectory") or {}
    for message in [*(trajectory.get("messages") or []), *(trajectory.get("turns") or [])]:
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            message["content"] += f" (copy {copy})"
    return record


def replicate_run(run_dir: Path, out: Path, samples: int) -> Path:
    """A run folder at ``out`` with ``samples`` records made from run_dir's real ones
    (its manifest, no scores.json: the leaderboard reads what the records hold)."""
    lines = (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_bytes((run_dir / "manifest.json").read_bytes())
    with (out / "samples.jsonl").open("w", encoding="utf-8") as handle:
        for n in range(samples):
            copy, index = divmod(n, len(records))
            handle.write(json.dumps(distinct_copy(records[index], copy)) + "\n")
    return out
