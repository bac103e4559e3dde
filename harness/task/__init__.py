"""What a task is: the contract between an adapter and the harness.

``contract`` holds the adapter interface (``Adapter``, ``Sample``, ``Environment``,
..., the feedback rules an adapter may contribute), ``registry`` finds adapters by
benchmark name, ``estimators`` are the formulas behind headline intervals and
``official_set`` the full set a benchmark declares. It imports only the value
types, errors, the boundary and the model interface; nothing of how runs are
executed, scored or reported.
"""

# The contract under its public name (docs/adapters.md: ``harness.task.Adapter``).
from harness.task.contract import (
    Adapter,
    Advice,
    BenchmarkResult,
    Environment,
    EpisodeLimits,
    FeedbackRules,
    NoEnvironment,
    RecordView,
    Reporting,
    Sample,
    ScriptedTurns,
    Services,
    SubsetResult,
    UserSource,
    UserTurn,
    WrappedEnvironment,
    refusal,
)
from harness.task.official_set import OfficialSet
from harness.task.registry import register_adapter

__all__ = [
    "Adapter",
    "Advice",
    "BenchmarkResult",
    "Environment",
    "EpisodeLimits",
    "FeedbackRules",
    "NoEnvironment",
    "OfficialSet",
    "RecordView",
    "Reporting",
    "Sample",
    "ScriptedTurns",
    "Services",
    "SubsetResult",
    "UserSource",
    "UserTurn",
    "WrappedEnvironment",
    "refusal",
    "register_adapter",
]
