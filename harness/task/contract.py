"""The task interface: what an adapter gives the runner, and what it gets back.

An adapter turns one benchmark into ``Sample`` objects. A sample says what the
model sees first (messages, tools), how to build a fresh environment, who plays
the user, and which per-episode limits apply. After the episode the adapter
scores the stored trajectory, and aggregates scores with the benchmark's
official formula.
"""

from __future__ import annotations

import difflib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from harness.boundary.json_value import JsonObject, JsonValue
from harness.errors import ConfigError
from harness.types import (
    AssistantTurn,
    Message,
    Score,
    ToolCall,
    ToolResult,
    ToolSchema,
    Trajectory,
    Usage,
)

if TYPE_CHECKING:
    from harness.models.base import ModelClient
    from harness.models.prompt_format import PromptFormat
    from harness.task.estimators import Estimator
    from harness.task.official_set import OfficialSet


class Environment(ABC):
    """A fresh world for one (sample, trial): answers tool calls, keeps state."""

    @abstractmethod
    async def execute(self, call: ToolCall) -> ToolResult:
        """Run one well-formed tool call. Must not raise for bad model input:
        unknown tools and bad arguments come back as ``ToolResult(is_error=True)``."""

    def execute_user_call(self, call: ToolCall) -> ToolResult:
        """Run one of the *user's* own tool calls (a benchmark where the user acts on
        the world too, e.g. dual control). Synchronous, because user simulators call
        it from inside their turn. Environments without user tools refuse."""
        return ToolResult(f"Error: the user cannot call '{call.name}' in this task.", True)

    def final_state(self) -> JsonValue:
        """A JSON-serialisable view of the end state, stored in the record (optional)."""
        return None

    # True for an environment that holds a large world (its own copy of a domain
    # database): the harness builds it and takes its final state in the tool
    # worker, off the event loop, and keeps the world out of the garbage
    # collector's passes once built (harness/boundary/collector.py). Such a world
    # must hold no reference cycle, so that dropping it frees it.
    large_state: bool = False


class WrappedEnvironment(Environment):
    """An environment around another one (monitoring, feedback, predictions).

    Forwards every call it does not override to ``inner``: the agent's tool calls,
    the user's own calls and the end state.
    """

    def __init__(self, inner: Environment):
        self.inner = inner

    async def execute(self, call: ToolCall) -> ToolResult:
        return await self.inner.execute(call)

    def execute_user_call(self, call: ToolCall) -> ToolResult:
        return self.inner.execute_user_call(call)

    def final_state(self) -> JsonValue:
        return self.inner.final_state()

    @property
    def large_state(self) -> bool:  # type: ignore[override]
        return self.inner.large_state


class NoEnvironment(Environment):
    """For samples whose tool calls are scored but never executed."""

    async def execute(self, call: ToolCall) -> ToolResult:
        return ToolResult(f"Error: tool '{call.name}' cannot be executed in this task.", True)


@dataclass
class UserTurn:
    """What the user side contributes before the agent acts again.

    ``messages`` are appended to the transcript and to the model's context.
    ``hidden`` are recorded in the transcript only (e.g. the user's own tool calls).
    ``tools`` replaces the tool list from this turn on (None keeps it).
    ``history`` replaces the model's whole context before ``messages`` are added
    (teacher forcing); it is recorded in the trajectory, not in the transcript.
    ``stop`` ends the episode after recording, with this termination reason.
    """

    messages: list[Message] = field(default_factory=list)
    hidden: list[Message] = field(default_factory=list)
    tools: list[ToolSchema] | None = None
    history: list[Message] | None = None
    stop: str | None = None
    usage: Usage | None = None


class UserSource(ABC):
    """Who speaks for the user: nobody, scripted turns, a simulator or gold history."""

    @abstractmethod
    async def next_turn(self, transcript: list[Message]) -> UserTurn | None:
        """The next user turn, or None when there is nothing more to say."""


class ScriptedTurns(UserSource):
    """Fixed user turns, one after each agent turn (scripted multi-turn, single-turn tasks)."""

    def __init__(self, turns: list[UserTurn]):
        self._turns = list(turns)
        self._next = 0

    async def next_turn(self, transcript: list[Message]) -> UserTurn | None:
        if self._next >= len(self._turns):
            return None
        turn = self._turns[self._next]
        self._next += 1
        return turn


@dataclass
class EpisodeLimits:
    """Per-episode rules. Exceeding a limit ends the episode as a scored failure.

    ``single_step``: each user turn gets exactly one model reply whose tool calls are
    recorded but not executed (single-turn function calling).
    ``max_steps_per_turn``: model replies allowed per user turn; reaching it ends
    the episode, or only the turn when ``step_cap_ends_episode`` is False (the user
    source then sees the capped turn in the transcript and decides what follows).
    ``max_tool_calls_per_turn``: once a turn has executed more than this many calls,
    the next reply's calls are recorded but not executed and the turn (not the
    episode) ends.
    ``max_messages``: messages in the transcript (for benchmarks that count steps
    as messages).
    ``max_tool_errors``: tool results flagged as errors.
    """

    single_step: bool = False
    max_steps_per_turn: int | None = None
    step_cap_ends_episode: bool = True
    max_tool_calls_per_turn: int | None = None
    max_steps: int | None = 100
    max_messages: int | None = None
    max_tool_errors: int | None = None
    max_completion_tokens: int | None = None
    wall_time_s: float | None = 1800.0
    # A benchmark's own stop rule over the transcript, checked with the limits
    # above before every model reply and every user turn: a termination reason,
    # or None to go on (for a benchmark that counts steps and errors its own way).
    stop_rule: Callable[[list[Message]], str | None] | None = None
    # A benchmark's rule that a model reply with tool calls ends the user turn
    # before any of its calls run (the reply is recorded, the next user turn
    # follows), e.g. a benchmark that ends a turn at the first reply it cannot decode.
    reply_ends_turn: Callable[[AssistantTurn], bool] | None = None
    # A benchmark whose own runner discards a simulation that its code aborted and
    # runs it again (harness/episode/attempts.py): why a finished episode is void (None: it
    # stands), and how many attempts there are in all. Void attempts are kept in the
    # trajectory (``extra["void_attempts"]``); the last attempt is scored, void or not.
    void_rule: Callable[[Trajectory], str | None] | None = None
    max_attempts: int = 1

    def to_dict(self) -> JsonObject:
        data: JsonObject = asdict(self)
        for name in ("stop_rule", "reply_ends_turn", "void_rule"):
            rule = getattr(self, name)
            data[name] = getattr(rule, "__name__", None) if rule else None
        return data


@dataclass
class Services:
    """Models and settings an adapter may need besides the model under test."""

    user_client: ModelClient | None = None
    user_model: str | None = None
    judge_client: ModelClient | None = None
    judge_model: str | None = None
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    attempt: int = 1  # the simulation's attempt (EpisodeLimits.max_attempts)


@dataclass
class Sample:
    """One task instance of a benchmark, ready to run."""

    id: str
    benchmark: str
    subset: str
    tools: list[ToolSchema]
    initial_messages: list[Message]
    make_environment: Callable[[], Environment] = NoEnvironment
    make_user: Callable[[Environment, Services], UserSource] | None = None
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    gold: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # The adapter that loaded the sample, set when a run loads it
    # (harness/run/suite_samples.py): every stage asks it, not the registry again.
    adapter: Adapter | None = field(default=None, repr=False, compare=False)

    @property
    def key(self) -> str:
        return f"{self.benchmark}/{self.subset}/{self.id}"


@dataclass
class RecordView:
    """What aggregation sees of one stored record."""

    sample_id: str
    subset: str
    trial: int
    status: str  # a record status: ok or infra_error (harness/store/records.py)
    score: Score | None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class SubsetResult:
    """Metrics and counts of one subset (category, domain, scenario...)."""

    metrics: dict[str, float]
    n_samples: int = 0
    n_records: int = 0
    n_infra_errors: int = 0
    n_excluded: int = 0  # scored, left out of the metrics by the benchmark's own rule


@dataclass
class BenchmarkResult:
    """A benchmark's aggregate: headline metrics with the official formula,
    per-subset metrics, and what was not run."""

    benchmark: str
    headline: dict[str, float]
    subsets: dict[str, SubsetResult]
    not_run: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Settings of these records that are not the benchmark's own (harness.results.nonstandard):
    # every table marks the benchmark's numbers and names them.
    nonstandard: list[str] = field(default_factory=list)
    # What the numbers were measured under that the benchmark's name does not say
    # (e.g. "user gpt-5.2"): named beside its label wherever its columns are shown.
    conditions: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.nonstandard:
            del data["nonstandard"]  # scores of standard runs read as they always did
        if not self.conditions:
            del data["conditions"]
        for subset in data["subsets"].values():
            if not subset["n_excluded"]:
                del subset["n_excluded"]  # benchmarks without the rule read as they did
        return data


def refusal(message: str) -> ToolResult:
    return ToolResult(json.dumps({"error": message}, ensure_ascii=False), True)


@dataclass
class Advice:
    rule: str
    message: str
    replace: bool = False


class FeedbackRules:
    """A benchmark's own feedback rules (``Adapter.feedback_rules()``), applied
    before the generic ones. Both hooks default to "no opinion"."""

    def precheck(self, call: ToolCall) -> tuple[str, ToolResult] | None:
        """(rule, result) to refuse ``call`` before it runs, or None to run it."""
        return None

    async def advice(
        self, call: ToolCall, message: str, probe: Environment | None
    ) -> Advice | None:
        """Advice for the error ``message`` of ``call``; ``probe`` may be asked
        about the current state (it is None where asking would cost a model call)."""
        return None


@dataclass(frozen=True)
class Reporting:
    """How tables, plots and comparisons show a benchmark (``Adapter.reporting``)."""

    # Display name in column headers and plot titles; "" means the adapter's name.
    label: str = ""
    # The headline key of the primary metric; "" means the first fractional one.
    primary_metric: str = ""
    # What kind of number the primary metric is (figures draw one kind per axis,
    # so a pass rate and an F1 never share one): "pass rate", "F1", ...
    primary_quantity: str = "score"
    # Whether recomputing the estimators needs each record's metadata (which the
    # stored scores do not carry), e.g. to leave out items the benchmark flags.
    estimators_need_metadata: bool = False
    # Where the benchmark's column goes in tables (lower first; ties by name).
    table_order: int = 100
    # Benchmarks that are task sets of one benchmark (an original set and a later,
    # fixed release of it) share a family: each has columns of its own, and
    # ``compare`` never pairs two members of a family, saying so.
    family: str = ""
    # Whether tables show pass^k per subset for every k up to the trials (computed
    # in the core, ``harness.results.stats.pass_hat_k_estimates``): "" no; "scored": over
    # each task's scored trials (unscored ones left out); "all": unscored trials
    # count as failures.
    pass_hat_k_trials: str = ""
    # The headline key of the primary metric taken over the subsets run only, when
    # the official one counts a subset not run as 0 (so a partial run's official
    # number says little of how the model did): plots of partial runs default to it.
    run_metric: str = ""

    def label_for(self, name: str) -> str:
        """The display name of the benchmark named ``name``: ``label``, else the name."""
        return self.label or name


class Adapter(ABC):
    """One benchmark behind the task interface.

    Besides its samples and scores, an adapter owns how its benchmark is reported:
    ``reporting`` (its display name, the headline key that stands for it in
    summaries, where its column goes, ...) and ``estimators()`` (how to recompute
    headline metrics from per-task values, for bootstrap intervals; its
    ``aggregate`` calls the same formulas). A benchmark may also contribute CLI
    commands and feedback rules through the hooks below; the core knows no
    benchmark by name.
    """

    name: str = ""
    reporting: ClassVar[Reporting] = Reporting()
    # Whether episodes need a simulated user / scoring needs a judge model, so the
    # runner asks for (and records) those models only where they matter.
    needs_user_model: bool = False
    needs_judge_model: bool = False
    # The judge the benchmark itself uses, when no suite or flag names one.
    default_judge_model: str | None = None

    @abstractmethod
    def subsets(self) -> list[str]:
        """Every subset this benchmark has (whether or not it can run here)."""

    def known_options(self) -> dict[str, str]:
        """The load options this benchmark takes (a suite entry's ``options``,
        ``harness score --option BENCH.KEY=VALUE``): name -> one line saying what
        it does. The core refuses every other name before any work starts
        (``check_options``), so a typo never runs the default instead."""
        return {}

    def check_options(self, options: Mapping[Any, Any], where: str = "") -> None:
        """ConfigError, in one line, for an option this benchmark does not take
        (naming the closest known one and all of them), or for a credential-named
        option whose value is not text: a held secret is masked by its text, and
        YAML reads ``api_key: 12345678`` as a number that masking would miss."""
        from harness.models.redact import is_credential_name

        prefix = f"{where}: " if where else ""
        known = self.known_options()
        for key, value in options.items():
            name = str(key)
            if not isinstance(key, str) or name not in known:
                raise ConfigError(f"{prefix}{_unknown_option(self.name, name, sorted(known))}")
            if is_credential_name(name) and not isinstance(value, str):
                raise ConfigError(
                    f"{prefix}{self.name} option '{name}' holds a credential: give it as "
                    "quoted text, so that it can be kept out of what the run writes"
                )

    @abstractmethod
    def load(
        self,
        subset: str,
        *,
        limit: int | None = None,
        ids: list[str] | None = None,
        data_dir: Path | None = None,
        options: dict[str, Any] | None = None,
    ) -> list[Sample]:
        """The first ``limit`` samples of one subset (all for None), optionally only
        the given ids. An adapter whose loading costs seconds prepares only those,
        so that a suite with ``limit: 2`` starts at once."""

    @abstractmethod
    async def score(self, sample: Sample, trajectory: Trajectory, services: Services) -> Score:
        """Score one stored trajectory (no call to the model under test)."""

    @abstractmethod
    def aggregate(self, records: list[RecordView]) -> BenchmarkResult:
        """The official aggregate over the given records."""

    @abstractmethod
    def oracle(self, sample: Sample) -> ModelClient:
        """A model that plays the sample's gold actions (to check scorers and environments)."""

    def gold_view(self, sample: Sample) -> JsonObject:
        """What the benchmark expects of ``sample``, as plain JSON for a reader
        (kept once per sample in the run's inputs.jsonl and shown beside the
        transcript): expected calls, gold actions, expected outputs, a rubric.
        Named entries, each a short value; {} when the benchmark has nothing to show."""
        return {}

    def expected_model_calls(self, sample: Sample) -> float | None:
        """An estimate of how many model calls the sample's episode makes one after
        another (its chain length: the agent's replies, and a simulated user's),
        from what the sample holds (gold actions, user turns, subset). The runner
        starts the longest episodes first, so that a long one started late does not
        end the run alone (harness/run/order.py); only the order among samples
        matters. None: unknown, counted as one call (the default keeps load order)."""
        return None

    def explain_failure(self, sample: Sample, trajectory: Trajectory, score: Score) -> str:
        """A short plain-language reason why ``score`` failed (shown next to the
        official error code), e.g. "expected 2 calls, got 1: `f` missing"; "" when
        there is nothing to add. Called only for a failed score; must not raise."""
        return ""

    def versions(self) -> dict[str, str]:
        """Package and data versions that affect this benchmark's numbers."""
        return {}

    def official_set(self) -> OfficialSet | None:
        """The benchmark's official full set: samples per subset of the headline
        formula and their data version (``harness.results.coverage``). Tables mark a number
        over less than this as partial; None: no official size is known."""
        return None

    def metric_subsets(self, metric: str) -> tuple[str, ...] | None:
        """The subsets a headline metric is computed from, when its name does not
        say (e.g. a group score over several categories); None: the subsets its
        '/'-separated name parts name, or the whole benchmark."""
        return None

    def recorded_options(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """Load options that pin, for a regrade, what a run resolved when it ran (a
        choice its options left to the machine, e.g. prompts found installed), read
        from a record's metadata. A regrade loads its samples with them, so it
        judges what the run judged; where they cannot be had, the load refuses."""
        return {}

    def needs_judge_for(self, subsets: list[str]) -> bool:
        """Whether scoring these subsets needs the judge model (a benchmark whose
        judge grades only some subsets narrows ``needs_judge_model`` here)."""
        return self.needs_judge_model

    def needs_judge_for_sample(self, sample: Sample) -> bool:
        """Whether scoring this sample may need the judge model (a benchmark whose
        judge grades only some tasks narrows ``needs_judge_for`` here)."""
        return self.needs_judge_for([sample.subset])

    def builtin_client(self, role: str, name: str) -> ModelClient | None:
        """A built-in stand-in for the user simulator or judge (``role`` "user" or
        "judge") named ``name`` on the command line, e.g. an offline stub judge."""
        return None

    def prompt_format(self, sample: Sample) -> PromptFormat | None:
        """The benchmark's own prompt-mode format (None: the harness default)."""
        return None

    def unavailable_reason(self, subset: str) -> str | None:
        """Why a subset cannot run on this machine (missing key or extra), else None."""
        return None

    def estimators(self) -> dict[str, Estimator]:
        """Headline key -> how to recompute it from per-task values (see
        ``harness.task.estimators``). The primary metric without an estimator gets
        the mean pass rate over subsets, shown only if it equals the official value."""
        return {}

    def subset_estimator(self) -> Estimator:
        """The per-subset quantity paired comparisons report (default: pass rate)."""
        from harness.task.estimators import MEAN_PASS

        return MEAN_PASS

    def commands(self) -> dict[str, str]:
        """CLI commands this benchmark adds: command name -> module. Each module
        defines ``HELP``, ``add_arguments(parser)`` and ``run(args) -> exit code``
        (as ``harness/commands/*``) and imports nothing heavy at module level."""
        return {}

    def feedback_rules(self) -> FeedbackRules | None:
        """The benchmark's own augmented-feedback rules (``env_feedback: augmented``),
        applied before the generic ones; None when it has none."""
        return None


def _unknown_option(benchmark: str, name: str, known: list[str]) -> str:
    """'unknown option X for B (did you mean Y?; known: ...)': one line."""
    if not known:
        return f"unknown option '{name}' for {benchmark} (it takes no options)"
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean '{close[0]}'?; " if close else ""
    return f"unknown option '{name}' for {benchmark} ({hint}known: {', '.join(known)})"
