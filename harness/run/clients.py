"""From a model name on the command line to the client the runner calls.

Any remote model is wrapped for reliability (retries, timeouts), per-endpoint
concurrency and the response cache; several replicas become one pool
(harness/serving/replicas.py) and a server this run started is known by what it serves
(harness/serving/). Prompt mode puts the tools into the prompt for servers
without a tool-call parser, using the benchmark's own prompt format where it has
one. This wiring sits above the model layer (``harness/models/``), which knows
nothing of adapters, replicas or served endpoints.
"""

from __future__ import annotations

from harness.boundary.json_value import JsonObject
from harness.config.run_config import object_label
from harness.errors import ConfigError
from harness.models.base import ModelClient, NullClient
from harness.models.local_server import LocalPatience
from harness.models.settings import (
    BUILTIN_MODELS,
    ModelSettings,
    check_model,
    is_builtin,
    is_local,
    transport_timeout,
    uses_direct_client,
)
from harness.task.contract import Adapter, Sample
from harness.task.registry import adapter_of


def build_remote_client(settings: ModelSettings) -> ModelClient:
    """The litellm client with retries, endpoint concurrency and cache around it."""
    if settings.inline_reasoning != "split" and not uses_direct_client(settings):
        # litellm moves a leading <think> block out of the text before we see it.
        raise ConfigError(
            f"--inline-reasoning {settings.inline_reasoning} needs the direct client "
            "(--api-base, --client auto or direct): litellm sets <think> text apart itself"
        )
    from harness.models.litellm_client import LiteLLMClient
    from harness.models.tool_placement import SystemMessageForTools

    client: ModelClient
    if settings.api_base and "," in settings.api_base:
        # Several replicas of one model (harness/serving/replicas.py).
        from harness.serving.replicas import build_replica_client

        client = build_replica_client(settings)
    elif uses_direct_client(settings) and settings.api_base:
        from harness.models.openai_http import OpenAIHTTPClient

        # litellm costs ~6 ms of CPU per call (cost maps, logging, response
        # objects): at 64 requests in flight it caps a local server at ~37% of
        # its throughput; this client talks the same protocol at ~0.5 ms.
        client = OpenAIHTTPClient(
            settings.name,
            settings.api_base,
            timeout=transport_timeout(settings),
            tool_choice=settings.tool_choice,
            inline_reasoning=settings.inline_reasoning,
        )
    else:
        client = LiteLLMClient(
            settings.name,
            api_base=settings.api_base,
            timeout=transport_timeout(settings),
            tool_choice=settings.tool_choice,
        )
    if settings.served is not None and settings.served.url == settings.api_base:
        # A server this run started (harness/serving/); other clients built from
        # these settings (a rehearser on another endpoint) are not affected.
        from harness.serving.client import ServedModelClient

        client = ServedModelClient(client, settings.served.identity, settings.served.label)
    client = SystemMessageForTools(client, settings.tool_placement)
    return wrap_client(client, settings)


def wrap_client(client: ModelClient, settings: ModelSettings) -> ModelClient:
    """``client`` with what every model the run calls gets: bounded string
    arguments, the concurrency limit, retries on transient errors and the cache."""
    from harness.models.cache import CachingClient
    from harness.models.retry import ConcurrencyLimitedClient, RetryingClient

    if settings.argument_max_length is not None:
        from harness.models.argument_bounds import BoundedStringArguments

        client = BoundedStringArguments(client, settings.argument_max_length)
    client = ConcurrencyLimitedClient(client, settings.concurrency, meter=settings.calls)
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
    name: str | None, role: str, adapters: list[Adapter], base: ModelSettings
) -> ModelClient | None:
    """The client for the user simulator or the judge (``role``): an adapter's
    built-in stand-in when one is named so, else a remote model like the actor's."""
    if name is None or name == SCRIPTED:
        return None
    for adapter in adapters:
        client = adapter.builtin_client(role, name)
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
        calls=base.calls,
    )
    check_model(settings)
    return build_remote_client(settings)


class ModelProvider:
    """Gives the runner the client for each sample."""

    def __init__(self, settings: ModelSettings, given: ModelClient | None = None):
        """``given``: a client object the caller built (``RunConfig.model``), called
        for every sample with the run's retries, concurrency limit and cache."""
        self.settings = settings
        self._remote: ModelClient | None = None
        # The class of a client object the caller passed in (the manifest says so).
        self._given = object_label(given) if given is not None else None
        if given is not None:
            self._remote = wrap_client(given, settings)
        elif not is_builtin(settings.name):
            self._remote = build_remote_client(settings)

    def __call__(self, sample: Sample) -> ModelClient:
        if self._remote is None:  # a built-in model
            if self.settings.name == "oracle":
                return adapter_of(sample).oracle(sample)
            return NullClient()
        if not self.settings.prompt_mode:
            return self._remote
        from harness.models.prompt_mode import HermesPromptFormat, PromptModeClient

        fmt = adapter_of(sample).prompt_format(sample) or HermesPromptFormat()
        return PromptModeClient(self._remote, fmt, self.settings.inline_reasoning)

    async def aclose(self) -> None:
        # A client object the caller passed in is the caller's to close.
        if self._remote is not None and not self._given:
            await self._remote.aclose()

    def describe(self) -> JsonObject:
        if self._remote is None:
            return {
                "name": self.settings.name,
                "kind": "builtin",
                "about": BUILTIN_MODELS[self.settings.name],
            }
        info = dict(self._remote.describe())
        info.update({"name": self.settings.name, "prompt_mode": self.settings.prompt_mode})
        if self._given:
            info["object"] = self._given
        return info
