"""tau2's own evaluator on a stored transcript, for parity checks and timing.

Builds the ``SimulationRun`` tau2's orchestrator would have returned (messages
converted and time-stamped in order, tau2's termination reason) and hands it to
``tau2.evaluator.evaluator.evaluate_simulation`` with the evaluation type
``tau2 run`` uses. Importing the evaluator imports litellm (seconds), so this
module is used by tests and bench/tau2_scoring.py, never by the adapter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.types import Trajectory

from . import prompts
from .domains import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS, quiet_tau2
from .transcript import AGENT_ERROR, parse_transcript, tau2_ending, to_tau2_messages

if TYPE_CHECKING:
    from tau2.data_model.tasks import Task


def simulation_run(
    task: Task,
    trajectory: Trajectory,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_errors: int = DEFAULT_MAX_ERRORS,
) -> Any:
    from tau2.data_model.simulation import SimulationRun, TerminationReason

    turns = parse_transcript(trajectory.messages)
    reason = tau2_ending(turns, max_steps, max_errors).reason
    known = {item.value for item in TerminationReason}
    # An episode the harness ended for a reason tau2 has no name for is unscored.
    termination = TerminationReason(reason if reason in known else AGENT_ERROR)
    messages = to_tau2_messages(prompts.greeting(), turns)
    return SimulationRun(
        id=f"{task.id}-replay",
        task_id=task.id,
        start_time=messages[0].timestamp,
        end_time=messages[-1].timestamp,
        duration=0.0,
        termination_reason=termination,
        messages=messages,
    )


def official_reward(domain: str, task: Task, simulation: Any) -> float:
    """tau2's ``evaluate_simulation`` reward (evaluation type ALL, not solo)."""
    quiet_tau2()
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    info = evaluate_simulation(
        simulation=simulation,
        task=task,
        evaluation_type=EvaluationType.ALL,
        solo_mode=False,
        domain=domain,
    )
    return info.reward
