"""Local servers are not API endpoints: slow calls are waited for, not re-sent;
what does not fit is said in one line; a server that refuses what the run needs
stops it before it starts (preflight)."""

from __future__ import annotations

import asyncio
import secrets

import pytest
from support import toy_reply

from harness.cli import main
from harness.models.base import CONTEXT_OVERFLOW, ModelClient, ModelError
from harness.models.local_server import LOCAL_MAX_WAIT_S, FitReport, LocalPatience, is_loopback_url
from harness.models.openai_http import OpenAIHTTPClient
from harness.models.retry import RetryingClient
from harness.models.settings import ModelSettings, ServedEndpoint, is_local, transport_timeout
from harness.models.urls import join_url, server_root
from harness.testing.fake_server import FakeServer, Reply
from harness.types import AssistantTurn, SamplingParams

HI = [{"role": "user", "content": "hi"}]


def test_which_servers_are_local():
    assert is_loopback_url("http://127.0.0.1:8000/v1") and is_loopback_url("http://localhost:1")
    assert is_loopback_url("http://[::1]:8000/v1") and is_loopback_url("http://127.3.0.1/v1")
    assert not is_loopback_url("http://10.0.0.5:8000/v1") and not is_loopback_url(None)
    assert not is_loopback_url("https://api.example.com/v1")
    assert is_local(ModelSettings("openai/m", api_base="http://127.0.0.1:1/v1,http://localhost:2"))
    assert not is_local(ModelSettings("openai/m", api_base="http://127.0.0.1:1/v1,http://n2:2"))
    assert not is_local(ModelSettings("gpt-4.1"))
    # --local-server yes|no decides (an SSH tunnel to a remote API is on loopback).
    loopback = "http://127.0.0.1:1/v1"
    assert not is_local(ModelSettings("openai/m", api_base=loopback, local=False))
    assert is_local(ModelSettings("openai/m", api_base="http://n2:2/v1", local=True))
    served = ModelSettings("openai/m", api_base="http://h:5/v1")
    served.served = ServedEndpoint("http://h:5/v1", {}, "vllm:x")
    assert is_local(served)
    # The HTTP client of a local server waits long; the retry wrapper decides.
    assert transport_timeout(served) == LOCAL_MAX_WAIT_S
    assert transport_timeout(ModelSettings("gpt-4.1", timeout_s=7)) == 7


def _run(coro):
    return asyncio.run(coro)


def test_a_slow_local_call_is_waited_for_and_sent_once():
    waits = FitReport()
    with FakeServer() as server:
        server.enqueue(Reply.slow(1.2, Reply.text("late but fine")))
        inner = OpenAIHTTPClient("openai/fake-model", server.url, timeout=LOCAL_MAX_WAIT_S)
        patience = LocalPatience(server.url, waits, check_every_s=0.2)
        client = RetryingClient(
            inner, max_attempts=3, base_delay=0.01, timeout=0.3, patience=patience
        )

        async def call():
            try:
                return await client.complete(HI, [], SamplingParams())
            finally:
                await inner.aclose()

        turn = _run(call())
        assert turn.content == "late but fine"
        assert len(server.chat_requests) == 1  # never re-sent while it was computing
    assert (waits.slow_calls, client.stats.retries) == (1, 0) and waits.longest_s >= 1.2
    (line,) = waits.lines(0.3)
    assert "1 model call(s)" in line and "not sent again" in line


class Hanging(ModelClient):
    """A call that never returns (a server that died mid-request without closing)."""

    name = "hanging"

    def __init__(self):
        self.calls = 0

    async def complete(self, messages, tools, params) -> AssistantTurn:
        self.calls += 1
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_a_gone_local_server_is_given_up_on_and_retried():
    with FakeServer() as server:
        url = server.url
    # Nothing listens there now: the wait ends at the first liveness check.
    inner = Hanging()
    patience = LocalPatience(url, FitReport(), check_every_s=0.1)
    client = RetryingClient(inner, max_attempts=2, base_delay=0.01, timeout=0.2, patience=patience)
    with pytest.raises(ModelError, match="local server") as caught:
        _run(client.complete(HI, [], SamplingParams()))
    assert caught.value.transient and inner.calls == 2


def test_a_local_call_stops_at_the_longest_wait():
    with FakeServer() as server:
        inner = Hanging()
        waits = FitReport()
        patience = LocalPatience(server.url, waits, max_wait_s=0.5, check_every_s=0.1)
        client = RetryingClient(inner, max_attempts=1, timeout=0.1, patience=patience)
        with pytest.raises(ModelError):
            _run(client.complete(HI, [], SamplingParams()))
    assert waits.gave_up == 1 and "did not finish" in waits.lines(0.1)[0]


def run(suite, server, out, *extra) -> int:
    argv = ["run", "--suite", str(suite), "--model", "openai/fake-model", "--api-base"]
    argv += [server.url, "--quiet", "--no-cache", "--retry-delay", "0.01", "--out", str(out)]
    return main([*argv, *extra])


def test_requests_longer_than_the_context_are_said_at_the_first_and_counted_at_the_end(
    toy_suite, tmp_path, capsys
):
    overflow = Reply.http_error(400, "This model's maximum context length is 8192 tokens")
    with FakeServer(handler=lambda request: overflow) as server:
        assert run(toy_suite, server, tmp_path / "r") == 0  # scored failures, not errors
    err = capsys.readouterr().err.splitlines()
    lines = [line for line in err if "context window" in line]
    # The first overflow once, as it happens (not once a sample); the count at the end.
    assert len(lines) == 2, err
    assert lines[0].startswith("a request was longer than the model's context window (")
    assert "maximum context length is 8192" in lines[0]
    assert lines[1].startswith("8 request(s)")
    assert err.index(lines[0]) < err.index(next(e for e in err if " ran, " in e))


def test_a_run_says_before_it_starts_which_samples_cannot_fit(toy_suite, tmp_path, capsys):
    # The toy samples' first requests (a short question and one tool) are ~50 tokens.
    card = {"max_model_len": 30}
    with FakeServer(handler=toy_reply, model_card=card) as server:
        run(toy_suite, server, tmp_path / "vllm")
    err = capsys.readouterr().err.splitlines()
    (line,) = [line for line in err if "cannot fit" in line]
    assert line.startswith("8 of 8 samples cannot fit:")
    assert "context window of 30 tokens (max_model_len in its /v1/models)" in line
    assert err[0] == line  # before anything else the run says
    # llama.cpp's server says it in /props (per slot); a window that fits says nothing.
    props = {"default_generation_settings": {"n_ctx": 30}}
    with FakeServer(handler=toy_reply, props=props) as server:
        run(toy_suite, server, tmp_path / "llamacpp")
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "cannot fit" in line]
    assert "30 tokens (default_generation_settings.n_ctx in its /props)" in line
    with FakeServer(handler=toy_reply, model_card={"max_model_len": 4096}) as server:
        assert run(toy_suite, server, tmp_path / "fits") == 0
    assert "cannot fit" not in capsys.readouterr().err


def test_the_context_window_is_read_from_the_server_or_its_start_command():
    from harness.models.server_info import (
        ServerInfo,
        context_window,
        context_window_of_arguments,
    )
    from harness.serving.specs import LlamaCppSpec

    info = ServerInfo("u", True, models=[{"id": "other", "max_model_len": 9}, {"id": "m"}])
    assert context_window(info, "m") is None  # another model's window is not this one's
    info.props = {"n_ctx": 2048}
    assert context_window(info, "m").tokens == 2048
    info.models[1]["max_model_len"] = 32768
    assert context_window(info, "m").tokens == 32768
    assert context_window_of_arguments(["--max-model-len=8192"]).tokens == 8192
    assert context_window_of_arguments(["-c", "512", "--ctx-size", "1024"]).tokens == 1024
    assert context_window_of_arguments(["--n_ctx", "0"]) is None  # the model's own: unknown
    assert context_window_of_arguments(["--port", "8"]) is None
    # --serve llamacpp: the harness's default window, or the user's --serve-arg.
    llama = LlamaCppSpec("/m/q.gguf", "q")
    assert context_window_of_arguments(llama.arguments("127.0.0.1", 9)).tokens == 16384
    mine = LlamaCppSpec("/m/q.gguf", "q", extra_args=["--n_ctx=4096"])
    command = [*mine.arguments("127.0.0.1", 9), *mine.extra_args]
    assert context_window_of_arguments(command).tokens == 4096


def test_a_first_request_is_estimated_short_rather_than_long():
    from harness.models.server_info import ContextWindow
    from harness.run.context_fit import CHARS_PER_TOKEN, first_request_tokens, too_long
    from harness.task.contract import Sample

    text = "word " * 1000  # 5,000 characters: ~1,000 tokens in any tokenizer
    sample = Sample(
        id="s",
        benchmark="b",
        subset="x",
        tools=[],
        initial_messages=[{"role": "user", "content": text}],
    )
    assert first_request_tokens(sample) <= len(text) // CHARS_PER_TOKEN + 20
    assert too_long([sample], ContextWindow(900, "test")) == [
        (sample, first_request_tokens(sample))
    ]
    assert too_long([sample], ContextWindow(2000, "test")) == []


def test_context_overflow_is_counted_by_the_retry_wrapper():
    class Overflowing(ModelClient):
        async def complete(self, messages, tools, params):
            raise ModelError("too long", kind=CONTEXT_OVERFLOW)

    report = FitReport()
    client = RetryingClient(Overflowing(), max_attempts=3, fit_report=report)
    with pytest.raises(ModelError):
        _run(client.complete(HI, [], SamplingParams()))
    assert report.context_overflows == 1


# -- preflight ---------------------------------------------------------------------


def test_the_preflight_request_is_the_runs_wire_format(toy_suite, tmp_path):
    with FakeServer(handler=toy_reply) as server:
        assert run(toy_suite, server, tmp_path / "r", "--tool-choice", "required") == 0
        preflights = server.preflight_requests
        assert server.chat_requests  # the run itself went on
    parallel = [r for r in preflights if any(m.get("tool_calls") for m in r.body["messages"])]
    assert len(preflights) == 3 and len(parallel) == 1
    body = parallel[0].body
    assert body["tool_choice"] == "required" and body["tools"][0]["type"] == "function"
    assert body["max_tokens"] == 1
    # Its one string argument is bounded: a server that ignores max_tokens while it
    # writes arguments still ends the reply (models/argument_bounds.py).
    for request in preflights:
        for tool in request.body["tools"]:
            properties = tool["function"]["parameters"]["properties"].values()
            assert all(p.get("maxLength") for p in properties if p["type"] == "string")
    assistant = next(m for m in body["messages"] if m["role"] == "assistant")
    assert assistant["content"] == "" and len(assistant["tool_calls"]) == 2


def test_a_server_without_a_tool_parser_stops_the_run_in_one_line(toy_suite, tmp_path, capsys):
    refusal = Reply.http_error(
        400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'
    )
    with FakeServer(handler=toy_reply, preflight_reply=refusal) as server:
        code = run(toy_suite, server, tmp_path / "r")
        assert server.chat_requests == []  # not one sample was sent
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "refuses requests with tools" in err[0] and "--enable-auto-tool-choice" in err[0]


def test_a_chat_format_without_parallel_calls_is_named(toy_suite, tmp_path, capsys):
    def refuse_parallel(request: dict) -> Reply:
        if any(len(m.get("tool_calls") or []) > 1 for m in request["messages"]):
            return Reply.http_error(500, "template cannot render several tool calls")
        return Reply.text("ok")

    with FakeServer(handler=toy_reply, preflight_reply=refuse_parallel) as server:
        code = run(toy_suite, server, tmp_path / "r")
        assert len(server.preflight_requests) == 3
    err = capsys.readouterr().err
    assert code == 2 and "refuses a history with parallel tool calls" in err


def test_the_preflight_requests_are_in_flight_at_once(toy_suite, tmp_path):
    # One round trip before the run, not one per request: every preflight request
    # reaches the server before the first of them is answered.
    slow = Reply(content="ok", delay=1.0)
    with FakeServer(handler=toy_reply, preflight_reply=slow) as server:
        assert run(toy_suite, server, tmp_path / "r") == 0
        arrivals = sorted(r.received_at for r in server.preflight_requests)
    assert len(arrivals) == 3 and arrivals[-1] - arrivals[0] < slow.delay


def test_with_the_servers_default_tool_choice_where_it_shows_tools_is_not_asked(
    toy_suite, tmp_path
):
    with FakeServer(handler=toy_reply, preflight_reply=chatml_function_calling_counts) as server:
        assert run(toy_suite, server, tmp_path / "r", "--tool-choice", "omit") == 0
        preflights = server.preflight_requests
        requests = server.chat_requests
    assert len(preflights) == 2
    assert not any(m["role"] == "system" for r in preflights for m in r.body["messages"])
    assert requests and all(r.body["messages"][0]["role"] != "system" for r in requests)


def test_no_preflight_in_prompt_mode_or_when_asked(toy_suite, tmp_path):
    refusal = Reply.http_error(400, "no tools here")
    with FakeServer(handler=toy_reply, preflight_reply=refusal) as server:
        assert run(toy_suite, server, tmp_path / "a", "--no-preflight") == 0
        assert run(toy_suite, server, tmp_path / "b", "--prompt-mode") in (0, 1)
        assert server.preflight_requests == []


def test_a_slow_or_busy_server_does_not_fail_the_preflight(toy_suite, tmp_path):
    with FakeServer(handler=toy_reply, preflight_reply=Reply.rate_limited(0)) as server:
        assert run(toy_suite, server, tmp_path / "r") == 0


def test_a_refused_tool_choice_is_named(toy_suite, tmp_path, capsys):
    def refuse_required(request: dict) -> Reply:
        if request.get("tool_choice") == "required":
            return Reply.http_error(500, "")
        return Reply.text("ok")

    with FakeServer(handler=toy_reply, preflight_reply=refuse_required) as server:
        code = run(toy_suite, server, tmp_path / "r", "--tool-choice", "required")
    err = capsys.readouterr().err
    assert code == 2 and "refuses --tool-choice required" in err


def chatml_function_calling_counts(request: dict) -> Reply:
    """Token counts like llama-cpp-python's chatml-function-calling format: the
    tool list is written into the system message only."""
    messages = request["messages"]
    shown = bool(request.get("tools")) and any(m["role"] == "system" for m in messages)
    return Reply(content="ok", prompt_tokens=10 * len(messages) + (80 if shown else 0))


def test_a_server_that_shows_tools_only_in_a_system_message_gets_one(toy_suite, tmp_path, capsys):
    with FakeServer(handler=toy_reply, preflight_reply=chatml_function_calling_counts) as server:
        assert run(toy_suite, server, tmp_path / "r") == 0
        requests = server.chat_requests
    assert requests and all(
        r.body["messages"][0] == {"role": "system", "content": ""} for r in requests
    )
    err = capsys.readouterr().err.splitlines()
    lines = [line for line in err if "system message" in line]
    assert len(lines) == 1 and "only inside a system message" in lines[0]
    # The same chat format's argument step has no token cap: the bound is offered once.
    assert len([line for line in err if "--argument-max-length N" in line]) == 1


def test_with_a_bound_the_chat_formats_hint_is_not_given(toy_suite, tmp_path, capsys):
    with FakeServer(handler=toy_reply, preflight_reply=chatml_function_calling_counts) as server:
        assert run(toy_suite, server, tmp_path / "r", "--argument-max-length", "64") == 0
    assert "--argument-max-length N" not in capsys.readouterr().err


def test_a_server_that_shows_tools_anyway_gets_no_system_message(toy_suite, tmp_path, capsys):
    def counts(request: dict) -> Reply:
        return Reply(content="ok", prompt_tokens=10 * len(request["messages"]) + 80)

    with FakeServer(handler=toy_reply, preflight_reply=counts) as server:
        assert run(toy_suite, server, tmp_path / "r") == 0
        requests = server.chat_requests
    assert requests and not any(m["role"] == "system" for r in requests for m in r.body["messages"])
    assert "system message" not in capsys.readouterr().err


# -- an api base with a query ------------------------------------------------------------


def test_paths_are_joined_before_the_query():
    assert join_url("http://h:1/v1", "chat/completions") == "http://h:1/v1/chat/completions"
    assert join_url("http://h/v1/", "/models") == "http://h/v1/models"
    assert join_url("http://h/v1?api_key=K&x=1", "chat/completions") == (
        "http://h/v1/chat/completions?api_key=K&x=1"
    )
    assert join_url("http://u:p@h/v1/?k=K#f", "models") == "http://u:p@h/v1/models?k=K#f"
    assert join_url("http://h", "models") == "http://h/models"
    assert server_root("http://h/v1/?k=K") == "http://h?k=K"
    assert join_url(server_root("http://h/v1?k=K"), "props") == "http://h/props?k=K"


def test_an_api_base_with_a_query_key_is_called_with_the_key_at_the_end(
    toy_suite, tmp_path, capsys
):
    key = "query-key-" + secrets.token_hex(8)
    with FakeServer(handler=toy_reply) as server:
        base = f"{server.url}?api_key={key}"
        argv = ["run", "--suite", str(toy_suite), "--model", "openai/fake-model", "--api-base"]
        argv += [base, "--quiet", "--no-cache", "--retry-delay", "0.01"]
        assert main([*argv, "--out", str(tmp_path / "r")]) == 0
        requests = server.requests
        # litellm would append its paths inside the query: refused in one line.
        assert main([*argv, "--client", "litellm", "--out", str(tmp_path / "l")]) == 2
    paths = {(r.method, r.path) for r in requests}
    assert ("POST", "/v1/chat/completions") in paths and ("GET", "/v1/models") in paths
    assert all(r.query == f"api_key={key}" for r in requests), [(r.path, r.query) for r in requests]
    streams = "".join(capsys.readouterr())
    assert "cannot call an api base with a query" in streams
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 3
    for path in written:
        assert key not in path.read_text(errors="replace"), path
    assert key not in streams


def _closed_port_url() -> str:
    """A loopback URL nothing listens on (a port just bound and released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_an_api_base_where_nothing_listens_stops_the_run_in_one_line(toy_suite, tmp_path, capsys):
    import time

    dead = _closed_port_url()
    argv = ["run", "--suite", str(toy_suite), "--model", "openai/fake-model", "--api-base", dead]
    started = time.monotonic()
    code = main([*argv, "--quiet", "--no-cache", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "nothing answers at" in err[0] and "connection refused" in err[0]
    assert time.monotonic() - started < 30  # not the minutes of every sample's retries
    records = tmp_path / "r" / "samples.jsonl"
    assert not records.exists() or records.read_text(encoding="utf-8") == ""  # no sample ran


def test_a_dead_replica_beside_a_live_one_is_said_and_the_run_goes_on(toy_suite, tmp_path, capsys):
    with FakeServer(handler=toy_reply) as server:
        both = f"{server.url},{_closed_port_url()}"
        argv = ["run", "--suite", str(toy_suite), "--model", "openai/fake-model"]
        argv += ["--api-base", both, "--quiet", "--no-cache", "--retry-delay", "0.01"]
        assert main([*argv, "--out", str(tmp_path / "r")]) == 0
    assert "connection refused; the run goes on without it" in capsys.readouterr().err


def test_reachability_is_judged_over_every_endpoint():
    from harness.errors import ConfigError
    from harness.models.preflight import PreflightFindings, check_reachable

    alive, dead = PreflightFindings(), PreflightFindings(unreachable="connection refused")
    assert check_reachable({"http://a:1/v1": alive}) == []
    assert check_reachable({}) == []
    lines = check_reachable({"http://a:1/v1": alive, "http://b:2/v1": dead})
    assert lines == ["http://b:2/v1: connection refused; the run goes on without it"]
    with pytest.raises(ConfigError, match=r"nothing answers at http://b:2/v1, http://c:3/v1"):
        check_reachable({"http://b:2/v1": dead, "http://c:3/v1": dead})
