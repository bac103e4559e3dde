"""What a model on the command line is: its settings, and checks on them.

``oracle`` and ``null`` are built in and need no network; any other name is a
remote model (litellm, or an OpenAI-compatible server through ``api_base``).
Building the clients from these settings is ``harness.run.clients`` (a layer up:
it needs the adapters, replicas and served endpoints).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import ConfigError
from harness.models.base import CallMeter
from harness.models.cache import CacheStats
from harness.models.local_server import (
    LOCAL_MAX_WAIT_S,
    FitReport,
    is_loopback_url,
)
from harness.models.tool_placement import ToolPlacement

BUILTIN_MODELS = {
    "oracle": "plays each benchmark's gold actions (checks the scorers; no network)",
    "null": "answers every turn with text and never calls a tool (do-nothing baseline)",
}


@dataclass
class ServedEndpoint:
    """A managed server's URL, the identity of its replies (the cache key) and
    its label in the manifest (ModelSettings.served; harness/serving/ starts it)."""

    url: str
    identity: dict[str, object]
    label: str


@dataclass
class ModelSettings:
    name: str
    api_base: str | None = None
    prompt_mode: bool = False
    timeout_s: float = 120.0
    max_attempts: int = 6
    retry_base_delay: float = 1.0
    concurrency: int = 8
    cache_dir: Path | None = None
    # "litellm", "direct" (our own HTTP client for OpenAI-compatible servers), or
    # "auto": direct when an api_base is given, litellm otherwise.
    client: str = "auto"
    extra: dict[str, object] = field(default_factory=dict)
    # The weights' fingerprint (models/fingerprint.py), part of the cache key.
    fingerprint: str | None = None
    # Hits and misses of the response cache, shared by every client of the run.
    cache_stats: CacheStats = field(default_factory=CacheStats)
    # Whether the server is on this machine (None: decide from served / api_base).
    local: bool | None = None
    # Calls to a local server that outlasted timeout_s (shared, like cache_stats).
    fit_report: FitReport = field(default_factory=FitReport)
    # Model calls in flight (shared, like cache_stats): the progress display's count.
    calls: CallMeter = field(default_factory=CallMeter)
    # tool_choice sent with every request that offers tools (openai_wire.TOOL_CHOICES).
    tool_choice: str = "auto"
    # What happens to <think>...</think> in reply text: set apart before any
    # decoding ("split") or decoded with the rest ("keep"); models/reasoning.py.
    inline_reasoning: str = "split"
    # Whether tool-offering conversations get an empty system message first
    # (models/tool_placement.py); the preflight may switch it on.
    tool_placement: ToolPlacement = field(default_factory=ToolPlacement)
    # maxLength written into the offered tools' string parameters
    # (models/argument_bounds.py); None: the tools as the benchmark gives them.
    argument_max_length: int | None = None
    # --- local servers (harness/serving/replicas.py, harness/serving/) ---
    # Calls in flight per replica (url -> limit) when api_base lists several
    # replicas ("URL1,URL2"); a replica not listed takes up to ``concurrency``.
    replica_concurrency: dict[str, int] = field(default_factory=dict)
    # A server this run started: its URL, and what identifies its replies in the
    # manifest and the cache instead of that URL (the port changes every start).
    served: ServedEndpoint | None = None


def is_builtin(name: str) -> bool:
    return name in BUILTIN_MODELS


def check_model(settings: ModelSettings) -> None:
    """Fail early, with one line, on a model that cannot be called."""
    if is_builtin(settings.name):
        return
    from harness.models.litellm_client import missing_credentials, unknown_model

    problem = None if settings.api_base else unknown_model(settings.name)
    problem = problem or missing_credentials(settings.name, settings.api_base)
    if problem:
        raise ConfigError(problem)


CLIENT_KINDS = ("auto", "litellm", "direct")


def uses_direct_client(settings: ModelSettings) -> bool:
    if settings.client not in CLIENT_KINDS:
        raise ConfigError(
            f"unknown --client '{settings.client}' (known: {', '.join(CLIENT_KINDS)})"
        )
    if settings.client == "direct" and not settings.api_base:
        raise ConfigError("--client direct needs --api-base (an OpenAI-compatible server)")
    return settings.client == "direct" or (settings.client == "auto" and bool(settings.api_base))


def is_local(settings: ModelSettings) -> bool:
    """A server on this machine: one the run started, or an api_base on loopback
    (every replica). Its slow calls are waited for, not re-sent (local_server.py)."""
    if not settings.api_base:
        return False
    if settings.local is not None:
        return settings.local
    if settings.served is not None and settings.served.url == settings.api_base:
        return True
    return all(is_loopback_url(url) for url in settings.api_base.split(","))


def transport_timeout(settings: ModelSettings) -> float:
    """The HTTP client's own timeout: the per-call timeout, or for a local server
    the longest wait (RetryingClient decides when to give up on it)."""
    return LOCAL_MAX_WAIT_S if is_local(settings) else settings.timeout_s
