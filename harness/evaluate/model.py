"""The model a run calls: its endpoint, its settings and fingerprint, and the
checks against its server before the first sample (preflight, context window)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.config import validate
from harness.config.run_config import RunConfig

if TYPE_CHECKING:
    from collections.abc import Callable

    from harness.models.base import ModelClient
    from harness.models.settings import ModelSettings
    from harness.run.runner import WorkItem
    from harness.serving.plan import EndpointPlan


@dataclass
class PlannedModel:
    """The model under test as planned: the settings its clients are built from,
    the fingerprint of its weights and the scope of its response cache."""

    settings: ModelSettings
    fingerprint: dict[str, Any]
    cache_scope: str | None  # "run", "cross-run", or None without a cache


def plan_model_endpoint(config: RunConfig) -> EndpointPlan:
    """The model name and URL(s) the run calls (a server it starts, replicas)."""
    from harness.serving.plan import plan_endpoint

    endpoint = plan_endpoint(config)
    assert endpoint.model is not None  # plan_endpoint names the model or raises
    if endpoint.api_base and not endpoint.spec:
        for url in endpoint.api_base.split(","):
            validate.check_url(url.strip())
    return endpoint


def plan_model(config: RunConfig, endpoint: EndpointPlan, run_dir: Path) -> PlannedModel:
    """The model's settings (its cache in or beside ``run_dir``), checked that it
    can be called, and the fingerprint of its weights."""
    from harness.models.fingerprint import object_fingerprint, run_fingerprint
    from harness.models.settings import ModelSettings, check_model, is_builtin

    model, api_base = endpoint.model, endpoint.api_base
    assert model is not None  # plan_model_endpoint checked it
    cache_dir, cache_scope = config.cache_place(run_dir)
    if cache_dir is not None:
        validate.writable_folder(cache_dir, "--cache-dir")
    settings = ModelSettings(
        name=model,
        api_base=api_base,
        prompt_mode=config.prompt_mode,
        timeout_s=config.timeout,
        max_attempts=config.max_attempts,
        concurrency=config.concurrency,
        cache_dir=cache_dir,
        client=config.client,
        retry_base_delay=config.retry_delay,
        tool_choice=config.tool_choice,
        argument_max_length=config.argument_max_length,
        local=config.local_server,
    )
    endpoint.configure(settings)
    given = config.model_object
    if given is not None:
        # A client object the caller built: nothing to check, and only the caller
        # knows its weights (model_revision).
        fingerprint = object_fingerprint(given, model, config.model_revision)
    else:
        check_model(settings)
        # Which weights answer (and, with api_base, refuse a model the server does not serve).
        fingerprint = run_fingerprint(
            model,
            api_base,
            spec=endpoint.spec,
            revision=config.model_revision,
            builtin=is_builtin(model),
            say=say,
        )
    settings.fingerprint = fingerprint["id"]
    return PlannedModel(settings, fingerprint, cache_scope)


def model_factory(base: ModelSettings) -> Callable[[str, str | None], ModelClient]:
    """Builds rehearser / critic clients like the actor's (same timeouts, cache)."""
    from harness.models.settings import check_model
    from harness.run.clients import build_remote_client

    def build(name: str, api_base: str | None) -> ModelClient:
        same_endpoint = name == base.name and api_base == base.api_base
        settings = replace(
            base,
            name=name,
            api_base=api_base,
            prompt_mode=False,
            # The actor's weights' fingerprint says nothing about another endpoint.
            fingerprint=base.fingerprint if same_endpoint else None,
        )
        check_model(settings)
        return build_remote_client(settings)

    return build


def say(line: str) -> None:
    print(line, file=sys.stderr)


def preflight(settings: ModelSettings) -> None:
    """Stop before the run, in one line, when the server refuses what the run
    sends (tools, parallel calls in the history): models/preflight.py. Only for
    OpenAI-compatible servers (api_base, serve) in native tool-calling mode."""
    if not settings.api_base or settings.prompt_mode:
        return
    from harness.models.openai_http import served_name
    from harness.models.preflight import check_reachable, unanswered_line
    from harness.models.preflight import preflight as check_server
    from harness.models.redact import redact_url
    from harness.models.settings import is_builtin

    if is_builtin(settings.name):
        return
    urls = [url.strip() for url in settings.api_base.split(",")]
    found = {
        url: check_server(url, served_name(settings.name), settings.tool_choice, settings.timeout_s)
        for url in urls
    }
    for line in check_reachable(found):  # stops the run when no endpoint answers
        say(line)
    for url, findings in found.items():
        if findings.unanswered:
            say(unanswered_line(url, settings.timeout_s))
        if findings.tools_need_system_message and not settings.tool_placement.system_message:
            settings.tool_placement.system_message = True
            say(
                f"{redact_url(url)} shows the model its tools only inside a system "
                "message (llama-cpp-python's chatml-function-calling does): conversations "
                "without one get an empty system message"
            )
            if settings.argument_max_length is None:
                # Same chat format: its argument step ignores max_tokens (argument_bounds.py).
                say(
                    f"{redact_url(url)} may write a tool argument until its context "
                    "window is full (chatml-function-calling ignores --max-tokens there); "
                    "--argument-max-length N bounds string arguments"
                )


def say_what_cannot_fit(
    settings: ModelSettings, endpoint: EndpointPlan, todo: list[WorkItem]
) -> None:
    """One line before the run when some samples' first requests are longer than
    the server's context window (where it is known): context_fit.py."""
    from harness.models.openai_http import served_name
    from harness.models.settings import is_builtin
    from harness.run.context_fit import fit_line, server_window, unique_samples

    if not settings.api_base or is_builtin(settings.name):
        return

    spec = endpoint.spec
    arguments = None
    if spec is not None and endpoint.port is not None:
        arguments = [*spec.arguments(endpoint.host, endpoint.port), *spec.extra_args]
    window = server_window(settings.api_base, served_name(settings.name), arguments)
    if window is not None:
        line = fit_line(unique_samples(item.sample for item in todo), window)
        if line is not None:
            say(line)
