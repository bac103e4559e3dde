"""Several replicas of one model behind one client.

``--api-base URL1,URL2,...`` (or ``--model-config FILE`` listing the replicas)
spreads a run's calls over servers that serve the same model:

- with the direct client (the default for local servers), ``ReplicaPool``: each
  call goes to the replica with the fewest calls in flight (then the fewest
  calls so far), never above a replica's own limit. A replica that cannot be
  reached (connection refused, reset or dropped) is marked down for a
  cool-down and the call moves to another replica at once; when every replica
  is down the call fails with a transient ModelError, so the retry wrapper
  waits and tries again (a replica is tried again after its cool-down).
- with ``--client litellm``, litellm's Router with least-busy routing,
  per-replica ``max_parallel_requests`` and cool-downs.

A model config file::

    model: openai/my-checkpoint        # optional; --model wins
    replicas:
      - url: http://node1:8000/v1
        max_concurrency: 32            # optional; default: --concurrency
      - url: http://node2:8000/v1
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.models.base import ModelClient, ModelError
from harness.models.litellm_client import PLACEHOLDER_KEY, LiteLLMClient, check_api_base
from harness.models.redact import add_config_secrets, redact_url
from harness.models.settings import ModelSettings, transport_timeout, uses_direct_client
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema

DEFAULT_COOLDOWN_S = 10.0


def is_replica_list(api_base: str | None) -> bool:
    return bool(api_base) and "," in str(api_base)


def replica_urls(api_base: str) -> list[str]:
    urls = [url.strip().rstrip("/") for url in api_base.split(",")]
    if any(not url for url in urls):
        raise ConfigError(f"--api-base '{api_base}' has an empty replica URL")
    if len(set(urls)) != len(urls):
        raise ConfigError(f"--api-base '{api_base}' names a replica twice")
    return urls


# -- the model config file --------------------------------------------------------


@dataclass
class ReplicaSpec:
    url: str
    max_concurrency: int | None = None


@dataclass
class ModelConfig:
    replicas: list[ReplicaSpec]
    model: str | None = None

    def api_base(self) -> str:
        return ",".join(replica.url for replica in self.replicas)

    def limits(self) -> dict[str, int]:
        return {r.url: r.max_concurrency for r in self.replicas if r.max_concurrency is not None}


def load_model_config(path: Path) -> ModelConfig:
    """Read a model config YAML (see the module docstring); ConfigError if malformed."""
    from harness.config.validate import read_yaml

    raw = read_yaml(path, f"--model-config {path}")
    add_config_secrets(raw)  # replica URLs may carry user:password or a key
    if (
        not isinstance(raw, dict)
        or not isinstance(raw.get("replicas"), list)
        or not raw["replicas"]
    ):
        raise ConfigError(f"--model-config {path}: needs a non-empty 'replicas' list")
    unknown = set(raw) - {"model", "replicas"}
    if unknown:
        raise ConfigError(f"--model-config {path}: unknown keys {sorted(unknown)}")
    replicas = []
    for index, item in enumerate(raw["replicas"], start=1):
        if isinstance(item, str):
            item = {"url": item}
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            raise ConfigError(f"--model-config {path}: replica {index} needs a 'url'")
        limit = item.get("max_concurrency")
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise ConfigError(
                f"--model-config {path}: replica {index}: max_concurrency must be positive"
            )
        extra = set(item) - {"url", "max_concurrency"}
        if extra:
            raise ConfigError(
                f"--model-config {path}: replica {index}: unknown keys {sorted(extra)}"
            )
        replicas.append(ReplicaSpec(item["url"].strip().rstrip("/"), limit))
    replica_urls(",".join(r.url for r in replicas))  # the same checks as for --api-base
    model = raw.get("model")
    return ModelConfig(replicas=replicas, model=str(model) if model else None)


# -- our own pool (direct client) --------------------------------------------------


def is_connection_failure(error: ModelError) -> bool:
    """Whether the replica could not be reached at all (refused, reset, dropped).

    The HTTP client (http1.py) raises its ModelError ``from None`` inside the
    ``except`` for the connection's OSError (refused, reset, no such host, a bad
    reply), so that error is still its ``__context__``. Timeouts are not
    counted: a busy replica is slow, not gone.
    """
    cause = error.__cause__ or error.__context__
    if isinstance(cause, asyncio.TimeoutError):
        return False
    return isinstance(cause, OSError)


@dataclass
class Replica:
    url: str
    client: ModelClient
    max_in_flight: int
    in_flight: int = 0
    calls: int = 0  # calls answered
    failures: int = 0  # times it could not be reached
    down_until: float = 0.0


class ReplicaPool(ModelClient):
    """Spreads calls over replicas of one model; see the module docstring."""

    def __init__(
        self,
        model: str,
        replicas: list[Replica],
        cooldown_s: float = DEFAULT_COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        if not replicas:
            raise ValueError("a replica pool needs at least one replica")
        self.model = model
        self.name = model
        self.replicas = replicas
        self.cooldown_s = cooldown_s
        self.api_base = ",".join(r.url for r in replicas)
        self._clock = clock
        # One condition per event loop (asyncio primitives belong to one loop).
        self._conditions: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Condition
        ] = weakref.WeakKeyDictionary()

    def _condition(self) -> asyncio.Condition:
        loop = asyncio.get_running_loop()
        condition = self._conditions.get(loop)
        if condition is None:
            condition = self._conditions[loop] = asyncio.Condition()
        return condition

    def _pick(self, exclude: set[int]) -> tuple[Replica | None, bool]:
        """The replica to call (or None) and whether any usable replica is only busy."""
        now = self._clock()
        usable = [
            r for i, r in enumerate(self.replicas) if i not in exclude and r.down_until <= now
        ]
        free = [r for r in usable if r.in_flight < r.max_in_flight]
        if free:
            return min(free, key=lambda r: (r.in_flight, r.calls)), True
        return None, bool(usable)

    async def _acquire(self, exclude: set[int]) -> Replica | None:
        condition = self._condition()
        async with condition:
            while True:
                replica, any_usable = self._pick(exclude)
                if replica is not None:
                    replica.in_flight += 1
                    return replica
                if not any_usable:
                    return None
                await condition.wait()

    async def _release(self, replica: Replica) -> None:
        condition = self._condition()
        async with condition:
            replica.in_flight -= 1
            condition.notify_all()

    def _mark_down(self, replica: Replica) -> None:
        replica.failures += 1
        replica.down_until = self._clock() + self.cooldown_s

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        tried: set[int] = set()
        last: ModelError | None = None
        while True:
            replica = await self._acquire(tried)
            if replica is None:
                raise ModelError(
                    f"no replica of {len(self.replicas)} could be reached"
                    + (f" (last: {last})" if last else ""),
                    transient=True,
                )
            try:
                turn = await replica.client.complete(messages, tools, params)
            except ModelError as exc:
                if not is_connection_failure(exc):
                    raise
                self._mark_down(replica)
                tried.add(self.replicas.index(replica))
                last = exc
                continue
            finally:
                await self._release(replica)
            replica.calls += 1
            return turn

    async def aclose(self) -> None:
        for replica in self.replicas:
            await replica.client.aclose()

    def cache_identity(self) -> dict[str, Any]:
        # Replicas serve the same model: which one answered does not change the reply.
        # Every replica sends the same request (openai_wire.chat_request): the first
        # one's identity, with the pool's endpoints for its own.
        identity = dict(self.replicas[0].client.cache_identity())
        identity.pop("api_base", None)
        identity.update(model=self.model, replicas=sorted(redact_url(r.url) for r in self.replicas))
        return identity

    def endpoint(self) -> str | None:
        return self.api_base

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": type(self).__name__,
            "model": self.model,
            "provider": "openai-compatible",
            "api_base": ",".join(str(redact_url(r.url)) for r in self.replicas),
            "replicas": [
                {"url": redact_url(r.url), "max_concurrency": r.max_in_flight}
                for r in self.replicas
            ],
            "cooldown_s": self.cooldown_s,
        }


# -- litellm's Router (--client litellm) --------------------------------------------

ROUTER_GROUP = "harness-replicas"


class LiteLLMRouterClient(LiteLLMClient):
    """LiteLLMClient whose calls go through litellm's Router over the replicas.

    Least-busy routing, ``max_parallel_requests`` per replica, and a replica that
    fails is cooled down while the Router retries the call on another one.
    """

    def __init__(
        self,
        model: str,
        limits: dict[str, int],
        timeout: float = 600.0,
        cooldown_s: float = DEFAULT_COOLDOWN_S,
        tool_choice: str = "auto",
    ):
        super().__init__(model, api_base=None, timeout=timeout, tool_choice=tool_choice)
        for url in limits:
            check_api_base(url)
        self.limits = dict(limits)
        self.cooldown_s = cooldown_s
        self.replica_urls = list(limits)
        self._router: Any = None

    def router(self) -> Any:
        if self._router is None:
            from harness.models.litellm_client import _litellm

            litellm = _litellm()
            self._router = litellm.Router(
                model_list=[
                    {
                        "model_name": ROUTER_GROUP,
                        "litellm_params": {
                            "model": self.model,
                            "api_base": url,
                            "api_key": PLACEHOLDER_KEY,
                            "max_parallel_requests": limit,
                            "timeout": self.timeout,
                        },
                    }
                    for url, limit in self.limits.items()
                ],
                routing_strategy="least-busy",
                num_retries=len(self.limits),
                retry_after=0,
                allowed_fails=0,
                cooldown_time=self.cooldown_s,
            )
        return self._router

    async def send(self, kwargs: dict[str, Any]) -> Any:
        # The Router picks the replica: it owns the endpoints, keys and retries.
        kwargs = dict(kwargs, model=ROUTER_GROUP)
        for routed in ("api_base", "api_key", "num_retries"):
            kwargs.pop(routed, None)
        return await self.router().acompletion(**kwargs)

    def cache_identity(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "replicas": sorted(redact_url(u) for u in self.replica_urls),
            "tool_choice": self.tool_choice,
        }

    def endpoint(self) -> str | None:
        return ",".join(self.replica_urls)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "api_base": ",".join(str(redact_url(u)) for u in self.replica_urls),
            "replicas": [
                {"url": redact_url(url), "max_concurrency": limit}
                for url, limit in self.limits.items()
            ],
            "routing": "least-busy",
            "cooldown_s": self.cooldown_s,
        }


# -- from settings -------------------------------------------------------------------


def build_replica_client(settings: ModelSettings) -> ModelClient:
    """The client over the replicas in ``settings.api_base``."""
    urls = replica_urls(str(settings.api_base))
    configured = settings.replica_concurrency
    limits = {url: int(configured.get(url, settings.concurrency)) for url in urls}
    tool_choice = settings.tool_choice
    inline_reasoning = settings.inline_reasoning
    timeout = transport_timeout(settings)
    if not uses_direct_client(settings):
        return LiteLLMRouterClient(settings.name, limits, timeout=timeout, tool_choice=tool_choice)
    from harness.models.openai_http import OpenAIHTTPClient

    replicas = [
        Replica(
            url,
            OpenAIHTTPClient(
                settings.name,
                url,
                timeout=timeout,
                tool_choice=tool_choice,
                inline_reasoning=inline_reasoning,
            ),
            limit,
        )
        for url, limit in limits.items()
    ]
    return ReplicaPool(settings.name, replicas)
