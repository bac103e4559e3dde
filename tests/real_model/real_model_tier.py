"""What the real-model tier runs, and the figures it reads off the run folders.

The tier evaluates a real small model (SmolLM2-135M-Instruct, GGUF, on CPU)
served by llama-cpp-python through the harness's own ``--serve llamacpp``. Its
environment comes from ``scripts/real_model_env.sh``, which names the server's
Python (``HARNESS_LLAMACPP_PYTHON``) and the model file (``HARNESS_REAL_MODEL_GGUF``).

The limits keep the whole tier within 15 minutes on 2 CPU cores: a few samples
per subset, short replies (``MAX_TOKENS``), short episodes, and one request at a
time (one server slot, so each episode's next request reuses the prompt prefix
llama.cpp already holds).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support import shared_location

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = shared_location("data")
PYTHON_VARIABLE = "HARNESS_LLAMACPP_PYTHON"
GGUF_VARIABLE = "HARNESS_REAL_MODEL_GGUF"
REPORT = REPO_ROOT / "test-artifacts" / "real-model-tier.md"
# tau2-bench v1.0.1 (source and data) for the tau3 run.
TAU2_CHECKOUT = shared_location("tau2-bench")

MAX_TOKENS = 48
# Sampled, with a fixed seed, not greedy: greedy SmolLM2 repeats itself (a
# string argument "1234567890123..." that never closes); see ARGUMENT_MAX_LENGTH.
SAMPLING = ["--temperature", "0.7", "--seed", "0"]
# This chat format ignores max_tokens while it writes tool arguments (under a
# grammar from the tool's schema): a string argument SmolLM2 never closes runs
# to the end of the window, minutes on 2 cores (measured on VitaBench's first
# request, also when sampled). The grammar honours maxLength, so the tier offers
# the tools with every string parameter bounded (--argument-max-length).
ARGUMENT_MAX_LENGTH = 48
# In prompt mode (calls written as text) a reply cut this short cannot hold a
# whole call: the tier's malformed-output case. (With tools, llama.cpp's
# chatml-function-calling writes arguments under a JSON grammar and no token cap,
# so function-calling replies are well-formed unless the window fills first.)
TRUNCATING_MAX_TOKENS = 6
# tau2 and VitaBench count every message of the episode (agent and user).
EPISODE_STEPS = 6
# FinMCP's official loop lets a turn run 20 calls; SmolLM2 never stops calling
# (measured: 22 replies for a one-call item, ~200 s), so the tier allows 2.
FINMCP_TOOL_CALL_CAP = 2
BFCL_SINGLE_TURN = ["simple_python", "multiple", "parallel", "irrelevance", "live_simple"]
BFCL_MULTI_STEP = ["multi_turn_base"]
# memory_kv: one question after its scenario's prerequisite conversations. The
# note-taker scenario has the fewest (5 conversations, 24 turns; the customer
# scenario has 109), and one step per turn keeps it at ~25 requests:
# chatml-function-calling never shows the model its tool results, so a second
# step would only repeat the call.
BFCL_MEMORY_IDS = ["memory_kv_130-notetaker-0"]
BFCL_MEMORY_STEPS_PER_TURN = 1


# BFCL's own per-turn step cap is 21 (option max_steps_per_turn); a model that
# never sees its tool results calls again and again, so the tier allows 2.
BFCL_STEPS_PER_TURN = 2


@dataclass(frozen=True)
class TierSuite:
    """One run of the tier: a suite and the server window it is served with.

    The window bounds how long one reply can run: llama-cpp-python's
    chatml-function-calling writes tool arguments under a JSON grammar with no
    token cap (it ignores max_tokens there), so a reply can only grow until the
    window is full. Each benchmark gets a window just above its longest request.

    Flash attention halves the time of a long prompt but slows every token after
    it (one thread, a 4,000-token context: a 4,000-token prompt 75 against 146 CPU
    s; a 32-token prompt 3.4 against 1.1 s; a reply 122 against 81 ms a token):
    it pays where first prompts are long (tau2, VitaBench, FinMCP), not for
    BFCL's many short steps (memory_kv: ~25 requests on one conversation).
    """

    name: str
    yaml: str
    context_tokens: int
    flash_attention: bool = True


def benchmark_suites(shared_data: Path) -> list[TierSuite]:
    """Every adapter on the shared data, one run (and one server) per benchmark."""
    vitabench = shared_data / "vitabench"
    finmcp = shared_data / "finmcp"
    common = "trials: 1\nuser_model: scripted\njudge_model: stub\nentries:\n"
    bfcl = f"""  - benchmark: bfcl
    subsets: [{", ".join(BFCL_SINGLE_TURN)}]
    limit: 1
  - benchmark: bfcl
    subsets: [{", ".join(BFCL_MULTI_STEP)}]
    limit: 1
    options: {{max_steps_per_turn: {BFCL_STEPS_PER_TURN}}}
  - benchmark: bfcl
    subsets: [memory_kv]
    ids: [{", ".join(BFCL_MEMORY_IDS)}]
    options: {{max_steps_per_turn: {BFCL_MEMORY_STEPS_PER_TURN}}}
"""
    tau2 = f"""  - benchmark: tau2
    subsets: [airline, retail, telecom]
    limit: 1
    options: {{max_steps: {EPISODE_STEPS}}}
"""
    vita = f"""  - benchmark: vitabench
    subsets: [delivery, instore]
    limit: 1
    options: {{language: en, data_dir: "{vitabench}", max_steps: {EPISODE_STEPS}}}
"""
    fin = f"""  - benchmark: finmcp
    subsets: [single_tool, multi_tool, multi_turn]
    limit: 1
    options: {{data_dir: "{finmcp}", tool_call_cap: {FINMCP_TOOL_CALL_CAP}}}
"""
    # Windows: the longest first request of each (chatml-function-calling
    # prompt, SmolLM2 tokens) plus the episode's growth: BFCL multi_turn_base
    # ~2,300; tau2 telecom ~8,100; VitaBench instore ~2,700; FinMCP ~1,400.
    return [
        TierSuite("bfcl", f"name: tier-bfcl\n{common}{bfcl}", 4096, flash_attention=False),
        TierSuite("tau2", f"name: tier-tau2\n{common}{tau2}", 10240),
        TierSuite("vitabench", f"name: tier-vitabench\n{common}{vita}", 5120),
        TierSuite("finmcp", f"name: tier-finmcp\n{common}{fin}", 3072),
    ]


# The tier's runs go in two lanes side by side, one per core. Most of a reply's
# time is one thread: the grammar this chat format samples under is checked
# against the whole vocabulary for every token, on one core; a second lane
# keeps the other core busy.
LANES = 2


def server_arguments(context_tokens: int, flash_attention: bool = True) -> list[str]:
    """``harness run`` flags for the tier's llama-cpp-python server.

    One thread for replies and for prompts (each lane has one core of its own;
    two threads that wait for each other on a shared core were measured 30x
    slower per token). Prompts are evaluated in one batch as large as the
    window (measured with flash attention on 2 idle cores, a 5,400-token
    prompt: 69 s; 103 s in batches of 2,048; over 130 s in its default batches
    of 512). The window and flash attention: see TierSuite.
    """
    settings = {
        "--n_threads": "1",
        "--n_threads_batch": "1",
        "--n_batch": str(context_tokens),
        "--n_ubatch": str(context_tokens),
        "--flash_attn": str(flash_attention),
        "--n_ctx": str(context_tokens),
        # The seed of the server's sampler: chatml-function-calling does not pass
        # a request's seed on to the completions it makes.
        "--seed": "0",
    }
    return [f"--serve-arg={part}" for pair in settings.items() for part in pair]


# tau3: banking_knowledge (BM25 retrieval: offline), one task; its first request is
# ~4,500 SmolLM2 tokens (policy and 15 tools).
TAU3_SUITE = f"""name: tier-tau3
trials: 1
user_model: scripted
judge_model: stub
entries:
  - benchmark: tau3
    subsets: [banking_knowledge]
    limit: 1
    options: {{max_steps: {EPISODE_STEPS}, retrieval: bm25}}
"""
TAU3_CONTEXT_TOKENS = 6144


def bfcl_suite_yaml(name: str, subset: str, limit: int) -> str:
    """A few BFCL samples (the strategies' runs, the truncated-output run)."""
    return f"""name: {name}
trials: 1
entries:
  - benchmark: bfcl
    subsets: [{subset}]
    limit: {limit}
"""


@dataclass
class CallCounts:
    """The model's tool calls in a set of records."""

    calls: int = 0
    well_formed: int = 0
    executed: int = 0  # well-formed and answered by the environment (a tool message)

    @property
    def well_formed_share(self) -> float:
        return self.well_formed / self.calls if self.calls else 0.0


@dataclass
class BenchmarkFigures:
    benchmark: str
    samples: int = 0
    statuses: Counter = field(default_factory=Counter)
    calls: CallCounts = field(default_factory=CallCounts)
    rewards: list[float] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0

    @property
    def score(self) -> float:
        return sum(self.rewards) / len(self.rewards) if self.rewards else 0.0


def is_well_formed(call: dict[str, Any]) -> bool:
    return (
        bool(call.get("name"))
        and call.get("parse_error") is None
        and isinstance(call.get("arguments"), dict)
    )


def call_counts(trajectory: dict[str, Any]) -> CallCounts:
    """Calls of the model under test (the transcript's assistant turns) and which
    of them the environment answered."""
    answered = {
        message.get("tool_call_id")
        for message in trajectory.get("messages") or []
        if message.get("role") == "tool"
    }
    counts = CallCounts()
    for turn in trajectory.get("turns") or []:
        for call in turn.get("tool_calls") or []:
            counts.calls += 1
            if is_well_formed(call):
                counts.well_formed += 1
                if call.get("id") in answered:
                    counts.executed += 1
    return counts


def parse_errors(record: dict[str, Any]) -> list[str]:
    """Why the model's output could not be read as calls: each call's parse error,
    and the benchmark's decoder error (BFCL reads prompt-mode text itself)."""
    trajectory = record.get("trajectory") or {}
    errors = [
        call["parse_error"]
        for turn in trajectory.get("turns") or []
        for call in turn.get("tool_calls") or []
        if call.get("parse_error")
    ]
    details = (record.get("score") or {}).get("details") or {}
    if details.get("decode_error"):
        errors.append(str(details["decode_error"]))
    return errors


def figures_by_benchmark(records: list[dict[str, Any]]) -> dict[str, BenchmarkFigures]:
    figures: dict[str, BenchmarkFigures] = {}
    for record in records:
        name = record["benchmark"]
        entry = figures.setdefault(name, BenchmarkFigures(name))
        entry.samples += 1
        entry.statuses[record["status"]] += 1
        if record.get("score") is not None:
            entry.rewards.append(float(record["score"]["reward"]))
        trajectory = record.get("trajectory") or {}
        counts = call_counts(trajectory)
        entry.calls.calls += counts.calls
        entry.calls.well_formed += counts.well_formed
        entry.calls.executed += counts.executed
        for turn in trajectory.get("turns") or []:
            usage = turn.get("usage") or {}
            entry.model_calls += 1
            entry.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            entry.completion_tokens += int(usage.get("completion_tokens") or 0)
    return figures


def report_table(
    figures: dict[str, dict[str, BenchmarkFigures]],
    wall_s: dict[str, float],
    cpu_s: dict[str, float],
    tier_wall_s: float,
) -> str:
    lines = [
        "| run | benchmark | samples | tool calls | well-formed | executed | score | "
        "model calls | prompt tok | completion tok |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run, by_benchmark in figures.items():
        for entry in by_benchmark.values():
            lines.append(
                f"| {run} | {entry.benchmark} | {entry.samples} | {entry.calls.calls} | "
                f"{entry.calls.well_formed_share:.0%} | {entry.calls.executed} | "
                f"{entry.score:.3f} | {entry.model_calls} | {entry.prompt_tokens} | "
                f"{entry.completion_tokens} |"
            )
    lines.append("")
    lines += [
        f"- {run}: {seconds:.0f} s wall, {cpu_s[run]:.0f} CPU s (harness and server)"
        for run, seconds in wall_s.items()
    ]
    lines.append(
        f"- tier: {tier_wall_s:.0f} s wall in {LANES} lanes, {sum(cpu_s.values()):.0f} CPU s"
    )
    return "\n".join(lines)
