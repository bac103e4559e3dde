"""Credentials never reach a file or a stream: each known leak path is planted
and every output of the run (records, cache, manifest, scores, server.log,
report, BFCL export, stdout and stderr) is searched for the planted values.

The run's own secrets (held: the environment's key, URL passwords, a server
command's key flag, a suite option named like a key) are masked wherever they
appear, a tool-call argument included. Credential-shaped text a server sends
outside the trajectory (an error body, its log) is masked by its shape. What the
model writes is trajectory data and stays as it was, unless it is a held value."""

from __future__ import annotations

import base64
import json
import re
import secrets
import shlex
import sys
from pathlib import Path

import pytest
from support import TESTS

from harness.cli import main
from harness.models.redact import (
    add_argument_secrets,
    add_url_secrets,
    argument_secrets,
    is_credential_name,
    is_secret_flag,
    mask,
    may_need_masking,
    scrub_secrets,
    secret_scope,
)
from harness.report.samples import read_samples
from harness.serving.specs import mask_secret_args
from harness.store.run_store import read_records
from harness.testing.fake_server import FakeServer, Reply

FAKE = [sys.executable, str(TESTS / "fake_llm_server.py")]

# Held by the run: masked everywhere.
ENV_KEY = "plant-env-key-0001"
URL_USER = "evaluser"
URL_PASS = "plant-url-pass-0002"
REPLICA_PASS = "plant-replica-pass-0003"
SERVE_KEY = "plant-serve-key-0004"
OPTION_KEY = "plant-option-key-0008"
HELD = [ENV_KEY, URL_PASS, REPLICA_PASS, SERVE_KEY, OPTION_KEY]
# Not held, sent back by a server outside the trajectory: masked by shape.
ERROR_BEARER = "plant-error-bearer-0009"
LOG_BEARER = "plant-log-bearer-0010"
ECHOED = [ERROR_BEARER, LOG_BEARER]
PLANTED = HELD + ECHOED
# Not held, written by the model: trajectory data, kept as it was sent.
BEARER = "plant-bearer-0005"
BASIC_PASS = "plant-basic-0006"
ARG_KEY = "plant-apikey-0007"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# As JSON text this holds api_key=\"\": masking that text ate the backslash.
HARMLESS = 'say "hi", set api_key="" to turn it off, a back\\slash'


def echoing_agent(request: dict, password: str = URL_PASS) -> Reply:
    """A server that echoes credentials in its replies and errors (``password``:
    the one in the URL the run calls)."""
    messages = request["messages"]
    if messages[-1]["role"] == "tool":
        return Reply.text(f"done; I saw Authorization: Bearer {BEARER}")
    found = re.search(r"Reach (\d+)", str(messages[-1]["content"]))
    if found is None:  # a BFCL question
        return Reply.text(f"I cannot; my key {ENV_KEY} got Bearer {BEARER} rejected")
    target = int(found.group(1))
    if target == 1:
        return Reply.text(f"headers: Authorization: Basic {b64(URL_USER + ':' + password)}")
    if target == 2:  # held keys inside a tool call's arguments, beside an invented one
        return Reply.calls(
            ("add", {"n": 2, "note": f"api_key={ARG_KEY}", "auth": f"{ENV_KEY} {OPTION_KEY}"})
        )
    if target == 3:
        return Reply.text(f"Basic {b64('admin:' + BASIC_PASS)} and {password} and {ENV_KEY}")
    if target == 4:
        return Reply.http_error(
            401,
            f"bad credentials for http://{URL_USER}:{password}@host/v1 "
            f"(Authorization: Bearer {ERROR_BEARER})",
        )
    if target == 5:
        return Reply.text(f"password {password}, key {ENV_KEY}")
    return Reply.text(HARMLESS)


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_ADAPTERS", "toy=toy_adapter:ToyAdapter")
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    suite = tmp_path / "toy.yaml"
    suite.write_text(
        "name: toy\nentries:\n  - benchmark: toy\n    subsets: [easy, hard]\n"
        f"    options: {{judge_api_key: {OPTION_KEY}}}\n"
    )
    bfcl = tmp_path / "bfcl.yaml"
    bfcl.write_text(
        "name: b\nentries:\n  - benchmark: bfcl\n    subsets: [simple_python]\n    limit: 2\n"
    )
    return suite, bfcl


def assert_nothing_planted(root: Path, streams: str) -> int:
    """Every file under root and the captured streams hold no planted secret."""
    checked = 0
    for path in [p for p in root.rglob("*") if p.is_file()]:
        text = path.read_bytes().decode("utf-8", errors="replace")
        if path.suffix == ".html":  # a report: its samples are compressed, read them too
            text += json.dumps(read_samples(text), ensure_ascii=False)
        for secret in PLANTED:
            assert secret not in text, f"{secret} in {path}"
            assert b64(f"{URL_USER}:{URL_PASS}") not in text, path
        checked += 1
    for secret in PLANTED:
        assert secret not in streams, f"{secret} in stdout/stderr"
    return checked


@pytest.mark.slow
def test_no_planted_secret_reaches_any_file_or_stream(env, tmp_path, capsys):
    suite, bfcl = env
    out = tmp_path / "out"
    cache = out / "cache"
    streams = ""
    with FakeServer(handler=echoing_agent) as server:
        port = server.url.rsplit(":", 1)[1].split("/")[0]
        api_base = f"http://{URL_USER}:{URL_PASS}@127.0.0.1:{port}/v1"
        common = ["--model", "openai/fake-model", "--cache-dir", str(cache), "--max-attempts", "1"]
        # 1. A password in --api-base; replies and errors that echo credentials.
        main(["run", "--suite", str(suite), "--api-base", api_base, *common,
              "--out", str(out / "direct")])  # fmt: skip
        # 2. The same through litellm (the environment key is sent and echoed).
        main(["run", "--suite", str(suite), "--api-base", api_base, *common, "--client",
              "litellm", "--out", str(out / "litellm"), "--ids", "easy-0,easy-2"])  # fmt: skip
        # 3. Replicas with passwords from a model config.
        config = tmp_path / "replicas.yaml"
        config.write_text(
            "replicas:\n"
            f"  - http://{URL_USER}:{REPLICA_PASS}@127.0.0.1:{port}/v1\n"
            f"  - http://{URL_USER}:{REPLICA_PASS}@localhost:{port}/v1\n"
        )
        server.set_handler(lambda request: echoing_agent(request, REPLICA_PASS))
        main(["run", "--suite", str(suite), "--model-config", str(config), *common,
              "--out", str(out / "replicas")])  # fmt: skip
        server.set_handler(echoing_agent)
        # 4. BFCL, then its export.
        main(["run", "--suite", str(bfcl), "--api-base", api_base, *common,
              "--out", str(out / "bfcl")])  # fmt: skip
        streams += "".join(capsys.readouterr())
    assert main(["export-bfcl", str(out / "bfcl"), str(out / "export")]) == 0
    # 5. A server command whose boolean flag is named like a key.
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    template = " ".join(
        [*FAKE, "--port {port} --model-name {model} --checkpoint {checkpoint}",
         "--skip-tokenizer-init --api-key", SERVE_KEY,
         "--log-line", shlex.quote(f"request headers: Authorization: Bearer {LOG_BEARER}")]
    )  # fmt: skip
    code = main(["run", "--suite", str(suite), "--serve", "custom", "--checkpoint",
                 str(checkpoint), "--serve-command", template, "--serve-timeout", "30",
                 "--no-cache", "--limit", "1", "--out", str(out / "served")])  # fmt: skip
    assert code == 0
    manifest = json.loads((out / "served" / "manifest.json").read_text())
    assert manifest["server"]["command"][-5:-2] == ["--skip-tokenizer-init", "--api-key", "***"]
    runs = [str(out / name) for name in ("direct", "litellm", "replicas", "bfcl", "served")]
    assert main(["report", *runs, "--out", str(out / "report.html"), "--no-plots"]) == 0
    streams += "".join(capsys.readouterr())

    assert assert_nothing_planted(out, streams) > 20
    direct = (out / "direct" / "samples.jsonl").read_text()
    records = read_records(out / "direct" / "samples.jsonl").latest
    # What the model wrote is kept as it was sent, but for the held values in it.
    for kept in (f"Bearer {BEARER}", f"api_key={ARG_KEY}", f"Basic {b64('admin:' + BASIC_PASS)}"):
        assert kept in direct, kept
    assert "Authorization: Basic ***" in direct  # the URL's user:password is held
    call = records["toy/easy/easy-1#0"]["trajectory"]["turns"][0]["tool_calls"][0]
    assert call["arguments"] == {"n": 2, "note": f"api_key={ARG_KEY}", "auth": "*** ***"}
    assert json.loads(call["raw_arguments"]) == call["arguments"]
    # A server's error body is not the trajectory: its credential shapes are masked.
    error = records["toy/easy/easy-3#0"]["error"]
    assert error["message"].startswith("HTTP 401") and "Bearer ***" in error["message"]
    server_log = (out / "served" / "server.log").read_text()
    assert "Authorization: Bearer ***" in server_log
    bfcl = (out / "bfcl" / "samples.jsonl").read_text()
    assert f"Bearer {BEARER} rejected" in bfcl and "my key ***" in bfcl
    # The harmless sample is intact.
    harmless = records["toy/hard/hard-0#0"]
    assert harmless["trajectory"]["messages"][-1]["content"] == HARMLESS
    assert list(cache.rglob("*.json")), "the cache was used"
    # Every sample of the report reads back (masking never broke an escape).
    page = (out / "report.html").read_text()
    assert len(read_samples(page)) >= 16


def test_masking_runs_on_data_not_on_json_text():
    held = 'q7w8e9"r0\\t1'  # a quote and a backslash: escaped in JSON text
    value = {"content": f'x api_key="{held}" y', "keys": ['a "quoted" \\ word'], "n": 1.5}
    with secret_scope():
        add_argument_secrets(["--api-key", held])
        masked = mask(value)
    assert masked == {"content": 'x api_key="***" y', "keys": ['a "quoted" \\ word'], "n": 1.5}
    assert json.loads(json.dumps(masked)) == masked


def test_only_held_values_are_masked_in_data_shapes_only_in_server_text():
    """mask (every writer) changes held values only: a benchmark's password or a
    token the model made up stays, so a stored record judges as it ran.
    scrub_secrets (error bodies, server logs, exception messages) masks shapes too."""
    data = {
        "arguments": {"api_key": "gorilla-123", "password": ["secure_pass123"]},
        "raw_arguments": '{"password": "P@ssw0rd!", "access_token": "abc123xyz_x"}',
        "content": "login(user='u', password='123123'); Authorization: Bearer abcdefgh123",
    }
    assert mask(data) is data
    assert not may_need_masking(json.dumps(data))
    assert scrub_secrets("HTTP 401: password='123123' Bearer abcdefgh123") == (
        "HTTP 401: password='***' Bearer ***"
    )
    with secret_scope():
        add_argument_secrets(["--api-key", "secure_pass123"])  # held: masked everywhere
        assert mask(data)["arguments"] == {"api_key": "gorilla-123", "password": ["***"]}
        assert may_need_masking(json.dumps(data))


def test_registered_values_are_masked_in_every_form():
    with secret_scope():
        add_url_secrets("https://bob:p%40ss-word9@h/v1?sig=sigvalue123&x=1,http://tok-user-55@h2")
        text = scrub_secrets("p@ss-word9 p%40ss-word9 sigvalue123 tok-user-55 bob ok")
        assert text == "*** *** *** *** bob ok"
        assert scrub_secrets("Basic " + b64("bob:p@ss-word9")) == "Basic ***"
        add_argument_secrets(["--serve-arg=--hf-token", "--hf-token", "hf-token-value"])
        assert scrub_secrets("hf-token-value") == "***"
    assert scrub_secrets("sigvalue123") == "sigvalue123"  # forgotten after the scope


def test_key_named_settings_are_held(toy_suite, tmp_path):
    """A strategy option or a suite option named like a key is a secret the run
    holds (masked by value everywhere); other settings are not."""
    import argparse

    from harness.cli import register_secrets
    from harness.config.suites import load_suite

    suite = tmp_path / "s.yaml"
    suite.write_text(  # the toy adapter takes a judge_api_key option
        "name: s\nentries:\n  - benchmark: toy\n    subsets: [easy]\n"
        "    options: {judge_api_key: suite-opt-key-123}\n"
    )
    with secret_scope():
        register_secrets(argparse.Namespace(strategy_opt=["rehearser_api_key=strat-key-456",
                                                          "temperature=0.7"]))  # fmt: skip
        load_suite(str(suite))
        assert mask("suite-opt-key-123 strat-key-456 temperature=0.7 fc") == (
            "*** *** temperature=0.7 fc"
        )


def test_boolean_flags_named_like_keys_do_not_hide_their_neighbour():
    args = ["--skip-tokenizer-init", "--api-key", "KEY123456", "--max-num-batched-tokens", "8192"]
    assert argument_secrets(args) == ["KEY123456"]
    assert mask_secret_args(args) == [
        "--skip-tokenizer-init",
        "--api-key",
        "***",
        "--max-num-batched-tokens",
        "8192",
    ]
    assert mask_secret_args(["--token=abcdef123", "--client-secret", "s3cr3t-value"]) == [
        "--token=***",
        "--client-secret",
        "***",
    ]


def test_ordinary_words_are_not_masked():
    for text in ("Basic arithmetic", "the token count", "max_tokens=10", "a tokenizer"):
        assert scrub_secrets(text) == text


def test_the_one_search_shortcut_masks_exactly_what_the_full_walk_masks():
    from harness.models.redact import _Masker

    secret = "s3cret-value-42"
    values = [
        {"content": "nothing here", "list": ["a", 1, None, 2.5, ("t", "u")]},
        {"content": f"key {secret} inside", "n": 3},
        {"nested": [{"deep": ["Bearer abcdefgh123"]}], "k": "v"},
        {"api_key": "abc", "text": "api_key=zz9yy8xx7"},  # a key named like one stays
        {"url": "https://user:pw12345@host/v1", "b": "Basic " + b64("u:pw12345")},
        {"sk": "sk-abcdef123456", "end": "api_key="},
        {"edge": "Bearer", "next": "abcdefgh123"},  # a match only across two strings
        {"obj": Path("/tmp/x"), "tuple": ("a", "b")},
        {"escaped": f'say "{secret}"\nBearer\tabcdefgh123 \u0007', "q": 'a\\"b'},
        {"escaped": 'x\napi_key=\\"zz9yy8xx7\\"'},
    ]
    with secret_scope():
        add_argument_secrets(["--api-key", secret])
        for value in values:
            # As the writers serialise it (a non-JSON leaf as its text).
            written = json.dumps(mask(value), default=str)
            assert written == json.dumps(_Masker().value(value), default=str)
        plain = values[0]
        assert mask(plain) is plain  # nothing to mask: no copy
        for shapes in (False, True):  # by value (mask), and with shapes (scrub_secrets)
            masker = _Masker(shapes=shapes)
            for value in values:
                text = json.dumps(value, ensure_ascii=False, default=str)
                changed = json.dumps(masker.value(value), default=str)
                if changed != json.dumps(value, default=str):
                    assert masker.finds_any_in_json(text), (shapes, value)
            assert not masker.finds_any_in_json(json.dumps(plain))
        assert [may_need_masking(json.dumps(v, default=str)) for v in values] == [
            secret in json.dumps(v, default=str) for v in values
        ]


def test_every_credential_shape_has_the_literals_its_quick_test_needs():
    from harness.models import redact

    shapes = [pattern for pattern, _ in redact._SHAPE_LITERALS]
    assert shapes == [*redact._SECRET_TEXT, redact._BASIC]
    samples = [
        "Authorization: Bearer abcdefgh123",
        "key sk-abcdef123456",
        'API-KEY = "zz9yy8xx7"',
        "Client_Secret: s3cr3t-value",
        "passwd=hunter22",
        "https://user:pw@host/x",
        "Basic " + b64("u:pw12345"),
    ]
    shapes = redact._Masker(shapes=True)
    for text in samples:
        assert shapes.finds_any_in_json(json.dumps({"t": text})), text
        assert scrub_secrets(text) != text, text
        assert not may_need_masking(json.dumps({"t": text})), text  # not a held value
    assert not shapes.finds_any_in_json(json.dumps({"t": "an ordinary reply about triangles"}))


def test_a_run_reads_the_environment_for_credentials_once(monkeypatch):
    """Inside environment_read_once (every run_suite) replies are masked against
    one reading of the environment, not a fresh decode of os.environ each time."""
    from harness.models import redact

    monkeypatch.setenv("EXAMPLE_API_KEY", "sk-first-value-0123456789")
    reads = []
    real = redact.environment_secrets
    monkeypatch.setattr(redact, "environment_secrets", lambda: reads.append(1) or real())
    with redact.environment_read_once():
        for _ in range(5):
            assert redact.mask("key sk-first-value-0123456789") == f"key {redact.MASK}"
        with redact.environment_read_once():  # nested: the outer reading stands
            redact.mask("x")
    assert len(reads) == 1
    redact.mask("x")
    assert len(reads) == 2  # outside a run: read afresh


# Credential names beyond *_KEY: what litellm and common tools read.
OTHER_NAMES = ["AWS_BEARER_TOKEN_BEDROCK", "OPENAI_API_KEY_2", "GITHUB_PAT", "DB_PASSWD"]


def test_the_credential_name_rule():
    credentials = [
        *OTHER_NAMES,
        "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AZURE_OPENAI_API_KEY",
        "AZURE_AD_TOKEN", "AZURE_CLIENT_SECRET", "WATSONX_ZENAPIKEY", "HF_TOKEN", "MYSQL_PWD",
        "GOOGLE_APPLICATION_CREDENTIALS", "SNOWFLAKE_JWT", "DB_PASS", "API_KEYS", "apiKey",
        "accessToken", "HFToken", "hf-token", "client_secret", "judge_api_key",
    ]  # fmt: skip
    harmless = [
        "PATH", "PYTHONPATH", "TOKENIZERS_PARALLELISM", "PWD", "OLDPWD", "HOME", "SSH_AUTH_SOCK",
        "MAX_TOKENS", "TIKTOKEN_CACHE_DIR", "HF_HUB_OFFLINE", "CUDA_VISIBLE_DEVICES",
        "skip-tokenizer-init", "max-num-batched-tokens", "KEYBOARD_LAYOUT", "PASSENGER",
    ]  # fmt: skip
    assert [n for n in credentials if not is_credential_name(n)] == []
    assert [n for n in harmless if is_credential_name(n)] == []
    # Flags and settings keys follow the same rule.
    assert is_secret_flag("--github-pat") and is_secret_flag("--db-passwd=x")
    assert not is_secret_flag("--skip-tokenizer-init")


def echo_values(values: list[str]):
    """An agent that writes the values into its text, a tool call and an error body."""

    def reply(request: dict) -> Reply:
        messages = request["messages"]
        if messages[-1]["role"] == "tool":
            return Reply.text(f"done with {values[0]} and {values[1]}")
        found = re.search(r"Reach (\d+)", str(messages[-1]["content"]))
        target = int(found.group(1)) if found else 0
        if target == 2:
            return Reply.calls(("add", {"n": 2, "note": " ".join(values)}))
        if target == 4:
            return Reply.http_error(401, f"rejected {values[2]} {values[3]}")
        return Reply.text(f"environment: {' '.join(values)}")

    return reply


@pytest.mark.slow
def test_credentials_under_other_names_reach_no_file_or_stream(env, tmp_path, capsys, monkeypatch):
    suite, _ = env
    values = [f"plant-{name.lower()}-{secrets.token_hex(6)}" for name in OTHER_NAMES]
    for name, value in zip(OTHER_NAMES, values, strict=True):
        monkeypatch.setenv(name, value)
    out = tmp_path / "out"
    common = ["--suite", str(suite), "--model", "openai/fake-model", "--max-attempts", "1"]
    with FakeServer(handler=echo_values(values)) as server:
        for client in ("direct", "litellm"):
            main(["run", *common, "--api-base", server.url, "--client", client,
                  "--cache-dir", str(out / "cache"), "--out", str(out / client)])  # fmt: skip
    # A served model whose command line and log carry the values.
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    template = " ".join(
        [*FAKE, "--port {port} --model-name {model} --checkpoint {checkpoint}",
         "--log-line", shlex.quote("started with " + " ".join(values))]
    )  # fmt: skip
    code = main(["run", *common, "--serve", "custom", "--checkpoint", str(checkpoint),
                 "--serve-command", template, "--serve-timeout", "30", "--no-cache",
                 "--limit", "1", "--out", str(out / "served")])  # fmt: skip
    assert code == 0
    runs = [str(out / name) for name in ("direct", "litellm", "served")]
    assert main(["report", *runs, "--out", str(out / "report.html"), "--no-plots"]) == 0
    streams = "".join(capsys.readouterr())
    assert "started with ***" in (out / "served" / "server.log").read_text()
    written = [p for p in out.rglob("*") if p.is_file()]
    names = {p.name for p in written}
    assert {"samples.jsonl", "manifest.json", "scores.json", "server.log"} <= names, names
    leaks = [
        (value, str(path))
        for path in written
        for value in values
        if value
        in path.read_bytes().decode("utf-8", errors="replace")
        + (json.dumps(read_samples(path.read_text())) if path.suffix == ".html" else "")
    ]
    leaks += [(value, "stdout/stderr") for value in values if value in streams]
    assert leaks == []
