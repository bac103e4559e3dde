"""The BFCL-v4 adapter: every category of the leaderboard as a subset.

- Single-turn categories (AST, irrelevance, relevance): one reply, its calls
  recorded and checked, never executed (single_turn.py).
- Multi-turn: scripted user turns against fresh simulator instances; scored by a
  safe re-implementation of the official checker (multi_turn.py).
- Memory: each question's episode first plays its scenario's prerequisite
  conversations; web search: one question with live searches; both scored by the
  official answer checker (agentic.py).

Load option ``mode``: "fc" (default; tools sent as OpenAI function schemas,
calls read from the tool calls) or "prompt" (BFCL's own prompt mode through
``prompt_format``: tools in the system prompt, calls read from the reply text).
Scoring also reads a run as prompt mode when ``services.options["prompt_mode"]``
says so (``--prompt-mode``; regrading takes it from the manifest). The
transcript is never used to guess the mode: an FC reply whose text repeats its
calls is still an FC reply, as in BFCL.

Decoding and turn rules follow BFCL's handlers (decode.py): a multi-turn reply
that does not decode ends the user turn without executing anything.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from harness.boundary.json_value import JsonValue
from harness.boundary.tool_budget import run_tool_call
from harness.errors import ConfigError
from harness.models.base import ModelClient
from harness.models.prompt_format import PromptFormat
from harness.task.contract import (
    Adapter,
    BenchmarkResult,
    Environment,
    EpisodeLimits,
    RecordView,
    Reporting,
    Sample,
    Services,
    UserSource,
)
from harness.task.estimators import Estimator
from harness.task.official_set import OfficialSet
from harness.types import Score, Trajectory

from .categories import ALL_CATEGORIES, CATEGORY_SIZES, Kind, kind_of

if TYPE_CHECKING:
    from harness.task.contract import FeedbackRules

    from .data import Entry

MODES = ("fc", "prompt")
# Time budget for replaying one multi-turn entry's calls when scoring.
SCORING_TIMEOUT_S = 120.0

# BFCL ends a turn's step loop once the model has made more than 20 calling
# steps (MAXIMUM_STEP_LIMIT = 20, checked after each step), so the 21st calling
# step is the last; a 21st step that answers in text ends the turn normally.
MAX_STEPS_PER_TURN = 20 + 1


def _missing_modules(*names: str) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


def _steps_per_turn(options: Mapping[str, object]) -> int:
    """The per-turn step cap of multi-turn entries. BFCL's own is 21; a lower one
    (option ``max_steps_per_turn``) is not BFCL's protocol: it exists to keep a
    slow model's smoke runs short, and the suite's options record it."""
    value = options.get("max_steps_per_turn", MAX_STEPS_PER_TURN)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(
            f"bfcl option max_steps_per_turn must be a positive integer, got {value!r}"
        )
    return value


def _single_turn_limits() -> EpisodeLimits:
    return EpisodeLimits(single_step=True, max_steps=None, wall_time_s=None)


def _multi_step_limits(max_steps_per_turn: int = MAX_STEPS_PER_TURN) -> EpisodeLimits:
    from .decode import fc_reply_undecodable

    # BFCL has no cap on total steps or time, only the per-turn step cap; a
    # reply it cannot decode ends the turn.
    return EpisodeLimits(
        max_steps_per_turn=max_steps_per_turn,
        max_steps=None,
        wall_time_s=None,
        reply_ends_turn=fc_reply_undecodable,
    )


def _environment(entry: Entry) -> Environment:
    from .multi_turn import BFCLEnvironment

    return BFCLEnvironment(entry)


def _scripted_user(entry: Entry, env: Environment, services: Services) -> UserSource:
    from .multi_turn import scripted_user

    return scripted_user(entry)


def _memory_user(entry: Entry, env: Environment, services: Services) -> UserSource:
    from .agentic import memory_user

    return memory_user(entry, env, MAX_STEPS_PER_TURN)


class BFCLAdapter(Adapter):
    name = "bfcl"
    reporting = Reporting(
        label="BFCL-v4",
        primary_metric="overall",
        primary_quantity="pass rate",
        table_order=10,
        run_metric="overall_run",
    )

    def subsets(self) -> list[str]:
        return list(ALL_CATEGORIES)

    def known_options(self) -> dict[str, str]:
        return {
            "mode": "fc (default: tools as function schemas) or prompt (BFCL's prompt mode)",
            "max_steps_per_turn": f"multi-turn step cap per user turn (BFCL's: {MAX_STEPS_PER_TURN})",
        }

    def versions(self) -> dict[str, str]:
        from .official import package_version

        return {"bfcl-eval": package_version(), "data": "BFCL_v4"}

    def metric_subsets(self, metric: str) -> tuple[str, ...] | None:
        from .aggregate import GROUPS, categories_of, overall_categories

        if metric in GROUPS:
            return tuple(categories_of(metric))
        if metric in ("overall", "overall_run"):
            return tuple(overall_categories())
        return None

    def official_set(self) -> OfficialSet:
        from .aggregate import overall_categories
        from .official import package_version

        sizes = {name: CATEGORY_SIZES[name] for name in overall_categories()}
        return OfficialSet(sizes, f"BFCL_v4 (bfcl-eval {package_version()})")

    def unavailable_reason(self, subset: str) -> str | None:
        if subset == "memory_kv" and _missing_modules("rank_bm25"):
            return "memory_kv needs the package rank-bm25 (imported by the official memory backend)"
        if subset == "memory_vector":
            missing = _missing_modules("sentence_transformers", "faiss")
            if missing:
                return f"memory_vector needs {', '.join(missing)} (extra 'memory-vector') and the all-MiniLM-L6-v2 model"
        if kind_of(subset) is Kind.WEB_SEARCH:
            if not os.environ.get("SERPAPI_API_KEY"):
                return "web search needs SERPAPI_API_KEY (live SerpAPI searches and page fetches)"
            missing = _missing_modules("serpapi", "bs4", "html2text", "requests")
            if missing:
                return f"web search needs the packages {', '.join(missing)}"
        return None

    # ------------------------------------------------------------ loading

    def load(
        self,
        subset: str,
        *,
        limit: int | None = None,
        ids: list[str] | None = None,
        data_dir: Path | None = None,
        options: dict[str, object] | None = None,
    ) -> list[Sample]:
        from .data import load_entries

        if subset not in ALL_CATEGORIES:
            raise ConfigError(f"unknown BFCL category: {subset}")
        self.check_options(options or {})
        mode = (options or {}).get("mode", "fc")
        if not isinstance(mode, str) or mode not in MODES:
            raise ConfigError(f"bfcl option mode must be one of {MODES}, got {mode!r}")
        steps = _steps_per_turn(options or {})
        entries = load_entries(subset, ids, limit)
        return [self._sample(entry, mode, steps) for entry in entries]

    def _sample(self, entry: Entry, mode: str, steps_per_turn: int = MAX_STEPS_PER_TURN) -> Sample:
        from .tools import openai_tools

        kind = kind_of(entry.category)
        common = functools.partial(
            Sample,
            id=entry.id,
            benchmark=self.name,
            subset=entry.category,
            tools=openai_tools(entry.functions),
            gold=entry,
            metadata={"mode": mode, "kind": kind.value},
        )
        if kind in (Kind.AST, Kind.IRRELEVANCE, Kind.RELEVANCE):
            return common(
                initial_messages=copy.deepcopy(entry.turns[0]),
                limits=_single_turn_limits(),
            )
        make_user = _memory_user if kind is Kind.MEMORY else _scripted_user
        limits = _multi_step_limits(steps_per_turn)
        # Memory: the step cap ends only the conversation (MemoryConversations).
        limits.step_cap_ends_episode = kind is not Kind.MEMORY
        return common(
            initial_messages=[],
            make_environment=functools.partial(_environment, entry),
            make_user=functools.partial(make_user, entry),
            limits=limits,
        )

    # ------------------------------------------------------------ scoring

    async def score(self, sample: Sample, trajectory: Trajectory, services: Services) -> Score:
        entry = sample.gold
        prompt_mode = self.is_prompt_mode(sample, trajectory, services)
        kind = kind_of(entry.category)
        if kind in (Kind.AST, Kind.IRRELEVANCE, Kind.RELEVANCE):
            from .single_turn import score_single_turn

            result = score_single_turn(entry, trajectory, prompt_mode)
        elif kind is Kind.MULTI_TURN:
            from .multi_turn import score_multi_turn

            # Replays the model's calls: in the tool worker, as the episode ran them.
            result = await run_tool_call(
                score_multi_turn, entry, trajectory, prompt_mode, timeout_s=SCORING_TIMEOUT_S
            )
        else:
            from .agentic import score_agentic

            result = score_agentic(entry, trajectory, prompt_mode)
        result.details["prompt_mode"] = prompt_mode
        return result

    def expected_model_calls(self, sample: Sample) -> float:
        from .episode_length import expected_model_calls

        return expected_model_calls(sample.gold)

    def gold_view(self, sample: Sample) -> dict[str, JsonValue]:
        from .explain import gold_view

        return gold_view(sample.gold)

    def explain_failure(self, sample: Sample, trajectory: Trajectory, score: Score) -> str:
        from .explain import explain_failure

        return explain_failure(sample.gold, trajectory, score)

    @staticmethod
    def is_prompt_mode(sample: Sample, trajectory: Trajectory, services: Services) -> bool:
        """Replies are read as text (BFCL's prompt mode) when the samples were loaded
        with ``mode: prompt`` or when the run says so (``services.options["prompt_mode"]``)."""
        return sample.metadata.get("mode") == "prompt" or bool(services.options.get("prompt_mode"))

    def aggregate(self, records: list[RecordView]) -> BenchmarkResult:
        from .aggregate import aggregate_records

        return aggregate_records(records)

    def estimators(self) -> dict[str, Estimator]:
        from .aggregate import ESTIMATORS

        return ESTIMATORS

    def feedback_rules(self) -> FeedbackRules:
        from .feedback import BFCLFeedbackRules

        return BFCLFeedbackRules()

    def commands(self) -> dict[str, str]:
        return {"export-bfcl": "harness.adapters.bfcl.export_command"}

    def oracle(self, sample: Sample) -> ModelClient:
        from .oracle import OracleClient

        return OracleClient(sample.gold)

    def prompt_format(self, sample: Sample) -> PromptFormat | None:
        from .prompt_format import BFCLPromptFormat

        return BFCLPromptFormat(sample.gold)
