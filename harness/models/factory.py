"""From a model name on the command line to the client the runner calls.

``oracle`` and ``null`` are built in and need no network. Any other name goes to
litellm (API models, or OpenAI-compatible local servers through ``api_base``),
wrapped for reliability (retries, timeouts), per-endpoint concurrency and the
response cache. Prompt mode puts the tools into the prompt for servers without a
tool-call parser, using the benchmark's own prompt format where it has one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import ConfigError
from harness.models.base import ModelClient, NullClient
from harness.models.cache import CacheStats
from harness.models.local_server import (
    LOCAL_MAX_WAIT_S,
    FitReport,
    LocalPatience,
    is_loopback_url,
)
from harness.registry import get_adapter
from harness.task import Sample

if TYPE_CHECKING:
    from harness.serve import ServedEndpoint

BUILTIN_MODELS = {
    "oracle": "plays each benchmark's gold actions (parity checks; no network)",
    "null": "answers every turn with text and never calls a tool (do-nothing baseline)",
}


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
    # "litellm", "direct" (our aiohttp client for OpenAI-compatible servers), or
    # "auto": direct when an api_base is given, litellm otherwise.
    client: str = "auto"
    extra: dict[str, Any] = field(default_factory=dict)
    # The weights' fingerprint (models/fingerprint.py), part of the cache key.
    fingerprint: str | None = None
    # Hits and misses of the response cache, shared by every client of the run.
    cache_stats: CacheStats = field(default_factory=CacheStats)
    # Whether the server is on this machine (None: decide from served / api_base).
    local: bool | None = None
    # Calls to a local server that outlasted timeout_s (shared, like cache_stats).
    fit_report: FitReport = field(default_factory=FitReport)
    # tool_choice sent with every request that offers tools (openai_wire.TOOL_CHOICES).
    tool_choice: str = "auto"
    # --- local servers (harness/replicas.py, harness/serve.py) ---
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
    from harness.models.litellm_client import missing_credentials

    problem = missing_credentials(settings.name, settings.api_base)
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


def build_remote_client(settings: ModelSettings) -> ModelClient:
    """The litellm client with retries, endpoint concurrency and cache around it."""
    from harness.models.cache import CachingClient
    from harness.models.litellm_client import LiteLLMClient
    from harness.models.retry import ConcurrencyLimitedClient, RetryingClient

    client: ModelClient
    if settings.api_base and "," in settings.api_base:
        # Several replicas of one model (harness/replicas.py).
        from harness.replicas import build_replica_client

        client = build_replica_client(settings)
    elif uses_direct_client(settings):
        from harness.models.openai_http import OpenAIHTTPClient

        # litellm costs ~6 ms of CPU per call (cost maps, logging, response
        # objects): at 64 requests in flight it caps a local server at ~37% of
        # its throughput; this client talks the same protocol at ~0.5 ms.
        client = OpenAIHTTPClient(
            settings.name,
            settings.api_base,
            timeout=transport_timeout(settings),
            tool_choice=settings.tool_choice,
        )
    else:
        client = LiteLLMClient(
            settings.name,
            api_base=settings.api_base,
            timeout=transport_timeout(settings),
            tool_choice=settings.tool_choice,
        )
    if settings.served is not None and settings.served.url == settings.api_base:
        # A server this run started (harness/serve.py); other clients built from
        # these settings (a rehearser on another endpoint) are not affected.
        from harness.serve import ServedModelClient

        client = ServedModelClient(client, settings.served.identity, settings.served.label)
    client = ConcurrencyLimitedClient(client, settings.concurrency)
    client = RetryingClient(
        client,
        max_attempts=settings.max_attempts,
        base_delay=settings.retry_base_delay,
        timeout=settings.timeout_s,
        patience=(
            LocalPatience(str(settings.api_base), settings.fit_report)
            if is_local(settings)
            else None
        ),
        fit_report=settings.fit_report,
    )
    if settings.cache_dir is not None:
        client = CachingClient(
            client, settings.cache_dir, fingerprint=settings.fingerprint, stats=settings.cache_stats
        )
    return client


# Names that mean "no model client": the adapter's own deterministic stand-in.
SCRIPTED = "scripted"


def aux_client(
    name: str | None, role: str, benchmarks: list[str], base: ModelSettings
) -> ModelClient | None:
    """The client for the user simulator or the judge (``role``): an adapter's
    built-in stand-in when one is named so, else a remote model like the actor's."""
    if name is None or name == SCRIPTED:
        return None
    for benchmark in benchmarks:
        client = get_adapter(benchmark).builtin_client(role, name)
        if client is not None:
            return client
    settings = ModelSettings(
        name=name,
        timeout_s=base.timeout_s,
        max_attempts=base.max_attempts,
        concurrency=base.concurrency,
        cache_dir=base.cache_dir,
        cache_stats=base.cache_stats,
        fit_report=base.fit_report,
    )
    check_model(settings)
    return build_remote_client(settings)


class ModelProvider:
    """Gives the runner the client for each sample."""

    def __init__(self, settings: ModelSettings):
        self.settings = settings
        self._remote: ModelClient | None = None
        if not is_builtin(settings.name):
            self._remote = build_remote_client(settings)

    def __call__(self, sample: Sample) -> ModelClient:
        name = self.settings.name
        if name == "oracle":
            return get_adapter(sample.benchmark).oracle(sample)
        if name == "null":
            return NullClient()
        assert self._remote is not None
        if not self.settings.prompt_mode:
            return self._remote
        from harness.models.prompt_mode import HermesPromptFormat, PromptModeClient

        fmt = get_adapter(sample.benchmark).prompt_format(sample) or HermesPromptFormat()
        return PromptModeClient(self._remote, fmt)

    async def aclose(self) -> None:
        if self._remote is not None:
            await self._remote.aclose()

    def describe(self) -> dict[str, Any]:
        if self._remote is None:
            return {
                "name": self.settings.name,
                "kind": "builtin",
                "about": BUILTIN_MODELS[self.settings.name],
            }
        info = dict(self._remote.describe())
        info.update({"name": self.settings.name, "prompt_mode": self.settings.prompt_mode})
        return info
