"""FinMCP-Bench behind the harness task interface.

One sample per benchmark item. The model sees the reconstructed tool list (the
same for every item) and is teacher-forced turn by turn (protocol.py); tool calls
are answered from the item's recordings (replay.py); the score compares tool-name
multisets (metrics.py, scoring.py).

Episode limits: the official per-turn cap is on tool calls and ends only that
turn (``EpisodeLimits.max_tool_calls_per_turn``): once a turn has executed more
than 20 calls, the next reply is recorded unexecuted and the next gold turn
follows. The replay environment also refuses calls past the cap, and scoring
counts only what the official loop would have kept.

Error items: the official script drops items flagged ``error: true``. Here they
are scored but kept out of the headline and reported in their own breakdown
(``error_items``); records that could not be scored (infrastructure errors) are
kept out too and counted. ``all_incl_errors`` includes both, an unscored record
counting as no predicted call (all its gold calls are false negatives).

Items without the labels the official evaluation reads (``scenery``, a
``diff_level`` mapping with a ``level``): ``eval/evaluation.py`` skips them (the
KeyError it raises on such an item is caught and the item left out of every
number), and so does the default protocol (load option ``missing_labels: skip``):
such records leave the headline and are reported in ``skipped_items`` (scored as
they ran), counted in the headline's ``n_skipped_unlabelled``.
``missing_labels: unknown`` scores them like any other item, under
``scenario:unknown`` / ``difficulty:unknown``; it is not the official protocol, and
a note says so. Where the official script raises an error it does not catch
(``scenery`` or ``task`` not text, ``diff_level`` not a mapping) and stops
altogether, the item is skipped the same way.

Malformed tool-call arguments (dropping.py): the official inference loop drops
the item, and so does the default protocol (load option ``malformed_arguments:
drop``): such records leave the headline and are reported in ``dropped_items``
(scored as they ran) beside ``error_items``, and counted in the headline's
``n_dropped_malformed``. ``malformed_arguments: count`` scores them like any
other item; it is not the official protocol, and the headline then carries
``n_malformed_counted`` and a note saying so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

from harness.boundary.json_value import JsonObject
from harness.errors import ConfigError
from harness.models.base import ModelClient
from harness.store.records import OK
from harness.task.contract import (
    Adapter,
    BenchmarkResult,
    Environment,
    EpisodeLimits,
    RecordView,
    Reporting,
    Sample,
    Services,
    SubsetResult,
)
from harness.task.estimators import Estimator
from harness.task.official_set import OfficialSet
from harness.types import Score, ToolSchema, Trajectory

from .data import (
    ALL,
    HF_DATASET,
    OFFICIAL_SIZES,
    SUBSET_FILES,
    DataSource,
    Item,
    item_id,
    load_source,
)
from .dropping import COUNT, DROP, OPTION, mode_option
from .gold import gold_turns, recorded_calls
from .metrics import ESTIMATORS, ItemResult, summarize, tool_names
from .oracle import GoldOracle
from .protocol import GoldHistoryUser
from .replay import TOOL_CALL_CAP, ReplayEnvironment
from .schemas import load_schema_file, merge_tools, reconstruct_tools
from .scoring import score_trajectory

# tool_call_cap: calls a turn may run before its next batch is refused; the
# official loop's 20 by default (a smaller cap is not the official protocol).
CAP_OPTION = "tool_call_cap"
# missing_labels: what happens to an item the official evaluation cannot label
# (no scenery, no diff_level.level): "skip" (official) or "unknown" (scored under
# the label "unknown"; not the official protocol).
LABELS_OPTION = "missing_labels"
SKIP, UNKNOWN = "skip", "unknown"
LABEL_MODES = (SKIP, UNKNOWN)
KNOWN_OPTIONS = {
    "data_dir": "a local copy of the dataset (else --data-dir, else the Hugging Face download)",
    "tool_schemas": "a JSON file of tool schemas, overriding the reconstructed ones by name",
    OPTION: f"{DROP} (the official loop's, default) or {COUNT} (scored as run; not official)",
    CAP_OPTION: f"tool calls per turn (the official loop's: {TOOL_CALL_CAP})",
    LABELS_OPTION: f"{SKIP} (official, default) or {UNKNOWN}: items without scenery or level",
}
INCLUDING_ERRORS = "all_incl_errors"
ERROR_ITEMS = "error_items"
DROPPED_ITEMS = "dropped_items"
SKIPPED_ITEMS = "skipped_items"
# Metadata key: why the official evaluation cannot label the item (absent when it can).
UNLABELLED = "unreadable_labels"
HEADLINE_KEYS = (
    "micro_precision",
    "micro_recall",
    "micro_f1",
    "exact_match_ordered",
    "exact_match_grouped",
    "macro_precision",
    "macro_recall",
    "macro_f1",
)


def unreadable_labels(item: Item) -> list[str]:
    """Why the official evaluation cannot label this item ([] when it can). It reads
    ``item["scenery"].split("-")``, ``item["diff_level"]["level"]`` and
    ``item.get("task", "any").replace(...)``: a missing key raises the KeyError it
    catches (the item is skipped); a value of another type raises an error it does
    not catch (the whole evaluation stops)."""
    problems = []
    if "scenery" not in item:
        problems.append("no scenery")
    elif not isinstance(item["scenery"], str):
        problems.append("scenery is not text")
    if "diff_level" not in item:
        problems.append("no diff_level")
    elif not isinstance(item["diff_level"], dict):
        problems.append("diff_level is not a mapping")
    elif "level" not in item["diff_level"]:
        problems.append("no diff_level.level")
    if "task" in item and not isinstance(item["task"], str):
        problems.append("task is not text")
    return problems


def item_metadata(item: Item) -> JsonObject:
    """What aggregation needs: the official breakdown keys and the gold call count.
    An item without a task is the official script's task "any"; an empty or
    unreadable label is "unknown" (officially an empty key, or no evaluation)."""
    scenery = str(item.get("scenery") or "")
    given = item.get("diff_level")
    diff_level: JsonObject = given if isinstance(given, dict) else {}
    task = item.get("task", "any")
    metadata: JsonObject = {
        "task": str(task or "unknown").replace(" ", "_"),
        "scenario": scenery.split("-")[0].strip() or "unknown",
        "scenery": scenery,
        "difficulty": str(diff_level.get("level") or "unknown"),
        "error_flag": bool(item.get("error", False)),
        "gold_tool_count": len(tool_names(item["messages"])),
        "gold_turns": sum(1 for m in item["messages"] if m.get("role") == "user"),
    }
    problems = unreadable_labels(item)
    if problems:
        metadata[UNLABELLED] = [*problems]
    return metadata


def _unique_ids(items: list[Item]) -> list[str]:
    """Item ids, with -2, -3... appended to repeats of the same id."""
    seen: dict[str, int] = defaultdict(int)
    ids = []
    for item in items:
        base = item_id(item)
        seen[base] += 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return ids


class FinMCPAdapter(Adapter):
    name = "finmcp"
    reporting = Reporting(
        label="FinMCP-Bench",
        primary_metric="micro_f1",
        primary_quantity="F1",
        table_order=40,
        # Items flagged error=true are left out of the micro sums (record metadata).
        estimators_need_metadata=True,
    )

    def __init__(self) -> None:
        self._sources: dict[str, DataSource] = {}
        self._tools: dict[tuple[str, str], list[ToolSchema]] = {}
        self._last_source: DataSource | None = None
        self._modes: set[str] = set()  # malformed-argument protocols of the loads
        self._caps: set[int] = set()  # per-turn tool-call caps of the loads
        self._label_modes: set[str] = set()  # missing_labels of the loads

    def known_options(self) -> dict[str, str]:
        return dict(KNOWN_OPTIONS)

    def subsets(self) -> list[str]:
        # "all" is loadable too, but it is the union of these three: listing it here
        # would run every item twice when a suite asks for every subset.
        return ["single_tool", "multi_tool", "multi_turn"]

    # -- loading -----------------------------------------------------------------

    def _source(self, local: Path | None) -> DataSource:
        key = str(local) if local is not None else f"hf:{HF_DATASET}"
        if key not in self._sources:
            self._sources[key] = load_source(local)
        self._last_source = self._sources[key]
        return self._sources[key]

    def _tool_list(self, source: DataSource, schema_file: str | None) -> list[ToolSchema]:
        key = (source.location, schema_file or "")
        if key not in self._tools:
            tools = reconstruct_tools(source.pool)
            if schema_file:
                tools = merge_tools(tools, load_schema_file(Path(schema_file).expanduser()))
            self._tools[key] = tools
        return self._tools[key]

    def load(
        self,
        subset: str,
        *,
        limit: int | None = None,
        ids: list[str] | None = None,
        data_dir: Path | None = None,
        options: dict[str, object] | None = None,
    ) -> list[Sample]:
        options = dict(options or {})
        self.check_options(options)
        if subset not in SUBSET_FILES:
            raise ConfigError(
                f"finmcp: unknown subset '{subset}' (known: {', '.join(SUBSET_FILES)})"
            )
        mode = mode_option(options)
        self._modes.add(mode)
        cap = _cap_option(options)
        self._caps.add(cap)
        labels = _labels_option(options)
        self._label_modes.add(labels)
        local = _path_option(options, "data_dir") or data_dir
        source = self._source(Path(local).expanduser() if local else None)
        schema_file = _path_option(options, "tool_schemas")
        tools = self._tool_list(source, str(schema_file) if schema_file else None)
        items = source.subsets[subset]
        wanted = {str(i) for i in ids} if ids else None
        samples = []
        for sample_id, item in zip(_unique_ids(items), items, strict=True):
            if wanted is None or sample_id in wanted:
                sample = self._sample(sample_id, subset, item, tools, mode, cap)
                if labels != SKIP:  # only a protocol other than the official one is recorded
                    sample.metadata[LABELS_OPTION] = labels
                samples.append(sample)
        return samples if limit is None else samples[:limit]

    def _sample(
        self,
        sample_id: str,
        subset: str,
        item: Item,
        tools: list[ToolSchema],
        mode: str,
        cap: int = TOOL_CALL_CAP,
    ) -> Sample:
        turns = gold_turns(item["messages"])
        calls = recorded_calls(item["messages"])

        def make_environment() -> Environment:
            return ReplayEnvironment(calls, tools, cap)

        def make_user(environment: Environment, services: Services) -> GoldHistoryUser:
            replay = environment if isinstance(environment, ReplayEnvironment) else None
            return GoldHistoryUser(turns, replay)

        return Sample(
            id=sample_id,
            benchmark=self.name,
            subset=subset,
            tools=tools,
            initial_messages=[],
            make_environment=make_environment,
            make_user=make_user,
            limits=EpisodeLimits(max_steps=None, max_tool_calls_per_turn=cap),
            gold=item["messages"],
            metadata={
                **item_metadata(item),
                OPTION: mode,
                # Only a cap other than the official one is written into the record.
                **({CAP_OPTION: cap} if cap != TOOL_CALL_CAP else {}),
            },
        )

    # -- scoring -----------------------------------------------------------------

    def expected_model_calls(self, sample: Sample) -> float:
        from .episode_length import expected_model_calls

        return expected_model_calls(sample.gold)

    def gold_view(self, sample: Sample) -> JsonObject:
        from .explain import gold_view

        return gold_view(sample.gold)

    def explain_failure(self, sample: Sample, trajectory: Trajectory, score: Score) -> str:
        from .explain import explain_failure

        return explain_failure(score)

    async def score(self, sample: Sample, trajectory: Trajectory, services: Services) -> Score:
        score = score_trajectory(
            sample.gold,
            trajectory,
            malformed=sample.metadata.get(OPTION, DROP),
            cap=int(sample.metadata.get(CAP_OPTION, TOOL_CALL_CAP)),
            prompt_mode=bool(services.options.get("prompt_mode")),
        )
        score.details["error_flag"] = bool(sample.metadata.get("error_flag", False))
        problems = sample.metadata.get(UNLABELLED)
        if problems and sample.metadata.get(LABELS_OPTION, SKIP) == SKIP:
            # Left out as the official evaluation skips it: no tool counts for the
            # sums (the counts stay in details, as for a dropped item).
            score.details["skipped"] = "; ".join(problems)
            score.passed, score.reward, score.progress = False, 0.0, None
            score.tool_tp = score.tool_fp = score.tool_fn = None
        return score

    def estimators(self) -> dict[str, Estimator]:
        return ESTIMATORS

    def subset_estimator(self) -> Estimator:
        return ESTIMATORS["micro_f1"]

    def aggregate(self, records: list[RecordView]) -> BenchmarkResult:
        """Official metrics over "all" and each breakdown; error items apart.

        Breakdowns: ``all``, ``task:<task>``, ``scenario:<level-1 scenario>``,
        ``difficulty:<level>`` (headline records only); ``error_items`` (flagged
        items that were scored); ``dropped_items`` (items the official loop drops
        for malformed arguments, scored as they ran); ``all_incl_errors`` (every
        record, unscored ones as predicting nothing). Records of the same (item,
        trial) count once.
        """
        groups: dict[str, list[ItemResult]] = defaultdict(list)
        sample_ids: dict[str, set[str]] = defaultdict(set)
        seen: set[tuple[str, int]] = set()
        duplicates = unscored = counted_malformed = counted_unlabelled = 0
        for record in records:
            key = (record.sample_id, record.trial)
            if key in seen:  # the same item loaded through two subsets
                duplicates += 1
                continue
            seen.add(key)
            metadata = record.metadata or {}
            score = record.score if record.status == OK else None
            if score is not None:
                result = _item_result(score)
                details = score.details or {}
                # In the official order: error records first (inference failures
                # included), then the items the evaluation cannot label.
                if metadata.get("error_flag"):
                    names = [ERROR_ITEMS]
                elif details.get("dropped"):
                    names = [DROPPED_ITEMS]
                elif details.get("skipped"):
                    names = [SKIPPED_ITEMS]
                else:
                    names = _breakdown_keys(metadata)
                    counted_malformed += bool(details.get("malformed_arguments"))
                    counted_unlabelled += bool(metadata.get(UNLABELLED))
            else:
                unscored += 1
                result = _unscored(metadata)
                names = []
            for name in [*names, INCLUDING_ERRORS]:
                groups[name].append(result)
                sample_ids[name].add(record.sample_id)
        subsets = {
            name: SubsetResult(
                metrics=summarize(items),
                n_samples=len(sample_ids[name]),
                n_records=len(items),
                n_infra_errors=unscored if name == INCLUDING_ERRORS else 0,
            )
            for name, items in sorted(groups.items(), key=lambda kv: (kv[0] != ALL, kv[0]))
        }
        overall = summarize(groups.get(ALL, []))
        headline = {key: overall[key] for key in HEADLINE_KEYS}
        flagged = len(groups.get(ERROR_ITEMS, []))
        dropped = len(groups.get(DROPPED_ITEMS, []))
        modes = self._record_modes(records)
        skipped = len(groups.get(SKIPPED_ITEMS, []))
        headline["n_dropped_malformed"] = float(dropped)
        if COUNT in modes:
            headline["n_malformed_counted"] = float(counted_malformed)
        if skipped:
            headline["n_skipped_unlabelled"] = float(skipped)
        notes = [
            "Headline = micro precision/recall/F1 (the paper's TP/TR/TF1) and "
            "exact_match_ordered (the published EMR).",
            f"Headline over {len(groups.get(ALL, []))} scored record(s). Left out, as the "
            f"official script does: {flagged} record(s) of items flagged error=true "
            f"(breakdown '{ERROR_ITEMS}'), {dropped} record(s) with malformed tool-call "
            f"arguments, which the official inference loop drops (breakdown "
            f"'{DROPPED_ITEMS}'), and {unscored} record(s) without a score "
            f"(infrastructure errors); '{INCLUDING_ERRORS}' includes them all, an unscored "
            "record counting as no predicted call.",
            _protocol_note(modes, counted_malformed),
            *_labels_notes(skipped, counted_unlabelled),
            "Tool outputs are replayed from the recordings; approximate replays in this run: "
            f"{_approximate_replays(records)} (score details 'replay').",
        ]
        cap_note = _cap_note(records)
        if cap_note:
            notes.append(cap_note)
        if duplicates:
            notes.append(f"{duplicates} duplicate record(s) of the same (item, trial) ignored.")
        return BenchmarkResult(benchmark=self.name, headline=headline, subsets=subsets, notes=notes)

    # -- oracle, versions --------------------------------------------------------

    def oracle(self, sample: Sample) -> ModelClient:
        return GoldOracle(gold_turns(sample.gold))

    @staticmethod
    def _record_modes(records: list[RecordView]) -> set[str]:
        modes = {
            str((r.score.details or {}).get("malformed_protocol") or DROP)
            for r in records
            if r.score
        }
        return modes or {DROP}

    def official_set(self) -> OfficialSet:
        return OfficialSet(dict(OFFICIAL_SIZES), f"{HF_DATASET}, test/benchmark_all.json")

    def versions(self) -> dict[str, str]:
        versions = {
            "dataset": HF_DATASET,
            "tool_call_cap_per_turn": ",".join(map(str, sorted(self._caps or {TOOL_CALL_CAP}))),
            OPTION: ",".join(sorted(self._modes or {DROP})),
        }
        if self._label_modes - {SKIP}:  # only a protocol other than the official one
            versions[LABELS_OPTION] = ",".join(sorted(self._label_modes))
        if self._last_source is not None:
            versions["data_location"] = self._last_source.location
            for name, digest in sorted(self._last_source.files.items()):
                versions[f"file:{name}"] = digest
        return versions


def _path_option(options: Mapping[str, object], name: str) -> str | Path | None:
    """A path option's value (None when not given)."""
    value = options.get(name)
    if not value:
        return None
    if not isinstance(value, (str, Path)):
        raise ConfigError(f"finmcp: option {name} must be a path (got {value!r})")
    return value


def _cap_option(options: Mapping[str, object]) -> int:
    value = options.get(CAP_OPTION, TOOL_CALL_CAP)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"finmcp: option {CAP_OPTION} must be a whole number >= 1 (got {value!r})"
        )
    return value


def _labels_option(options: Mapping[str, object]) -> str:
    value = options.get(LABELS_OPTION, SKIP)
    if value not in LABEL_MODES:
        raise ConfigError(
            f"finmcp: option {LABELS_OPTION} must be one of {', '.join(LABEL_MODES)} "
            f"(got {value!r})"
        )
    return str(value)


def _labels_notes(skipped: int, counted: int) -> list[str]:
    """Said when some items lack the labels the official evaluation reads."""
    notes = []
    if skipped:
        notes.append(
            f"{skipped} record(s) of items without scenery or diff_level.level left out, as "
            f"the official evaluation skips them ({LABELS_OPTION}={SKIP}; breakdown "
            f"'{SKIPPED_ITEMS}', scored as they ran)."
        )
    if counted:
        notes.append(
            f"NOT the official protocol: {LABELS_OPTION}={UNKNOWN}; {counted} record(s) of "
            "items without scenery or diff_level.level are scored under the label 'unknown' "
            "(the official evaluation skips them)."
        )
    return notes


def _cap_note(records: list[RecordView]) -> str | None:
    """Said when a run's cap is not the official loop's."""
    caps = {int(r.metadata.get(CAP_OPTION, TOOL_CALL_CAP)) for r in records if r.metadata}
    other = sorted(caps - {TOOL_CALL_CAP})
    if not other:
        return None
    return (
        f"NOT the official protocol: {CAP_OPTION}={','.join(map(str, other))} tool calls per "
        f"turn (the official inference loop allows {TOOL_CALL_CAP})."
    )


def _protocol_note(modes: set[str], counted: int) -> str:
    if modes == {DROP}:
        return (
            f"Malformed tool-call arguments: {OPTION}={DROP} (the official protocol: "
            "the item is dropped)."
        )
    return (
        f"NOT the official protocol: {OPTION}={','.join(sorted(modes))}; {counted} item(s) "
        "with malformed tool-call arguments are scored as they ran (the official "
        "inference loop drops them)."
    )


def _item_result(score: Score) -> ItemResult:
    """The item as it ran (a dropped item's counts are in its details)."""
    details = score.details or {}
    counts = details.get("tool_counts") or {}
    return ItemResult(
        tp=int(score.tool_tp if score.tool_tp is not None else counts.get("tp", 0)),
        fp=int(score.tool_fp if score.tool_fp is not None else counts.get("fp", 0)),
        fn=int(score.tool_fn if score.tool_fn is not None else counts.get("fn", 0)),
        exact_ordered=bool(details.get("exact_match_ordered", score.passed)),
        exact_grouped=bool(details.get("exact_match_grouped", score.passed)),
    )


def _whole_number(value: object) -> int:
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"not a number: {value!r}")


def _unscored(metadata: Mapping[str, object]) -> ItemResult:
    return ItemResult(0, 0, _whole_number(metadata.get("gold_tool_count", 0)), False, False)


def _breakdown_keys(metadata: Mapping[str, object]) -> list[str]:
    return [
        ALL,
        f"task:{metadata.get('task', 'unknown')}",
        f"scenario:{metadata.get('scenario', 'unknown')}",
        f"difficulty:{metadata.get('difficulty', 'unknown')}",
    ]


def _approximate_replays(records: list[RecordView]) -> int:
    total = 0
    for record in records:
        if record.score is not None:
            total += int((record.score.details.get("replay") or {}).get("approximate", 0))
    return total
