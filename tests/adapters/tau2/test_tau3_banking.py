"""banking_knowledge's retrieval configurations: every offline one runs offline, the
embedding-backed ones run through an OpenAI-compatible endpoint (here the fake
server's /v1/embeddings), and what cannot run here is refused in one line."""

from __future__ import annotations

import asyncio
import os

import pytest
from tau3_support import checkout_or_skip

from harness.adapters.tau2 import Tau3Adapter, banking, domains
from harness.errors import ConfigError
from harness.strategies.plain import PlainStrategy
from harness.task.contract import RecordView, Services
from harness.testing.fake_server import FakeServer
from harness.types import SamplingParams, ToolCall

ADAPTER = Tau3Adapter()
TASK = "task_075"  # open the checking account with the lowest foreign ATM fees


@pytest.fixture(scope="module")
def checkout():
    return checkout_or_skip()


def oracle_reward(sample) -> float:
    trajectory = asyncio.run(
        PlainStrategy().run(sample, ADAPTER.oracle(sample), Services(), SamplingParams())
    )
    return ADAPTER.score_now(sample, trajectory, Services()).reward


def load(checkout, retrieval: str, ids=(TASK,)):
    options = {"retrieval": retrieval}
    return ADAPTER.load("banking_knowledge", ids=list(ids), data_dir=checkout, options=options)


@pytest.mark.parametrize("retrieval", banking.OFFLINE)
def test_every_offline_configuration_runs_offline(checkout, retrieval, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (sample,) = load(checkout, retrieval)
    assert sample.metadata["retrieval"] == retrieval
    assert oracle_reward(sample) == 1.0
    names = {tool["function"]["name"] for tool in sample.tools}
    assert ("KB_search" in names) == retrieval.startswith("bm25")
    assert ("grep" in names) == (retrieval in ("bm25_grep", "grep_only"))


def test_banking_calls_run_in_the_tool_thread(checkout, monkeypatch):
    """Its retrieval tools search an index (or ask an embedding endpoint): off the
    loop, within the time budget, unlike the original domains' table lookups."""
    from harness.adapters.tau2 import environment

    sent = []
    real = environment.run_tool_call

    async def spy(function, *args, **kwargs):
        sent.append(args[0].name)
        return await real(function, *args, **kwargs)

    monkeypatch.setattr(environment, "run_tool_call", spy)
    (sample,) = load(checkout, "bm25")
    assert oracle_reward(sample) == 1.0
    assert sent  # every agent call of the oracle's episode


def test_golden_retrieval_puts_the_task_s_own_documents_in_the_policy(checkout):
    (golden,) = load(checkout, "golden_retrieval")
    (plain,) = load(checkout, "no_knowledge")
    required = ADAPTER.task_of(golden).required_documents
    assert required
    system = golden.initial_messages[0]["content"]
    assert len(system) > len(plain.initial_messages[0]["content"])
    assert "(No documents provided)" not in system


def test_the_retrieval_configuration_is_named_beside_the_score(checkout):
    (sample,) = load(checkout, "bm25")
    from harness.types import Score

    records = [RecordView(sample.id, sample.subset, 0, "ok", Score(True, 1.0), sample.metadata)]
    notes = ADAPTER.aggregate(records).notes
    assert "banking_knowledge retrieval configuration: bm25" in notes


def test_an_embedding_configuration_runs_through_an_openai_compatible_endpoint(
    checkout, monkeypatch, tmp_path
):
    """tau2-bench's own OpenAI embedder, pointed at the endpoint as its OpenAI client
    reads it (OPENAI_BASE_URL); its embedding cache goes to ./data/.embeddings_cache."""
    monkeypatch.chdir(tmp_path)
    with FakeServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-embeddings")
        (sample,) = load(checkout, "openai_embeddings")
        assert oracle_reward(sample) == 1.0
        environment = sample.make_environment()
        result = asyncio.run(
            environment.execute(ToolCall("c1", "KB_search", {"query": "foreign ATM fees"}))
        )
        assert not result.is_error and "doc_" in result.content
        paths = {request.path for request in server.requests}
        assert paths == {"/v1/embeddings"}
        inputs = [r.body for r in server.requests if r.body]
        assert any(r.get("model") == "text-embedding-3-large" for r in inputs)
    assert (tmp_path / "data" / ".embeddings_cache").is_dir()


def test_what_cannot_run_here_is_refused_in_one_line(checkout, monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # A PATH without sandbox-runtime, whether or not this machine has it installed.
    monkeypatch.setenv("PATH", str(tmp_path))
    domains._pristine.cache_clear()  # as in a new process: nothing built yet
    with pytest.raises(ConfigError) as no_key:
        load(checkout, "openai_embeddings")
    text = str(no_key.value)
    assert "\n" not in text and "openai_embeddings" in text and "bm25" in text
    with pytest.raises(ConfigError, match="unknown retrieval variant 'bm26'.*bm25"):
        load(checkout, "bm26")
    with pytest.raises(ConfigError, match="retrieval 'terminal_use' cannot run here"):
        load(checkout, "terminal_use")  # no srt on PATH
    with pytest.raises(ConfigError, match="unknown option"):
        ADAPTER.load("airline", data_dir=checkout, options={"retreival": "bm25"})


SANDBOX_BINARIES = ("srt", "rg", "bwrap", "socat")


def test_alltools_runs_offline_with_the_sandbox_and_a_fake_embedding_server(
    checkout, monkeypatch, tmp_path
):
    """tau2-bench's default retrieval: its embedder against the fake server's
    /v1/embeddings, its shell tool in the real sandbox-runtime (bubblewrap)."""
    import shutil

    missing = [name for name in SANDBOX_BINARIES if shutil.which(name) is None]
    if missing:
        why = f"sandbox-runtime's binaries are missing: {', '.join(missing)}"
        if os.environ.get("CI") == "true":  # CI installs them (.ci/install-sandbox.sh)
            pytest.fail(why)
        pytest.skip(f"{why} (run .ci/install-sandbox.sh)")
    monkeypatch.chdir(tmp_path)
    with FakeServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-embeddings")
        samples = load(checkout, "alltools", ids=(TASK, "task_001"))
        assert [oracle_reward(sample) for sample in samples] == [1.0, 1.0]
        tools = {(t.get("function") or t)["name"] for t in samples[0].tools}
        assert {"shell", "KB_search_dense", "KB_search_bm25"} <= tools, tools
        environment = samples[0].make_environment()

        def run(name: str, arguments: dict) -> str:
            result = asyncio.run(environment.execute(ToolCall("c1", name, arguments)))
            assert not result.is_error, result.content
            return result.content

        assert "doc_" in run("KB_search_dense", {"query": "foreign ATM fees"})
        assert {request.path for request in server.requests} == {"/v1/embeddings"}
    found = run("shell", {"command": "grep -ril 'foreign atm' . | head -3"})
    assert found.count("doc_") == 3, found
    # Twice more: sandbox-runtime's later releases leave stubs that break a second call.
    assert "INDEX" in run("shell", {"command": "ls | head -1"})
    escaped = run("shell", {"command": "cat ../../etc/passwd"})
    assert "root:" not in escaped and "blocked" in escaped
