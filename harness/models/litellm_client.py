"""The model client for API models and OpenAI-compatible local servers (litellm).

One client covers hosted APIs (``gpt-4o``, ``anthropic/claude-...``) and local
servers such as vLLM or SGLang (``openai/<served-name>`` or
``hosted_vllm/<served-name>`` with ``api_base``), using native function calling.
litellm is imported on the first call, not with this module, so that the CLI
starts fast. Its own retries are off: RetryingClient (retry.py) decides.

Errors become ModelError: rate limits (429, with Retry-After), server errors,
timeouts and dropped connections are transient; other 4xx (bad request, bad or
missing key, unknown model) are not. No message, record or description carries
a credential.

Every reply is read within the direct client's size cap, by the httpx transport
of capped_transport.py, which litellm is given in one of its two ways (below);
a reply over the cap is refused as the direct client refuses it (ReplyTooLarge,
not retried). A provider that litellm reads some other way, which the transport
never sees, is refused on its first reply rather than run uncapped.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from typing import Any

from harness.boundary.json_value import JsonObject
from harness.errors import ConfigError
from harness.models.base import CONTEXT_OVERFLOW, ModelClient, ModelError
from harness.models.capped_transport import CappedTransport, watching
from harness.models.openai_wire import (
    DEFAULT_TOOL_CHOICE,
    chat_request,
    check_tool_choice,
    endpoint_identity,
    http_error,
    turn_from_response,
)
from harness.models.redact import redact_url, scrub_secrets
from harness.models.urls import has_query
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema

# OpenAI-compatible local servers accept any key; the OpenAI SDK insists on one.
PLACEHOLDER_KEY = "EMPTY"

# Providers that litellm calls through its own HTTP handler, which takes the
# capped transport as the ``client`` argument of each call. litellm calls the
# others (openai, azure and most OpenAI-compatible hosts) through the OpenAI SDK,
# whose client it builds around ``litellm.aclient_session``, set to the capped
# transport once. Which provider goes which way was found by calling each one
# against a local server (litellm 1.110); tests/models/test_models_litellm.py
# checks providers of both kinds, and a provider read neither way is refused.
LITELLM_HANDLER_PROVIDERS = frozenset(
    {
        "a2a", "anthropic", "azure_ai", "bedrock", "bedrock_mantle", "bytez", "cometapi",
        "compactifai", "databricks", "databricks_agent", "datarobot", "deepseek", "edenai",
        "fireworks_ai", "gemini", "groq", "heroku", "hosted_vllm", "huggingface",
        "langflow", "langgraph", "lemonade", "microsoft_365_copilot", "minimax", "mistral",
        "nadir", "ollama", "ollama_chat", "opencode_go", "openrouter", "ovhcloud",
        "snowflake", "together_ai", "xai",
    }
)  # fmt: skip


@dataclass(frozen=True)
class _Transports:
    """The capped transport, as each of litellm's two ways of calling wants it."""

    capped: CappedTransport
    handler: Any  # litellm's AsyncHTTPHandler around ``capped``


@lru_cache(maxsize=1)
def _litellm() -> Any:
    """litellm, imported once, told to keep quiet and to read replies capped.

    The cost map is read from the installed package (there may be no internet),
    and litellm's debug banners and info logs are switched off through its own
    settings; our records say what happened.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import httpx
    import litellm

    litellm.suppress_debug_info = True
    litellm.set_verbose = False
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # The OpenAI SDK's way (follow_redirects as litellm's own client has it).
    litellm.aclient_session = httpx.AsyncClient(
        transport=_transports().capped, follow_redirects=True
    )
    return litellm


@lru_cache(maxsize=1)
def _transports() -> _Transports:
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    capped = CappedTransport()
    return _Transports(capped, AsyncHTTPHandler(transport=capped))


def litellm_version() -> str:
    try:
        return metadata.version("litellm")
    except metadata.PackageNotFoundError:
        return "not installed"


def provider_of(model: str) -> str:
    """The provider prefix of a litellm model name (``openai`` when there is none)."""
    if "/" in model:
        return model.split("/", 1)[0]
    try:
        return str(_litellm().get_llm_provider(model=model)[1])
    except Exception:  # unknown model: litellm will say so on the first call
        return "unknown"


def unknown_model(model: str) -> str | None:
    """One line when litellm cannot tell which provider serves ``model`` (a bare
    name not in its model map, or an unknown ``provider/`` prefix), else None.
    Offline: litellm's installed model map. Every call of such a model would fail
    the same way, so the run is refused before it starts. Not for a model on an
    ``api_base``: any name goes to an OpenAI-compatible server."""
    try:
        _litellm().get_llm_provider(model=model)
    except Exception:  # litellm raises its BadRequestError: "LLM Provider NOT provided"
        return (
            f"model '{model}': litellm knows no provider for it; name one as "
            "provider/model (e.g. openai/gpt-4.1), or call an OpenAI-compatible "
            "server (--api-base)"
        )
    return None


def missing_credentials(
    model: str, api_base: str | None = None, api_key: str | None = None
) -> str | None:
    """One line saying which API key is missing for ``model``, or None if it can run.

    A local server (``api_base`` given) needs no key. Unknown providers pass here
    and fail, clearly, on their first call.
    """
    if api_key or api_base:
        return None
    try:
        report = _litellm().validate_environment(model=model)
    except Exception:
        return None
    missing = [str(name) for name in report.get("missing_keys") or []]
    if report.get("keys_in_environment") or not missing:
        return None
    return f"model '{model}' needs {', '.join(missing)} set in the environment"


def check_api_base(api_base: str | None) -> None:
    """ConfigError (one line) for an api base with a query: litellm and the OpenAI
    SDK append their paths to the whole URL, inside the query (urls.py)."""
    if api_base and has_query(api_base):
        raise ConfigError(
            f"--client litellm cannot call an api base with a query ({redact_url(api_base)}): "
            "litellm appends its paths after the query; use --client direct"
        )


class LiteLLMClient(ModelClient):
    """Calls a chat model through ``litellm.acompletion``.

    ``extra_kwargs`` go to every litellm call (e.g. ``extra_headers``); sampling
    ``params.extra`` per call (e.g. ``{"extra_body": {"top_k": 20}}``).
    ``drop_params`` lets litellm drop sampling settings a provider does not
    support (e.g. ``seed``) instead of failing every call. Messages, tools and
    ``tool_choice`` are those of ``openai_wire.chat_request``, as for the direct
    client.
    """

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 600.0,
        drop_params: bool = True,
        extra_kwargs: Mapping[str, object] | None = None,
        name: str | None = None,
        tool_choice: str = DEFAULT_TOOL_CHOICE,
    ):
        check_api_base(api_base)
        self.model = model
        self.name = name or model
        self.api_base = api_base
        self.timeout = timeout
        self.tool_choice = check_tool_choice(tool_choice)
        self.drop_params = drop_params
        self._api_key = api_key
        self._extra_kwargs = dict(extra_kwargs or {})
        self._resolved_key: str | None = None
        self._key_resolved = False

    def _key(self) -> str | None:
        """The key to send: the given one, else the provider's environment variable
        (litellm reads it), else a placeholder for a local server."""
        if not self._key_resolved:
            self._resolved_key = self._api_key
            if self._resolved_key is None and self.api_base:
                env_missing = missing_credentials(self.model) is not None
                self._resolved_key = PLACEHOLDER_KEY if env_missing else None
            self._key_resolved = True
        return self._resolved_key

    def request_kwargs(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> dict[str, object]:
        """The keyword arguments of one ``litellm.acompletion`` call."""
        kwargs: dict[str, object] = {
            "timeout": self.timeout,
            "num_retries": 0,
            "drop_params": self.drop_params,
            **self._extra_kwargs,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if provider_of(self.model) in LITELLM_HANDLER_PROVIDERS:
            _litellm()  # sets up the transports
            kwargs["client"] = _transports().handler
        key = self._key()
        if key is not None:
            kwargs["api_key"] = key
        # model, messages, tools, tool_choice, sampling and params.extra (last).
        kwargs.update(chat_request(self.model, messages, tools, params, self.tool_choice))
        return kwargs

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        kwargs = self.request_kwargs(messages, tools, params)
        with watching() as watch:
            try:
                response = await self.send(kwargs)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if watch.error is not None:  # the transport's own (over the cap, say)
                    raise watch.error from None
                # "from None": the chained litellm/httpx exceptions may quote the key.
                raise self.model_error(exc) from None
        if watch.replies == 0:
            raise ModelError(
                f"litellm read the reply of provider '{provider_of(self.model)}' without the "
                "reply-size cap (harness/models/capped_transport.py); this provider is not "
                "supported with --client litellm",
                transient=False,
            )
        try:
            data = response.model_dump()
        except Exception as exc:
            raise ModelError(f"unreadable reply: {type(exc).__name__}", transient=True) from None
        return turn_from_response(data, self._secrets())

    async def aclose(self) -> None:
        """Close the capped transport's connections (shared by every litellm
        client: one used again opens new ones)."""
        if _litellm.cache_info().currsize:  # nothing to close before the first call
            await _transports().capped.aclose()

    async def send(self, kwargs: dict[str, object]) -> Any:
        """One litellm call (subclasses route it elsewhere, e.g. through a Router)."""
        return await _litellm().acompletion(**kwargs)

    def _secrets(self) -> list[str | None]:
        return [
            self._api_key,
            self._resolved_key if self._resolved_key != PLACEHOLDER_KEY else None,
        ]

    def model_error(self, exc: Exception) -> ModelError:
        """Classify a litellm exception as a transient or permanent ModelError."""
        litellm = _litellm()
        status = getattr(exc, "status_code", None)
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        message = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, litellm.ContextWindowExceededError):
            text = scrub_secrets(message, self._secrets())[:1000]
            return ModelError(text, transient=False, kind=CONTEXT_OVERFLOW)
        if isinstance(exc, (litellm.Timeout, litellm.APIConnectionError)):
            text = scrub_secrets(message, self._secrets())[:1000]
            return ModelError(text, transient=True)
        if isinstance(status, int):
            return http_error(status, message, headers, self._secrets())
        # Not an HTTP failure (a bug, a bad argument): retrying would not help.
        return ModelError(scrub_secrets(message, self._secrets())[:1000], transient=False)

    def cache_identity(self) -> dict[str, object]:
        """What, besides the request, decides the reply (for the response cache)."""
        return endpoint_identity(self.model, self.api_base, self.tool_choice)

    def endpoint(self) -> str | None:
        return self.api_base or self.model

    def describe(self) -> JsonObject:
        return {
            "name": self.name,
            "kind": type(self).__name__,
            "model": self.model,
            "provider": provider_of(self.model),
            "api_base": redact_url(self.api_base),
            "timeout_s": self.timeout,
            "drop_params": self.drop_params,
            "tool_choice": self.tool_choice,
            "extra_kwargs": [*sorted(self._extra_kwargs)],
            "litellm_version": litellm_version(),
        }
