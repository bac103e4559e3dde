"""BFCL-v4 entries, read with the package's own loader.

The official loader (``bfcl_eval.utils.load_dataset_entry``) does the
per-category preparation the published numbers rely on: language hints in the
function docs, the agentic answer-format system prompt, the multi-turn tool docs
of the involved classes, held-out functions of miss_func, renamed web-search ids,
and the memory prerequisite chains. We run its steps as published, in its order,
but the costly per-entry ones (the multi-turn tool docs are re-read from disk
for every entry) only on the entries a run asks for, and keep the result in a
typed ``Entry``. A test checks that a partial load equals the same entries of
a whole one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import TypeGuard

from harness.boundary.json_value import JsonList, JsonMapping, JsonObject, JsonValue
from harness.types import Message

from . import official
from .categories import Kind, kind_of


@dataclass
class Entry:
    """One BFCL entry with everything needed to run and score it."""

    id: str
    category: str
    # The user turns, each a list of messages (a held-out turn of miss_func is empty).
    turns: list[list[Message]]
    # Function docs as first offered to the model (with the language hints).
    functions: list[JsonObject]
    # Function docs as the AST checker reads them (without hints); single-turn only.
    checker_functions: list[JsonObject] = field(default_factory=list)
    # As the answer file has it: per category a list of calls, of turns, of answers.
    ground_truth: JsonValue = None
    involved_classes: list[str] = field(default_factory=list)
    initial_config: JsonObject = field(default_factory=dict)
    # Turn index -> function docs withheld until that turn (miss_func).
    missed_function: dict[int, list[JsonObject]] = field(default_factory=dict)
    scenario: str | None = None
    # Memory: the prerequisite conversations run before the question, in order.
    prerequisites: list[Entry] = field(default_factory=list)

    def gold_items(self) -> JsonList:
        """The answer file's list (calls, turns or answers); [] when there is none."""
        if not self.ground_truth:
            return []
        if not isinstance(self.ground_truth, list):
            raise ValueError(f"{self.id}: the ground truth is not a list")
        return self.ground_truth

    def gold_turns(self) -> list[list[str]]:
        """Multi-turn: each turn's gold calls as execution strings."""
        turns = self.gold_items()
        if not all(_is_texts(turn) for turn in turns):
            raise ValueError(f"{self.id}: the ground truth is not a list of turns of calls")
        return [turn for turn in turns if _is_texts(turn)]


def _category_file_entries(category: str, include_prereq: bool) -> list[JsonObject]:
    """The category's raw entries as the official ``load_dataset_entry`` has them
    before its per-entry steps: the prompt file read, web-search ids renamed,
    memory prerequisite chains linked (those steps are cheap and whole-file)."""
    utils = official.module("bfcl_eval.utils")
    kind = kind_of(category)
    if kind is Kind.WEB_SEARCH:
        entries = utils.load_file(utils.PROMPT_PATH / f"{utils.VERSION_PREFIX}_web_search.json")
        return utils.process_web_search_test_case(entries, category)
    if kind is Kind.MEMORY:
        entries = utils.load_file(utils.PROMPT_PATH / f"{utils.VERSION_PREFIX}_memory.json")
        for scenario in utils.MEMORY_SCENARIO_NAME:
            entries = utils.process_memory_test_case(
                entries, category, scenario, include_prereq=include_prereq
            )
        return entries
    return utils.load_file(utils.PROMPT_PATH / f"{utils.VERSION_PREFIX}_{category}.json")


def _prepare(category: str, entries: list[JsonObject], hints: bool) -> list[JsonObject]:
    """The official loader's per-entry steps, on the chosen entries only: the
    agentic answer format, the multi-turn tool docs (re-read per entry: the
    costly part, hence done only for what runs), the language hints."""
    utils = official.module("bfcl_eval.utils")
    entries = utils.process_agentic_test_case(entries)
    entries = utils.populate_test_cases_with_predefined_functions(entries)
    if hints:
        entries = utils.add_language_specific_hint_to_function_doc(entries)
    if kind_of(category) is Kind.WEB_SEARCH:
        # The official generation step sets this per entry (show_snippet off for no_snippet).
        entries = utils.populate_initial_settings_for_web_search_test_cases(entries)
    return entries


@dataclass(frozen=True)
class _Selection:
    """Which questions of a category to load: all, some ids, the first few."""

    ids: frozenset[str] | None = None
    limit: int | None = None

    def choose(self, questions: list[JsonObject]) -> list[int]:
        """Positions (in file order) of the chosen questions."""
        positions = [
            index
            for index, raw in enumerate(questions)
            if self.ids is None or raw["id"] in self.ids
        ]
        return positions if self.limit is None else positions[: self.limit]


def _ground_truth(category: str) -> list[JsonObject] | None:
    if kind_of(category) in (Kind.IRRELEVANCE, Kind.RELEVANCE):
        return None  # these categories have no answer file
    return official.module("bfcl_eval.utils").load_ground_truth_entry(category)


# The fields of a raw entry, checked once here: a file that does not have
# these shapes is refused (ValueError) rather than read half-way.


def _is_objects(value: JsonValue) -> TypeGuard[list[JsonObject]]:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def _is_turns(value: JsonValue) -> TypeGuard[list[list[JsonObject]]]:
    return isinstance(value, list) and all(_is_objects(turn) for turn in value)


def _is_texts(value: JsonValue) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _text(raw: JsonMapping, key: str) -> str:
    value = raw[key]
    if not isinstance(value, str):
        raise ValueError(f"entry field {key!r} is not text: {value!r}")
    return value


def _objects(value: JsonValue, what: str) -> list[JsonObject]:
    """A list of objects, absent (None or empty) as []."""
    if not value:
        return []
    if not _is_objects(value):
        raise ValueError(f"entry field {what!r} is not a list of objects")
    return value


def _texts(value: JsonValue, what: str) -> list[str]:
    if not value:
        return []
    if not _is_texts(value):
        raise ValueError(f"entry field {what!r} is not a list of texts")
    return value


def _entry_id(raw: JsonMapping) -> str:
    return _text(raw, "id")


def _make_entry(raw: JsonObject, category: str) -> Entry:
    missed_raw = raw.get("missed_function") or {}
    if not isinstance(missed_raw, dict):
        raise ValueError("entry field 'missed_function' is not an object")
    missed = {int(turn): _objects(docs, "missed_function") for turn, docs in missed_raw.items()}
    question = raw["question"]
    if not _is_turns(question):
        raise ValueError("entry field 'question' is not a list of turns")
    initial_config = raw.get("initial_config") or {}
    if not isinstance(initial_config, dict):
        raise ValueError("entry field 'initial_config' is not an object")
    scenario = raw.get("scenario")
    if scenario is not None and not isinstance(scenario, str):
        raise ValueError("entry field 'scenario' is not text")
    return Entry(
        id=_entry_id(raw),
        category=category,
        turns=question,
        functions=_objects(raw.get("function"), "function"),
        involved_classes=list(_texts(raw.get("involved_classes"), "involved_classes")),
        initial_config=initial_config,
        missed_function=missed,
        scenario=scenario,
    )


def _with_hints(plain: list[JsonObject]) -> list[JsonObject]:
    """The entries as the official loader gives them with language hints (the
    same step applied to a copy of the entries loaded without them)."""
    utils = official.module("bfcl_eval.utils")
    return utils.add_language_specific_hint_to_function_doc(json.loads(json.dumps(plain)))


@cache
def _load_category(category: str, selection: _Selection = _Selection()) -> tuple[Entry, ...]:
    kind = kind_of(category)
    single_turn = kind in (Kind.AST, Kind.IRRELEVANCE, Kind.RELEVANCE)
    file_entries = _category_file_entries(category, include_prereq=kind is Kind.MEMORY)
    questions = [raw for raw in file_entries if "prereq" not in _entry_id(raw)]
    positions = selection.choose(questions)
    chosen = [questions[index] for index in positions]
    needed = {dep for raw in chosen for dep in _texts(raw.get("depends_on"), "depends_on")}
    # Prerequisites stay in file order, before the questions, as the official loader has them.
    chosen_raw = [raw for raw in file_entries if _entry_id(raw) in needed] + chosen

    plain: list[JsonObject] = []
    if single_turn:
        # The AST checker reads the docs without hints, the model sees them with.
        plain = _prepare(category, chosen_raw, hints=False)
        raw_entries = _with_hints(plain)
    else:
        raw_entries = _prepare(category, chosen_raw, hints=True)
    prereqs = {
        _entry_id(raw): _make_entry(raw, category)
        for raw in raw_entries
        if "prereq" in _entry_id(raw)
    }
    prepared = [raw for raw in raw_entries if "prereq" not in _entry_id(raw)]

    answers = _ground_truth(category)
    if answers is not None and len(answers) != len(questions):
        raise ValueError(f"{category}: {len(questions)} entries but {len(answers)} answers")

    plain_docs = {_entry_id(raw): _objects(raw.get("function"), "function") for raw in plain}

    entries = []
    for index, raw in zip(positions, prepared, strict=True):
        entry = _make_entry(raw, category)
        # Prompt and answer files are aligned by position (some answer ids differ).
        if answers is not None:
            entry.ground_truth = answers[index]["ground_truth"]
        entry.checker_functions = plain_docs.get(entry.id, [])
        depends_on = _texts(raw.get("depends_on"), "depends_on")
        entry.prerequisites = [prereqs[dep] for dep in depends_on]
        entries.append(entry)
    return tuple(entries)


def load_entries(
    category: str, ids: list[str] | None = None, limit: int | None = None
) -> list[Entry]:
    """The entries of one category in file order: those with the given ids, at
    most ``limit`` of them. Only the chosen entries are prepared (a suite with
    ``limit: 2`` does not pay for the whole category). Entries are shared between
    samples and loads: treat them as read-only (copy before changing anything)."""
    selection = _Selection(ids=None if ids is None else frozenset(ids), limit=limit)
    return list(_load_category(category, selection))
