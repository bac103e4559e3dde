"""VitaBench metrics: the benchmark's per-task-set numbers, and an order diagnostic.

Per task set (scenario), with n trials of a task of which c succeeded
(success = reward 1.0):

- ``avg_reward``: mean reward over all trials;
- ``pass^k``: mean over tasks of C(c, k) / C(n, k), for k = 1..min(trials, min n);
- ``pass@k``: mean over tasks with n >= k of 1 - C(n - c, k) / C(n, k);
- ``avg@k``: mean over the same tasks of the task's mean reward (independent of k).

Trials that failed for infrastructure reasons count as reward 0 (the benchmark's
own code drops them from the metrics instead). ``Avg`` is the unweighted mean of
the task sets' ``avg@k`` over the sets that were run; the benchmark's code has no
overall number, papers compute this one outside it.

The order diagnostic compares the orders in the final database with the task's
``required_orders``. It needs no judge and is not part of the official score.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from harness.boundary.json_value import JsonList, JsonMapping, JsonObject, JsonValue
from harness.results.stats import pass_at_k, pass_hat_k
from harness.store.records import OK
from harness.task.contract import BenchmarkResult, RecordView, SubsetResult
from harness.task.estimators import Estimator, mean_of, subset_means

from .data import VitaTask

DIAGNOSTIC_LABEL = "judge-free diagnostic (not the official score)"
RECORD_COLLECTIONS = ("orders", "books", "reservations")
ID_FIELDS = ("order_id", "book_id", "reservation_id")
# Status changes of existing records that the tools can make (others, such as
# "delivered", happen outside the conversation and are not checked).
REACHABLE_STATUSES = ("cancelled", "paid")


# ---------------------------------------------------------------- diagnostic


def record_id(record: JsonMapping, fallback: str = "") -> str:
    for field in ID_FIELDS:
        if record.get(field):
            return str(record[field])
    return fallback


def _records_of(collection: object) -> list[tuple[str, JsonMapping]]:
    if isinstance(collection, dict):
        return [(str(k), v) for k, v in collection.items() if isinstance(v, dict)]
    if isinstance(collection, list):
        return [("", v) for v in collection if isinstance(v, dict)]
    return []


def state_records(final_state: object) -> dict[str, JsonMapping]:
    """Orders, bookings and reservations of a final database view, by id."""
    records: dict[str, JsonMapping] = {}
    if not isinstance(final_state, dict):
        return records
    for name in (*RECORD_COLLECTIONS, "new_states", "old_states"):
        for key, record in _records_of(final_state.get(name)):
            records[record_id(record, key)] = record
    return records


def changed_records(final_state: object, initial: Mapping[str, JsonMapping]) -> list[str]:
    """Ids of records that are new or whose status changed during the episode."""
    changed = []
    for rid, record in state_records(final_state).items():
        before = initial.get(rid)
        if before is None or before.get("status") != record.get("status"):
            changed.append(rid)
    return changed


def _count(value: JsonValue) -> JsonValue:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return int(value) if float(value).is_integer() else value
    return 1 if value is None else value


def signature(record: JsonMapping) -> JsonList:
    """What a record must match: type, provider, and products x quantity
    (bookings and reservations: shop, time and head count)."""
    if "book_id" in record or "book_time" in record:
        return [
            "book",
            record.get("shop_id"),
            record.get("book_time"),
            _count(record.get("customer_count")),
        ]
    if "reservation_id" in record or "reservation_time" in record:
        return [
            "reservation",
            record.get("shop_id"),
            record.get("reservation_time"),
            _count(record.get("customer_count")),
        ]
    lines = record.get("products") or []
    products = sorted(
        (str(p.get("product_id")), _count(p.get("quantity")))
        for p in (lines if isinstance(lines, list) else [])
        if isinstance(p, dict)
    )
    provider = record.get("store_id") or record.get("shop_id")
    return [record.get("order_type"), provider, [list(p) for p in products]]


def _key(sig: JsonList) -> str:
    return repr(sig)


def _multiset_difference(wanted: list[JsonList], got: list[JsonList]) -> JsonList:
    remaining = Counter(_key(s) for s in got)
    missing: JsonList = []
    for sig in wanted:
        if remaining[_key(sig)] > 0:
            remaining[_key(sig)] -= 1
        else:
            missing.append(sig)
    return missing


def orders_diagnostic(final_state: object, task: VitaTask) -> JsonObject:
    """Final orders vs the task's required orders (a diagnostic, not the score)."""
    initial = task.initial_records
    actual = state_records(final_state)
    required_new: dict[bool, list[JsonList]] = {True: [], False: []}  # by "cancelled"
    placed_new: dict[bool, list[JsonList]] = {True: [], False: []}
    status_mismatches: JsonList = []
    for required in task.required_orders:
        rid = record_id(required)
        before = initial.get(rid)
        if before is None:
            required_new[required.get("status") == "cancelled"].append(signature(required))
            continue
        wanted = required.get("status")
        if wanted in REACHABLE_STATUSES and wanted != before.get("status"):
            got = (actual.get(rid) or {}).get("status")
            if got != wanted:
                status_mismatches.append({"id": rid, "required": wanted, "actual": got})
    for rid, record in actual.items():
        if rid not in initial:
            placed_new[record.get("status") == "cancelled"].append(signature(record))
    missing = _multiset_difference(required_new[False], placed_new[False]) + _multiset_difference(
        required_new[True], placed_new[True]
    )
    unexpected = _multiset_difference(
        placed_new[False], required_new[False]
    ) + _multiset_difference(placed_new[True], required_new[True])
    has_state = isinstance(final_state, dict)
    return {
        "label": DIAGNOSTIC_LABEL,
        "match": has_state and not missing and not unexpected and not status_mismatches,
        "required_new": len(required_new[False]) + len(required_new[True]),
        "placed_new": len(placed_new[False]) + len(placed_new[True]),
        "missing": missing,
        "unexpected": unexpected,
        "status_mismatches": status_mismatches,
        **({} if has_state else {"error": "the trajectory has no final database state"}),
    }


# ---------------------------------------------------------------- pass metrics


def scenario_mean(avg_at_k: Mapping[str, Any]) -> Any:
    """``Avg``: the plain mean of avg@k over the task sets given (floats or arrays
    of bootstrap replicates)."""
    return mean_of(list(avg_at_k.values()))


def _avg_of_sums(sums: Mapping[str, Any], counts: Mapping[str, int]) -> Any:
    # A task set's avg@k is the mean over its tasks of their mean reward.
    means = subset_means(sums, counts)
    return scenario_mean(means) if means else 0.0


ESTIMATORS = {
    "Avg": Estimator("Avg", ("reward",), _avg_of_sums, "plain mean over scenarios of avg@k")
}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def task_set_metrics(rewards_by_task: dict[str, list[float]], num_trials: int) -> dict[str, float]:
    """The benchmark's metrics of one task set from each task's trial rewards."""
    tasks = {task: rewards for task, rewards in rewards_by_task.items() if rewards}
    if not tasks:
        return {}
    counts = {task: (len(r), sum(1 for x in r if x == 1.0)) for task, r in tasks.items()}
    metrics: dict[str, float] = {"avg_reward": _mean([x for r in tasks.values() for x in r])}
    max_k = min(num_trials, min(n for n, _ in counts.values()))
    for k in range(1, num_trials + 1):
        having = [task for task, (n, _) in counts.items() if n >= k]
        if not having:
            continue
        metrics[f"avg@{k}"] = _mean([_mean(tasks[t]) for t in having])
        metrics[f"pass@{k}"] = _mean([pass_at_k(*counts[t], k) for t in having])
        if k <= max_k:
            metrics[f"pass^{k}"] = _mean([pass_hat_k(*counts[t], k) for t in counts])
    return metrics


def _group_key(record: RecordView, several_languages: bool) -> str:
    language = record.metadata.get("language")
    return f"{record.subset}-{language}" if several_languages and language else record.subset


PROMPT_SOURCE_TEXT = {
    "official": "the benchmark's own agent, user-simulator and judge prompts",
    "harness": (
        "this project's wording of the agent, user-simulator and judge prompts; not "
        "directly comparable with official-prompt scores"
    ),
}


def record_prompt_source(record: RecordView) -> str:
    details = record.score.details if record.score is not None else None
    source = (details or {}).get("prompt_source") or record.metadata.get("prompt_source")
    return str(source or "unknown")


def record_prompt_origin(record: RecordView) -> str:
    """Where a record's prompts came from: its score's (a regrade may have changed
    them), else what the run recorded."""
    details = record.score.details if record.score is not None else None
    origin = (details or {}).get("prompt_origin") or record.metadata.get("prompt_origin")
    return str(origin or "")


def _origins(records: list[RecordView], source: str) -> list[str]:
    return sorted(
        {
            record_prompt_origin(r)
            for r in records
            if record_prompt_origin(r) and record_prompt_source(r) == source
        }
    )


def prompt_source_note(records: list[RecordView]) -> str:
    """Which prompts the scores were obtained with (``prompt_source``), and from where."""
    sources = sorted({record_prompt_source(record) for record in records})
    parts = []
    for source in sources:
        count = sum(1 for r in records if record_prompt_source(r) == source)
        text = PROMPT_SOURCE_TEXT.get(source, "not recorded")
        origins = _origins(records, source)
        where = f"; from {', '.join(origins)}" if origins else ""
        parts.append(
            f"{source} ({text}{where}; {count} record(s))"
            if len(sources) > 1
            else f"{source} ({text}{where})"
        )
    if len(sources) == 1:
        return f"prompt_source: {parts[0]}."
    return f"prompt_source: mixed: {'; '.join(parts)}."


def nonstandard_settings(records: list[RecordView]) -> list[str]:
    """What of these records is not how VitaBench runs (harness.results.nonstandard)."""
    ours = [r for r in records if record_prompt_source(r) == "harness"]
    if not ours:
        return []
    origins = _origins(records, "harness")
    why = f" ({origins[0]})" if len(origins) == 1 else ""
    return [
        f"{len(ours)} of {len(records)} record(s) with this project's agent, user and judge "
        f"prompts, not VitaBench's own{why}"
    ]


def aggregate_records(benchmark: str, records: list[RecordView]) -> BenchmarkResult:
    """Per-task-set metrics, the headline at k = trials, and the mean ``Avg``."""
    several_languages = len({r.metadata.get("language") for r in records}) > 1
    groups: dict[str, list[RecordView]] = defaultdict(list)
    for record in records:
        groups[_group_key(record, several_languages)].append(record)

    subsets: dict[str, SubsetResult] = {}
    headline: dict[str, float] = {}
    avg_values: dict[str, float] = {}
    for name in sorted(groups):
        group = groups[name]
        rewards: dict[str, list[float]] = defaultdict(list)
        progress: list[float] = []
        orders_match: list[float] = []
        for record in sorted(group, key=lambda r: (r.sample_id, r.trial)):
            score = record.score if record.status == OK else None
            rewards[record.sample_id].append(score.reward if score is not None else 0.0)
            if score is not None and score.progress is not None:
                progress.append(score.progress)
            diagnostic = (score.details or {}).get("orders_match") if score is not None else None
            if isinstance(diagnostic, dict):
                orders_match.append(1.0 if diagnostic.get("match") else 0.0)
        num_trials = max(len(r) for r in rewards.values())
        metrics = task_set_metrics(rewards, num_trials)
        if progress:
            metrics["rubric_progress"] = _mean(progress)
        if orders_match:
            metrics["diagnostic/orders_match"] = _mean(orders_match)
        subsets[name] = SubsetResult(
            metrics=metrics,
            n_samples=len(rewards),
            n_records=len(group),
            n_infra_errors=sum(1 for r in group if r.status != OK),
        )
        for metric in (f"avg@{num_trials}", f"pass@{num_trials}", f"pass^{num_trials}"):
            if metric in metrics:
                headline[f"{name}/{metric}"] = metrics[metric]
        avg_values[name] = metrics[f"avg@{num_trials}"]
    if avg_values:
        headline["Avg"] = scenario_mean(avg_values)
    notes = [
        prompt_source_note(records),
        "Avg = unweighted mean of avg@k over the task sets run (computed outside the "
        "benchmark's code, as papers report it).",
        "Trials that failed for infrastructure reasons count as reward 0; the "
        "benchmark's code drops them.",
        "diagnostic/orders_match compares final orders with required_orders; "
        + DIAGNOSTIC_LABEL
        + ".",
    ]
    return BenchmarkResult(
        benchmark=benchmark,
        headline=headline,
        subsets=subsets,
        notes=notes,
        nonstandard=nonstandard_settings(records),
    )
