"""World rehearsal at test time: imagined attempts, critiques, memory, one real attempt.

For each (sample, trial):

1. N private rehearsals. Each is a normal episode (the same loop, limits and user
   side as the real one) whose environment is a ``SimulatedEnvironment``: every
   tool call is answered by the rehearser. The real environment is never built.
   A simulated user plays against the same simulated environment, on its own
   seed, or the rehearser plays the user (setting ``rehearsal_user``).
2. After each rehearsal the critic reviews the imagined transcript.
3. *Parallel*: the rehearsals are independent (run concurrently).
   *Sequential*: rehearsal i is shown the critiques of rehearsals 1..i-1.
4. The critiques are distilled into one memory of at most ``memory_chars``.
5. The committed episode runs in the real environment with the memory injected.
   Only it is scored; everything else is recorded in ``extra["rehearsal"]``.

On single-step tasks (one reply per user turn, never executed) a rehearsal is one reply whose
calls are not executed: the critique then reviews the calls themselves.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from harness.boundary.json_value import JsonObject
from harness.episode.loop import EpisodeInput, run_episode
from harness.episode.tap import ConversationTap
from harness.errors import ConfigError
from harness.models.base import ModelClient
from harness.strategies import prompts
from harness.strategies.base import Strategy
from harness.strategies.committed import (
    LayerFactory,
    SampleRun,
    finish,
    gather_all,
    run_committed,
)
from harness.strategies.costs import CostLedger, MeteredClient, call_usage
from harness.strategies.feedback import wrap_environment
from harness.strategies.memory import (
    MemoryInjectingClient,
    MemoryLayer,
    ParsedText,
    parse_critique,
    parse_memory,
)
from harness.strategies.monitor import REHEARSAL, phase
from harness.strategies.rehearser import rehearser_for, strip_thinking
from harness.strategies.sandbox import SimulatedEnvironment
from harness.strategies.settings import StrategySettings, derive_seed
from harness.strategies.world_model import probe_layers
from harness.task.contract import Environment, Sample, Services, UserSource, UserTurn
from harness.task.registry import adapter_of
from harness.types import Message, SamplingParams, TerminationReason, Trajectory

MODES = ("parallel", "sequential")


def needs_simulated_user(sample: Sample) -> bool:
    """Whether the sample's user side is a simulator (rather than scripted turns)."""
    try:
        return bool(adapter_of(sample).needs_user_model)
    except (ConfigError, ImportError):
        return False


class RehearserUser(UserSource):
    """The rehearser playing the user of an imagined conversation.

    It knows only what the conversation shows (the user simulator's hidden goal is
    not given to it), so it continues the request made so far, or opens a
    plausible one. Its usage is reported with its turns, under the user role.
    """

    def __init__(
        self,
        client: ModelClient,
        initial_messages: list[Message],
        params: SamplingParams,
        max_turns: int,
        max_prompt_chars: int,
    ):
        self.client = client
        self.initial_messages = initial_messages
        self.params = params
        self.max_turns = max_turns
        self.max_prompt_chars = max_prompt_chars
        self.turns = 0

    async def next_turn(self, transcript: list[Message]) -> UserTurn | None:
        if self.turns >= self.max_turns:
            return None
        self.turns += 1
        conversation = [*self.initial_messages, *transcript]
        messages = prompts.user_role_prompt(conversation, self.max_prompt_chars)
        turn = await self.client.complete(messages, [], self.params)
        text = strip_thinking(turn.content)
        usage = call_usage(turn)
        if not text:
            return UserTurn(stop=TerminationReason.REHEARSER_USER_SILENT.value, usage=usage)
        if prompts.USER_STOP in text:
            return UserTurn(stop=TerminationReason.USER_STOP.value, usage=usage)
        return UserTurn(messages=[{"role": "user", "content": text}], usage=usage)


@dataclass
class RehearsalOutcome:
    """One rehearsal, its critique and its costs."""

    index: int
    seed: int
    shown_critiques: str | None
    trajectory: Trajectory
    simulated_calls: list[JsonObject]
    critique: ParsedText
    critique_raw: str
    # The rehearsal's own costs (its wall time included).
    ledger: CostLedger
    # Why this rehearsal could not run (the user side refused the imagined world).
    skipped: str | None = None

    @classmethod
    def skipped_one(
        cls, index: int, seed: int, shown: str | None, ledger: CostLedger, reason: str
    ) -> RehearsalOutcome:
        return cls(
            index=index,
            seed=seed,
            shown_critiques=shown,
            trajectory=Trajectory(termination=TerminationReason.SKIPPED.value),
            simulated_calls=[],
            critique=ParsedText("", "rehearsal skipped"),
            critique_raw="",
            ledger=ledger,
            skipped=reason,
        )

    def record(self) -> JsonObject:
        return {
            "index": self.index,
            "skipped": self.skipped,
            "seed": self.seed,
            "shown_critiques": self.shown_critiques,
            "termination": self.trajectory.termination,
            "tool_calls": self.trajectory.tool_calls,
            "tool_errors": self.trajectory.tool_errors,
            "messages": list(self.trajectory.messages),
            "simulated_calls": list(self.simulated_calls),
            "critique": self.critique.text,
            "critique_format_error": self.critique.format_error,
            "critique_raw": prompts.clip(self.critique_raw, 8000),
            "costs": self.ledger.phase_record(REHEARSAL),
        }


class RehearsalStrategy(Strategy):
    """``rehearsal-parallel:N`` and ``rehearsal-sequential:N``."""

    def __init__(
        self,
        mode: str,
        n: int,
        settings: StrategySettings,
        rehearser: ModelClient | None = None,
        critic: ModelClient | None = None,
    ):
        if mode not in MODES:
            raise ConfigError(f"rehearsal mode must be one of {', '.join(MODES)}, got {mode!r}")
        if n < 1:
            raise ConfigError("the number of rehearsals must be at least 1")
        self.mode = mode
        self.n = n
        self.settings = settings
        self.rehearser = rehearser
        self.critic = critic
        self.name = f"rehearsal-{mode}:{n}"

    def describe(self) -> JsonObject:
        s = self.settings
        rehearser = s.rehearser_model or "self"
        return {
            "name": self.name,
            "label": f"{self.name} rehearser={rehearser}",
            "mode": self.mode,
            "n": self.n,
            "prompt_version": prompts.PROMPT_VERSION,
            "env_feedback": s.env_feedback,
            "settings": s.to_dict(),
        }

    # ------------------------------------------------------------ phases

    async def run(
        self, sample: Sample, model: ModelClient, services: Services, params: SamplingParams
    ) -> Trajectory:
        run = SampleRun(sample, model, services, params, self.settings, self.rehearser or model)
        critic = self.critic or model
        with phase(REHEARSAL), run.ledger.timed(REHEARSAL):
            outcomes = await self._rehearse_all(run, critic)
            for outcome in outcomes:
                run.ledger.merge(outcome.ledger)
            memory, memory_raw = await self._distil(run, critic, outcomes)
        layers: list[LayerFactory] = []
        if memory.text:
            layers.append(lambda _run: MemoryLayer(memory.text, self.settings.memory_position))
        layers.extend(probe_layers(self.settings))
        trajectory, notes = await run_committed(run, layers)
        trajectory.extra["rehearsal"] = {
            "mode": self.mode,
            "n": self.n,
            "prompt_version": prompts.PROMPT_VERSION,
            "memory": memory.text,
            "memory_format_error": memory.format_error,
            "memory_truncated": memory.truncated,
            "memory_raw": prompts.clip(memory_raw, 8000),
            "memory_position": self.settings.memory_position,
            "memory_placements": notes.get("memory_placements", {}),
            "rehearsals": [outcome.record() for outcome in outcomes],
        }
        return finish(trajectory, run, notes)

    async def _rehearse_all(self, run: SampleRun, critic: ModelClient) -> list[RehearsalOutcome]:
        if self.mode == "parallel":
            jobs = [self._rehearse(run, critic, index, []) for index in range(self.n)]
            return await gather_all(jobs)
        outcomes: list[RehearsalOutcome] = []
        for index in range(self.n):
            earlier = [o.critique.text for o in outcomes if o.critique.text]
            outcomes.append(await self._rehearse(run, critic, index, earlier))
        return outcomes

    async def _rehearse(
        self, run: SampleRun, critic: ModelClient, index: int, earlier: list[str]
    ) -> RehearsalOutcome:
        """One rehearsal and its critique, with its own cost ledger (timed)."""
        ledger = CostLedger()
        with ledger.timed(REHEARSAL):
            return await self._rehearse_with(run, critic, index, earlier, ledger)

    async def _rehearse_with(
        self,
        run: SampleRun,
        critic: ModelClient,
        index: int,
        earlier: list[str],
        ledger: CostLedger,
    ) -> RehearsalOutcome:
        seed = derive_seed(run.params.seed, "rehearsal", index)
        params = dataclasses.replace(run.params, temperature=self.settings.temperature, seed=seed)
        shown = prompts.sequential_block(earlier) if earlier else None
        actor: ModelClient = MeteredClient(run.model, "actor", ledger)
        if shown:
            actor = MemoryInjectingClient(actor, shown, self.settings.memory_position)
        tap = ConversationTap(actor)
        rehearser = rehearser_for(run.rehearser_model, run.settings, ledger, params)
        simulated = SimulatedEnvironment(rehearser, tap, run.sample.tools)
        environment: Environment = simulated
        if self.settings.augmented_feedback:
            environment = wrap_environment(simulated, run.sample)
        try:
            user = self._user(run, simulated, index, params)
        except Exception as exc:  # e.g. a user side that only works on its real world
            reason = (
                f"the user side cannot run on an imagined environment: {type(exc).__name__}: {exc}"
            )
            return RehearsalOutcome.skipped_one(index, seed, shown, ledger, reason)
        spec = EpisodeInput(
            initial_messages=run.sample.initial_messages,
            tools=run.sample.tools,
            environment=environment,
            user=user,
            limits=run.sample.limits,
            params=params,
        )
        trajectory = await run_episode(spec, tap)
        if simulated.failure is not None:
            raise simulated.failure
        ledger.add_trajectory_roles(REHEARSAL, trajectory.usage, ("user",))
        critique, raw = await self._critique(run, critic, ledger, index, trajectory, shown)
        return RehearsalOutcome(
            index=index,
            seed=seed,
            shown_critiques=shown,
            trajectory=trajectory,
            simulated_calls=simulated.log,
            critique=critique,
            critique_raw=raw,
            ledger=ledger,
        )

    def _user(
        self, run: SampleRun, simulated: Environment, index: int, params: SamplingParams
    ) -> UserSource | None:
        sample = run.sample
        if sample.make_user is None:
            return None
        if self.settings.rehearsal_user == "rehearser" and needs_simulated_user(sample):
            return RehearserUser(
                run.rehearser_model,
                sample.initial_messages,
                params,
                self.settings.max_user_turns,
                self.settings.max_prompt_chars,
            )
        # The benchmark's user simulator, on the imagined world and its own seed.
        services = dataclasses.replace(
            run.services, seed=derive_seed(run.services.seed, "rehearsal-user", index)
        )
        return sample.make_user(simulated, services)

    async def _critique(
        self,
        run: SampleRun,
        critic: ModelClient,
        ledger: CostLedger,
        index: int,
        trajectory: Trajectory,
        shown: str | None,
    ) -> tuple[ParsedText, str]:
        transcript = [*run.sample.initial_messages, *trajectory.messages]
        messages = prompts.critique_prompt(
            transcript, trajectory.termination, shown, self.settings.max_prompt_chars
        )
        params = dataclasses.replace(
            run.params, seed=derive_seed(run.params.seed, "critique", index)
        )
        turn = await MeteredClient(critic, "critic", ledger).complete(messages, [], params)
        return parse_critique(turn.content, self.settings.memory_chars), turn.content or ""

    async def _distil(
        self, run: SampleRun, critic: ModelClient, outcomes: list[RehearsalOutcome]
    ) -> tuple[ParsedText, str]:
        critiques = [o.critique.text for o in outcomes if o.critique.text]
        if not critiques:
            return ParsedText("", "no usable critique"), ""
        limit = self.settings.memory_chars
        messages = prompts.distil_prompt(critiques, limit, self.settings.max_prompt_chars)
        params = dataclasses.replace(run.params, seed=derive_seed(run.params.seed, "distil", 0))
        turn = await MeteredClient(critic, "critic", run.ledger).complete(messages, [], params)
        return parse_memory(turn.content, limit), turn.content or ""
