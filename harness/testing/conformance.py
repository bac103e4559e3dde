"""A conformance check for adapter authors: ``check_adapter(MyAdapter)``.

It checks the contract docs/adapters.md describes, on a few samples of one or two
subsets, offline:

- ``subsets()`` is a non-empty list of unique names; ``official_set()`` (if any)
  names only those subsets, each with a positive size;
- ``known_options()`` describes every option in a line; ``versions()`` are strings;
- ``load`` gives ``Sample`` objects with unique ids and this benchmark's name and
  subset, at most ``limit`` of them, and only the ids asked for;
- every sample's tools are function schemas whose parameters are a JSON-schema
  object, and its environment can be built and answers an unknown tool with an
  error instead of raising;
- ``gold_view`` gives each sample's gold as a JSON object, which the run keeps
  in its inputs.jsonl with the sample's first messages and tools;
- the oracle plays every sample to a passing score through the real ``Runner``
  (the machinery of ``--model oracle``), each score's fields in range;
- ``explain_failure`` gives text (never raises) for a failed score of each sample;
- ``aggregate`` turns those records into finite numbers that its estimators
  recompute, and gives no score where no record was scored.

Each failed check raises ``ConformanceError`` (an ``AssertionError``) in one line
naming the check and the adapter; a passing run returns a ``ConformanceReport``.
The check uses the instance a run uses, the one registered under the adapter's
name (the runner scores with it): a class not registered under its name is
registered (by ``module:Class``) while the check runs, so it must be importable.
"""

from __future__ import annotations

import asyncio
import json
import math
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from harness.store.records import INFRA_ERROR
from harness.task.contract import (
    Adapter,
    BenchmarkResult,
    Environment,
    RecordView,
    Sample,
    Services,
)
from harness.types import ToolCall, ToolResult

# The user simulator and judge the check plays with: the offline stand-ins
# (``--user-model scripted``, ``--judge-model stub``), so it needs no key.
OFFLINE_USER = "scripted"
OFFLINE_JUDGE = "stub"
# A tool name no benchmark declares: its environment must answer it with an error.
UNKNOWN_TOOL = "conformance_unknown_tool"


class ConformanceError(AssertionError):
    """One failed check: ``check`` is its name, the message one sentence."""

    def __init__(self, check: str, adapter: str, problem: str):
        super().__init__(f"check '{check}' failed for adapter '{adapter}': {problem}")
        self.check = check
        self.adapter = adapter


@dataclass
class ConformanceReport:
    """What ``check_adapter`` checked: the checks passed, in order, and on what."""

    adapter: str
    subsets: list[str]
    samples: int  # samples the oracle played
    passed: list[str] = field(default_factory=list)
    # headline metrics whose estimator recomputed the official value
    estimators_checked: list[str] = field(default_factory=list)


class _Checker:
    """Runs the checks of one adapter, recording each that passes."""

    def __init__(self, adapter: Adapter):
        self.adapter = adapter
        self.name = adapter.name or type(adapter).__name__
        self.passed: list[str] = []
        self.estimators_checked: list[str] = []

    def fail(self, check: str, problem: str) -> ConformanceError:
        return ConformanceError(check, self.name, problem)

    def require(self, check: str, condition: bool, problem: str) -> None:
        if not condition:
            raise self.fail(check, problem)

    def done(self, check: str) -> None:
        if check not in self.passed:
            self.passed.append(check)

    def call(self, check: str, method: str, *args: object, **kwargs: object) -> Any:
        """``adapter.method(...)``; an exception in it is that check's failure."""
        try:
            return getattr(self.adapter, method)(*args, **kwargs)
        except ConformanceError:
            raise
        except Exception as exc:
            raise self.fail(check, f"{method}() raised {type(exc).__name__}: {exc}") from exc


def check_adapter(
    adapter_or_class: Adapter | type[Adapter],
    *,
    subset: str | Sequence[str] | None = None,
    limit: int = 2,
    data_dir: Path | None = None,
    options: Mapping[str, object] | None = None,
    user_model: str = OFFLINE_USER,
    judge_model: str = OFFLINE_JUDGE,
) -> ConformanceReport:
    """Check an adapter against the task contract; ConformanceError on the first
    check that fails. ``subset``: the subset(s) to load and play (default: the first
    one that can run here); ``limit``: samples per subset; ``data_dir`` and
    ``options``: as a suite entry gives them to ``load``; ``user_model`` and
    ``judge_model``: the adapter's built-in stand-ins named so (offline by default)."""
    cls = adapter_or_class if isinstance(adapter_or_class, type) else type(adapter_or_class)
    name = getattr(cls, "name", "") or cls.__name__
    if not issubclass(cls, Adapter):
        raise ConformanceError("adapter", name, "it is not a harness.task.contract.Adapter")
    if not getattr(cls, "name", ""):
        raise ConformanceError("adapter", name, "its class attribute 'name' is empty")
    if limit < 1:
        raise ConformanceError("limit", name, f"limit must be at least 1, not {limit}")
    with _registered_instance(cls) as adapter:
        if not isinstance(adapter_or_class, type) and adapter_or_class is not adapter:
            raise ConformanceError(
                "adapter",
                name,
                f"a run loads and scores with the instance registered as '{name}', not this "
                f"one: pass the class or harness.task.registry.get_adapter('{name}')",
            )
        return _check(
            _Checker(adapter), subset, limit, data_dir, options or {}, user_model, judge_model
        )


def _check(
    checker: _Checker,
    subset: str | Sequence[str] | None,
    limit: int,
    data_dir: Path | None,
    options: Mapping[str, object],
    user_model: str,
    judge_model: str,
) -> ConformanceReport:
    checker.done("adapter")
    known = _check_subsets(checker)
    _check_official_set(checker, known)
    _check_options(checker, options)
    _check_versions(checker)
    chosen = _chosen_subsets(checker, known, subset)
    samples: list[Sample] = []
    for name in chosen:
        samples += _check_load(checker, name, limit, data_dir, options)
    for sample in samples:
        _check_tools(checker, sample)
        _check_environment(checker, sample)
    for sample in samples:
        _check_gold_view(checker, sample)
    services = _services(checker, user_model, judge_model)
    records = _oracle_records(checker, samples, options, services)
    _check_explanations(checker, samples, records)
    _check_aggregate(checker, records)
    return ConformanceReport(
        checker.adapter.name,
        chosen,
        len(samples),
        list(checker.passed),
        checker.estimators_checked,
    )


@contextmanager
def _registered_instance(cls: type[Adapter]) -> Iterator[Adapter]:
    """The adapter instance a run uses: the one registered under the class's name
    (``get_adapter``; the runner scores with it, and an adapter such as one that
    keeps its data folder from ``load`` needs one instance throughout). A class not
    registered under its name is registered (``module:Class``) while the check runs."""
    from harness.task import registry

    name = cls.name
    try:
        found = registry.find_adapter(name)
    except Exception:  # a broken registration of the name: ours replaces it for now
        found = None
    if found is not None and type(found) is cls:
        yield found
        return
    if "<locals>" in cls.__qualname__:
        raise ConformanceError(
            "adapter",
            name,
            f"a run finds adapters by module:Class, and {cls.__qualname__} is not importable",
        )
    before = registry._registered.get(name)  # restored after: the registry has no removal
    registry.register_adapter(name, f"{cls.__module__}:{cls.__qualname__}")
    try:
        yield registry.get_adapter(name)
    finally:
        if before is None:
            registry._registered.pop(name, None)
            registry.get_adapter.cache_clear()
        else:
            registry.register_adapter(name, before)


# --- the adapter's declarations --------------------------------------------------------


def _check_subsets(checker: _Checker) -> list[str]:
    subsets = checker.call("subsets", "subsets")
    checker.require(
        "subsets", isinstance(subsets, list), f"subsets() gave {type(subsets).__name__}, not a list"
    )
    checker.require("subsets", bool(subsets), "subsets() is empty")
    bad = [s for s in subsets if not isinstance(s, str) or not s]
    checker.require("subsets", not bad, f"subsets() holds names that are not text: {bad!r}")
    repeated = sorted({s for s in subsets if subsets.count(s) > 1})
    checker.require("subsets", not repeated, f"subsets() names {', '.join(repeated)} twice")
    checker.done("subsets")
    return list(subsets)


def _check_official_set(checker: _Checker, known: list[str]) -> None:
    from harness.task.official_set import OfficialSet

    official = checker.call("official_set", "official_set")
    if official is None:
        checker.done("official_set")
        return
    checker.require(
        "official_set",
        isinstance(official, OfficialSet),
        f"official_set() gave {type(official).__name__}, not a harness.task.official_set.OfficialSet",
    )
    checker.require("official_set", bool(official.sizes), "official_set() has no subsets")
    unknown = [s for s in official.sizes if s not in known]
    checker.require(
        "official_set", not unknown, f"official_set() names unknown subsets {unknown!r}"
    )
    bad = {
        s: n
        for s, n in official.sizes.items()
        if not isinstance(n, int) or isinstance(n, bool) or n < 1
    }
    checker.require("official_set", not bad, f"official_set() sizes are not positive: {bad!r}")
    checker.require(
        "official_set",
        isinstance(official.version, str) and bool(official.version),
        "official_set() names no data version",
    )
    checker.done("official_set")


def _check_options(checker: _Checker, options: Mapping[str, object]) -> None:
    known = checker.call("known_options", "known_options")
    checker.require("known_options", isinstance(known, Mapping), "known_options() is not a mapping")
    for name, description in known.items():
        checker.require(
            "known_options",
            isinstance(name, str) and bool(name),
            f"known_options() has a name that is not text: {name!r}",
        )
        checker.require(
            "known_options",
            isinstance(description, str) and bool(description.strip()),
            f"option '{name}' has no description",
        )
        checker.require(
            "known_options",
            "\n" not in description.strip(),
            f"option '{name}' is described in more than one line",
        )
    # The options this check loads with must pass the adapter's own check, as a
    # suite entry's do before any work starts.
    checker.call("known_options", "check_options", options, "conformance")
    checker.done("known_options")


def _check_versions(checker: _Checker) -> None:
    versions = checker.call("versions", "versions")
    checker.require("versions", isinstance(versions, Mapping), "versions() is not a mapping")
    bad = {k: v for k, v in versions.items() if not isinstance(k, str) or not isinstance(v, str)}
    checker.require("versions", not bad, f"versions() holds values that are not strings: {bad!r}")
    checker.done("versions")


def _chosen_subsets(
    checker: _Checker, known: list[str], subset: str | Sequence[str] | None
) -> list[str]:
    if subset is None:
        runnable = [s for s in known if checker.call("load", "unavailable_reason", s) is None]
        checker.require("load", bool(runnable), "no subset can run here (unavailable_reason)")
        return runnable[:1]
    chosen = [subset] if isinstance(subset, str) else list(subset)
    unknown = [s for s in chosen if s not in known]
    checker.require("load", not unknown, f"subset(s) {unknown!r} are not in subsets()")
    return chosen


# --- samples ------------------------------------------------------------------------------


def _check_load(
    checker: _Checker,
    subset: str,
    limit: int,
    data_dir: Path | None,
    options: Mapping[str, object],
) -> list[Sample]:
    where = f"load('{subset}')"
    samples = checker.call(
        "load", "load", subset, limit=limit, data_dir=data_dir, options=dict(options)
    )
    checker.require("load", isinstance(samples, list), f"{where} gave no list")
    checker.require("load", bool(samples), f"{where} gave no sample")
    checker.require(
        "load", len(samples) <= limit, f"{where} gave {len(samples)} samples for limit {limit}"
    )
    for sample in samples:
        checker.require(
            "load", isinstance(sample, Sample), f"{where} gave a {type(sample).__name__}"
        )
        checker.require(
            "load",
            isinstance(sample.id, str) and bool(sample.id),
            f"{where} gave a sample id that is not text: {sample.id!r}",
        )
        checker.require(
            "load",
            sample.benchmark == checker.adapter.name,
            f"{where} gave sample {sample.id} of benchmark '{sample.benchmark}'",
        )
        checker.require(
            "load",
            sample.subset == subset,
            f"{where} gave sample {sample.id} of subset '{sample.subset}'",
        )
    ids = [s.id for s in samples]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    checker.require("load", not repeated, f"{where} repeats sample ids {', '.join(repeated)}")
    checker.done("load")
    # ids: loading the last of them alone gives exactly that one.
    wanted = ids[-1]
    only = checker.call(
        "load ids", "load", subset, ids=[wanted], data_dir=data_dir, options=dict(options)
    )
    got = [s.id for s in only] if isinstance(only, list) else only
    checker.require("load ids", got == [wanted], f"load('{subset}', ids=['{wanted}']) gave {got!r}")
    checker.done("load ids")
    return samples


def _check_tools(checker: _Checker, sample: Sample) -> None:
    where = f"sample {sample.key}"
    checker.require("tools", isinstance(sample.tools, list), f"{where}: tools is not a list")
    names = []
    for tool in sample.tools:
        problem = _tool_problem(tool)
        checker.require("tools", problem is None, f"{where}: {problem}")
        names.append(tool["function"]["name"])
    repeated = sorted({n for n in names if names.count(n) > 1})
    checker.require("tools", not repeated, f"{where} declares tools {', '.join(repeated)} twice")
    messages = sample.initial_messages
    checker.require(
        "tools",
        isinstance(messages, list) and all(isinstance(m, dict) and m.get("role") for m in messages),
        f"{where}: initial_messages are not messages with a role",
    )
    checker.done("tools")


def _tool_problem(tool: object) -> str | None:
    """Why a tool is not an OpenAI-style function schema, or None."""
    if not isinstance(tool, dict) or tool.get("type") != "function":
        return f"a tool is not {{'type': 'function', ...}}: {str(tool)[:80]}"
    function = tool.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return f"a tool has no function name: {str(tool)[:80]}"
    name = function["name"]
    if not name:
        return "a tool has an empty name"
    if "description" in function and not isinstance(function["description"], str):
        return f"tool '{name}' has a description that is not text"
    parameters = function.get("parameters", {"type": "object"})
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        return f"tool '{name}' parameters are not a JSON-schema object"
    properties = parameters.get("properties", {})
    if not isinstance(properties, dict) or not all(
        isinstance(p, dict) for p in properties.values()
    ):
        return f"tool '{name}' properties are not a mapping of schemas"
    required = parameters.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return f"tool '{name}' 'required' is not a list of names"
    return None


def _check_environment(checker: _Checker, sample: Sample) -> None:
    where = f"sample {sample.key}"
    try:
        environment = sample.make_environment()
    except Exception as exc:
        raise checker.fail(
            "environment", f"{where}: make_environment() raised {type(exc).__name__}: {exc}"
        ) from exc
    checker.require(
        "environment",
        isinstance(environment, Environment),
        f"{where}: make_environment() gave a {type(environment).__name__}, not an Environment",
    )
    call = ToolCall(id="conformance-1", name=UNKNOWN_TOOL, arguments={})
    try:
        result = asyncio.run(environment.execute(call))
    except Exception as exc:
        raise checker.fail(
            "environment",
            f"{where}: an unknown tool raised {type(exc).__name__} instead of a ToolResult error",
        ) from exc
    checker.require(
        "environment",
        isinstance(result, ToolResult) and result.is_error,
        f"{where}: an unknown tool was not answered with ToolResult(is_error=True)",
    )
    checker.done("environment")


def _check_gold_view(checker: _Checker, sample: Sample) -> None:
    view = checker.call("gold view", "gold_view", sample)
    where = f"gold_view of {sample.key}"
    checker.require("gold view", isinstance(view, dict), f"{where} is not a dict")
    try:
        json.dumps(view, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise checker.fail("gold view", f"{where} is not plain JSON ({exc})") from None
    checker.done("gold view")


def _check_explanations(
    checker: _Checker, samples: list[Sample], records: list[dict[str, Any]]
) -> None:
    """explain_failure on each oracle trajectory given a failed score: text, no exception."""
    from harness.types import Score, Trajectory

    by_key = {record["key"].rpartition("#")[0]: record for record in records}
    for sample in samples:
        record = by_key[sample.key]
        stored = Score.from_dict(record["score"])
        failed = Score(False, 0.0, details=dict(stored.details))
        trajectory = Trajectory.from_dict(record.get("trajectory") or {})
        text = checker.call("explanation", "explain_failure", sample, trajectory, failed)
        checker.require(
            "explanation",
            isinstance(text, str),
            f"explain_failure of {sample.key} gave {type(text).__name__}, not text",
        )
    checker.done("explanation")


# --- the oracle through the runner -----------------------------------------------------------


def _services(checker: _Checker, user_model: str, judge_model: str) -> Services:
    """The services an offline run gives: the adapter's built-in stand-ins."""
    adapter = checker.adapter
    user_client = checker.call("oracle", "builtin_client", "user", user_model)
    judge_client = checker.call("oracle", "builtin_client", "judge", judge_model)
    return Services(
        user_client=user_client,
        user_model=user_model if adapter.needs_user_model else None,
        judge_client=judge_client,
        judge_model=judge_model if adapter.needs_judge_model else None,
    )


def _oracle_records(
    checker: _Checker, samples: list[Sample], options: Mapping[str, object], services: Services
) -> list[dict[str, Any]]:
    """One trial of every sample with the adapter's oracle, through the Runner into a
    temporary run folder (what ``harness run --model oracle`` does), read back."""
    from harness.run.runner import OK, Runner
    from harness.store.inputs import read_inputs
    from harness.store.run_store import RunStore
    from harness.strategies.plain import PlainStrategy
    from harness.types import SamplingParams

    with tempfile.TemporaryDirectory(prefix="conformance-") as folder:
        store = RunStore(Path(folder) / "run")
        store.write_manifest({"run_id": "conformance", "model": {"name": "oracle"}})
        store.open_for_append()
        try:
            runner = Runner(
                store,
                PlainStrategy(),
                checker.adapter.oracle,
                services,
                SamplingParams(),
                concurrency=4,
                load_options={s.key: dict(options) for s in samples},
            )
            asyncio.run(runner.run(samples, 1))
        finally:
            store.close()
        records = list(store.records().values())
        kept = read_inputs(store.root)
    for sample in samples:
        checker.require(
            "gold view",
            sample.key in kept and kept[sample.key].gold == checker.adapter.gold_view(sample),
            f"the run kept no input with the gold view of {sample.key}",
        )
    checker.require(
        "oracle", len(records) == len(samples), f"{len(records)} records for {len(samples)} samples"
    )
    for record in records:
        where = f"the oracle's record of {record['key']}"
        if record.get("status") != OK or record.get("error"):
            error = record.get("error") or {}
            raise checker.fail(
                "oracle",
                f"{where} is {record.get('status')}: {error.get('type')}: "
                f"{str(error.get('message'))[:300]}",
            )
        score = record.get("score") or {}
        checker.require("oracle", bool(score), f"{where} has no score")
        problem = _score_problem(score)
        checker.require("score range", problem is None, f"{where}: {problem}")
        checker.require(
            "oracle",
            score.get("passed") is True and not score.get("excluded"),
            f"{where} did not pass (reward {score.get('reward')}, details "
            f"{str(score.get('details'))[:200]})",
        )
    checker.done("oracle")
    checker.done("score range")
    return records


def _score_problem(score: Mapping[str, object]) -> str | None:
    """Why a stored score's fields are out of range, or None."""
    if not isinstance(score.get("passed"), bool):
        return f"passed is {score.get('passed')!r}, not a bool"
    reward = score.get("reward")
    if not _in_unit_range(reward):
        return f"reward {reward!r} is not a number in [0, 1]"
    progress = score.get("progress")
    if progress is not None and not _in_unit_range(progress):
        return f"progress {progress!r} is not a number in [0, 1]"
    for name in ("tool_tp", "tool_fp", "tool_fn"):
        value = score.get(name)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 0
        ):
            return f"{name} {value!r} is not a count"
    if not isinstance(score.get("details", {}), dict):
        return "details is not a mapping"
    return None


def _in_unit_range(value: object) -> bool:
    return _is_number(value) and 0.0 <= float(value) <= 1.0


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# --- aggregation ------------------------------------------------------------------------------


def _check_aggregate(checker: _Checker, records: list[dict[str, Any]]) -> None:
    from harness.results.stats import bootstrap_replicates, by_subset, task_outcomes
    from harness.run.scoring import _record_view
    from harness.store.records import Record

    adapter = checker.adapter
    result = _aggregate(checker, [_record_view(Record.from_dict(r)) for r in records])
    headline = result.headline
    primary = adapter.reporting.primary_metric
    checker.require(
        "aggregate",
        not primary or primary in headline,
        f"the headline has no primary metric '{primary}' (keys: {sorted(headline)})",
    )
    estimators = checker.call("estimators", "estimators")
    checker.require("estimators", isinstance(estimators, Mapping), "estimators() is not a mapping")
    # The bootstrap recomputes each headline metric from per-task values; on the
    # oracle's records it must give the official value, or no interval is shown.
    tasks = task_outcomes({r["key"]: r for r in records})
    strata = by_subset(t for t in tasks.values() if t.benchmark == adapter.name)
    for metric, estimator in estimators.items():
        if metric not in headline:
            continue  # a metric of subsets this check did not run
        try:
            value, _ = bootstrap_replicates(strata, estimator, n_boot=1)
        except Exception as exc:
            raise checker.fail(
                "estimators", f"estimator '{metric}' raised {type(exc).__name__}: {exc}"
            ) from exc
        checker.require(
            "estimators",
            math.isclose(value, headline[metric], rel_tol=1e-9, abs_tol=1e-9),
            f"estimator '{metric}' gives {value!r} where the headline has {headline[metric]!r}",
        )
        checker.estimators_checked.append(metric)
    checker.done("estimators")
    # No score from no scored record: the same records, none of them scored.
    unscored = [
        RecordView(
            r["sample_id"],
            r["subset"],
            int(r["trial"]),
            INFRA_ERROR,
            None,
            r.get("metadata") or {},
        )
        for r in records
    ]
    empty = _aggregate(checker, unscored).headline
    scored = {k: v for k, v in empty.items() if not k.startswith("n_") and v}
    checker.require(
        "no score unscored",
        not scored,
        f"aggregate() of records none of which was scored gives {scored!r}",
    )
    checker.done("no score unscored")


def _aggregate(checker: _Checker, views: list[RecordView]) -> BenchmarkResult:
    result = checker.call("aggregate", "aggregate", views)
    checker.require(
        "aggregate",
        isinstance(result, BenchmarkResult),
        f"aggregate() gave {type(result).__name__}, not a BenchmarkResult",
    )
    checker.require(
        "aggregate",
        result.benchmark == checker.adapter.name,
        f"aggregate() names benchmark '{result.benchmark}'",
    )
    bad = {k: v for k, v in result.headline.items() if not isinstance(k, str) or not _is_number(v)}
    checker.require("aggregate", not bad, f"headline values that are not finite numbers: {bad!r}")
    checker.done("aggregate")
    return result


__all__ = ["ConformanceError", "ConformanceReport", "check_adapter"]
