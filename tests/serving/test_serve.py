"""Serving a checkpoint for a run: command lines, the server's life cycle, no orphans.

The "server" is tests/fake_llm_server.py, a separate program that can start
slowly, crash, hang, ignore SIGTERM or start workers, as real servers do.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from support import TESTS, harness_process, wait_for_lines

from harness.cli import main
from harness.errors import ConfigError
from harness.serving.checkpoints import checkpoint_name, checkpoint_step
from harness.serving.process import ManagedServer, ServerError, free_port, group_alive
from harness.serving.specs import LlamaCppSpec, SGLangSpec, VLLMSpec, mask_secret_args
from harness.store.run_store import read_records

FAKE = [sys.executable, str(TESTS / "fake_llm_server.py")]


def fake_command(port: int, *flags: str, model: str = "fake-model") -> list[str]:
    return [*FAKE, "--port", str(port), "--model-name", model, *flags]


def pid_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def read_pids(path: Path, timeout: float = 10.0) -> tuple[int, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            server, worker = path.read_text().split()
            return int(server), int(worker)
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


def managed(tmp_path: Path, *flags: str, **kwargs) -> ManagedServer:
    port = free_port()
    options = {"poll_interval_s": 0.05, "stop_timeout_s": 5.0, "start_timeout_s": 20.0}
    options.update(kwargs)
    return ManagedServer(
        command=fake_command(port, *flags),
        port=port,
        model="fake-model",
        log_path=tmp_path / "server.log",
        label="fake",
        **options,
    )


# -- command lines ------------------------------------------------------------


def test_vllm_command_line_has_parsers_lora_and_parallelism():
    spec = VLLMSpec(
        checkpoint="Team-ACE/EnvACE-Qwen3-8B",
        served_name="EnvACE-Qwen3-8B",
        tool_parser="hermes",
        reasoning_parser="qwen3",
        loras={"sql": "/ckpt/sql"},
        tensor_parallel_size=2,
        data_parallel_size=2,
        extra_args=["--max-model-len", "32768"],
    )
    assert spec.arguments("127.0.0.1", 8123) == [
        "Team-ACE/EnvACE-Qwen3-8B",
        "--host",
        "127.0.0.1",
        "--port",
        "8123",
        "--served-model-name",
        "EnvACE-Qwen3-8B",
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "hermes",
        "--reasoning-parser",
        "qwen3",
        "--enable-lora",
        "--lora-modules",
        "sql=/ckpt/sql",
        "--tensor-parallel-size",
        "2",
        "--data-parallel-size",
        "2",
    ]
    assert spec.gpus() == 4


def test_sglang_and_llamacpp_command_lines():
    sglang = SGLangSpec("m", "m", tool_parser="qwen25", tensor_parallel_size=2)
    assert sglang.arguments("127.0.0.1", 9) == [
        "--model-path",
        "m",
        "--host",
        "127.0.0.1",
        "--port",
        "9",
        "--served-model-name",
        "m",
        "--tool-call-parser",
        "qwen25",
        "--tp-size",
        "2",
    ]
    llama = LlamaCppSpec("/m/q.gguf", "q", tool_parser="chatml-function-calling")
    args = llama.arguments("127.0.0.1", 9)
    assert args[:8] == [
        "--model",
        "/m/q.gguf",
        "--host",
        "127.0.0.1",
        "--port",
        "9",
        "--model_alias",
        "q",
    ]
    assert args[args.index("--chat_format") + 1] == "chatml-function-calling"
    assert args[args.index("--interrupt_requests") + 1] == "False"
    assert args[args.index("--n_ctx") + 1] == "16384"
    assert llama.gpus() == 0


def test_a_llamacpp_default_given_again_with_serve_arg_is_the_users():
    llama = LlamaCppSpec(
        "/m/q.gguf", "q", extra_args=["--n_ctx", "4096", "--interrupt_requests=True"]
    )
    command = [*llama.arguments("127.0.0.1", 9), *llama.extra_args]
    assert command.count("--n_ctx") == 1
    assert command[command.index("--n_ctx") + 1] == "4096"
    assert not [arg for arg in command if arg == "--interrupt_requests"]
    assert "--interrupt_requests=True" in command


def test_llamacpp_server_can_run_in_a_python_of_its_own(tmp_path, monkeypatch):
    llama = LlamaCppSpec("/m/q.gguf", "q")
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 0.3.36\n")
    python.chmod(0o755)
    monkeypatch.setenv("HARNESS_LLAMACPP_PYTHON", str(python))
    assert llama.program() == [str(python), "-m", "llama_cpp.server"]
    assert llama.version() == "0.3.36"
    monkeypatch.setenv("HARNESS_LLAMACPP_PYTHON", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="HARNESS_LLAMACPP_PYTHON=.* is not a file"):
        llama.program()


def test_checkpoint_names_and_steps(tmp_path):
    verl = tmp_path / "run" / "global_step_200" / "actor" / "huggingface"
    verl.mkdir(parents=True)
    assert checkpoint_name(str(verl)) == "global_step_200"
    assert checkpoint_step(str(verl)) == 200
    plain = tmp_path / "exp-ckpt3" / "step_40"
    plain.mkdir(parents=True)
    assert (checkpoint_name(str(plain)), checkpoint_step(str(plain))) == ("step_40", 40)
    assert checkpoint_name("Team-ACE/EnvACE-Qwen3-8B") == "Team-ACE/EnvACE-Qwen3-8B"
    assert checkpoint_step("Team-ACE/EnvACE-Qwen3-8B") is None


def test_credential_arguments_are_masked():
    assert mask_secret_args(["--api-key", "abc123xyz", "--hf-token=tok12345", "--port", "1"]) == [
        "--api-key",
        "***",
        "--hf-token=***",
        "--port",
        "1",
    ]


# -- the life cycle -------------------------------------------------------------


@pytest.mark.slow
def test_a_healthy_server_is_ready_then_stopped_with_its_workers(tmp_path):
    pid_file = tmp_path / "pids"
    server = managed(tmp_path, "--spawn-worker", "--pid-file", str(pid_file))
    with server:
        server_pid, worker_pid = read_pids(pid_file)
        assert server.pid == server_pid and pid_alive(worker_pid)
        with urllib.request.urlopen(f"{server.url}/models", timeout=5) as reply:
            assert json.loads(reply.read())["data"][0]["id"] == "fake-model"
    # The worker belongs to the server's process group and goes with it.
    assert wait_gone(server_pid) and wait_gone(worker_pid)
    assert not group_alive(server_pid)
    log = (tmp_path / "server.log").read_text()
    assert "=== harness: starting fake" in log and "listening on" in log


@pytest.mark.slow
def test_a_slow_server_is_waited_for(tmp_path):
    started = time.monotonic()
    with managed(tmp_path, "--startup-delay", "1.0") as server:
        assert time.monotonic() - started >= 1.0
        assert server.process.poll() is None
    assert wait_gone(server.pid)


@pytest.mark.slow
def test_a_server_that_exits_at_start_is_one_error_with_its_log(tmp_path):
    server = managed(tmp_path, "--exit-at-start", "3")
    with pytest.raises(ServerError) as caught:
        with server:
            raise AssertionError("never reached")
    message = str(caught.value)
    assert message.startswith("the fake server exited with code 3 before it was ready")
    assert "checkpoint not found" in message and str(tmp_path / "server.log") in message
    assert not group_alive(server.pid)


@pytest.mark.slow
def test_a_server_that_never_becomes_ready_times_out_and_is_stopped(tmp_path):
    pid_file = tmp_path / "pids"
    server = managed(
        tmp_path,
        "--never-listen",
        "--spawn-worker",
        "--pid-file",
        str(pid_file),
        start_timeout_s=1.0,
    )
    with pytest.raises(ServerError, match="was not ready within 1 s"):
        with server:
            pass
    server_pid, worker_pid = read_pids(pid_file)
    assert wait_gone(server_pid) and wait_gone(worker_pid)


@pytest.mark.slow
def test_a_server_that_serves_another_name_is_refused(tmp_path):
    port = free_port()
    server = ManagedServer(
        command=fake_command(port, model="other"),
        port=port,
        model="wanted",
        log_path=tmp_path / "server.log",
        poll_interval_s=0.05,
    )
    with pytest.raises(ServerError, match="serves other, not 'wanted'"):
        with server:
            pass
    assert not group_alive(server.pid)


@pytest.mark.slow
def test_an_error_in_the_block_stops_the_server(tmp_path):
    server = managed(tmp_path)
    with pytest.raises(ValueError, match="boom"):
        with server:
            raise ValueError("boom")
    assert wait_gone(server.pid)


@pytest.mark.slow
def test_a_server_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    pid_file = tmp_path / "pids"
    server = managed(tmp_path, "--ignore-sigterm", "--pid-file", str(pid_file), stop_timeout_s=0.5)
    with server:
        pass
    assert wait_gone(read_pids(pid_file)[0], timeout=5)


@pytest.mark.slow
def test_a_server_dying_during_the_run_is_reported_when_the_block_ends(tmp_path):
    server = managed(tmp_path, "--crash-after", "0.2")
    with pytest.raises(ServerError, match="exited with code 1 during the run") as caught:
        with server:
            time.sleep(1.0)
    assert "the engine died" in str(caught.value)


# -- through `harness run` ---------------------------------------------------------


@pytest.fixture
def toy_env(toy_suite, tmp_path):
    checkpoint = tmp_path / "ckpts" / "step_200"
    checkpoint.mkdir(parents=True)
    return toy_suite, checkpoint


def serve_args(suite: Path, checkpoint: Path, out: Path, *fake_flags: str) -> list[str]:
    template = " ".join(
        [*FAKE, "--port {port} --model-name {model} --checkpoint {checkpoint}", *fake_flags]
    )
    return [
        "run",
        "--suite",
        str(suite),
        "--serve",
        "custom",
        "--checkpoint",
        str(checkpoint),
        "--serve-command",
        template,
        "--serve-timeout",
        "30",
        "--no-cache",
        "--quiet",
        "--out",
        str(out),
    ]


@pytest.mark.slow
def test_run_serve_evaluates_records_the_server_and_resumes_without_it(toy_env, tmp_path, capsys):
    suite, checkpoint = toy_env
    out = tmp_path / "run"
    pid_file = tmp_path / "pids"
    argv = serve_args(suite, checkpoint, out, "--pid-file", str(pid_file))
    assert main(argv) == 0
    records = read_records(out / "samples.jsonl").latest
    assert len(records) == 8 and all(
        r["status"] == "ok" and r["score"]["passed"] for r in records.values()
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["checkpoint"] == str(checkpoint.resolve()) and manifest["step"] == 200
    assert manifest["model"]["name"] == "openai/step_200"
    # Known by what it serves, not by its port (which changes on every start).
    assert manifest["model"]["api_base"].startswith(f"custom:{checkpoint.resolve()}#")
    command = manifest["server"]["command"]
    assert command[:2] == FAKE and "--model-name" in command and "step_200" in command
    assert wait_gone(read_pids(pid_file)[0])
    assert "listening on" in (out / "server.log").read_text()
    # The server's wall time is recorded; a custom command holds no GPU.
    (span,) = manifest["server_spans"]
    assert span["kind"] == "custom" and span["gpus"] == 0 and span["seconds"] > 0
    # A rerun (on another port) resumes the same run, and starts no server for nothing.
    pid_file.unlink()
    assert main(argv) == 0
    assert "nothing left to run; the server is not started" in capsys.readouterr().err
    assert not pid_file.exists()
    assert json.loads((out / "manifest.json").read_text())["server_spans"] == [span]


def test_run_serve_vllm_starts_vllm_with_the_hermes_parser(toy_env, tmp_path, monkeypatch):
    """`vllm` here is a stand-in on PATH that records its arguments and runs the
    fake server on the port and under the name vLLM was given."""
    suite, checkpoint = toy_env
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "vllm-args.json"
    stand_in = bin_dir / "vllm"
    stand_in.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"json.dump(sys.argv[1:], open({str(seen)!r}, 'w'))\n"
        "args = sys.argv[1:]\n"
        "port = args[args.index('--port') + 1]\n"
        "name = args[args.index('--served-model-name') + 1]\n"
        f"fake = [sys.executable, {str(TESTS / 'fake_llm_server.py')!r}]\n"
        "os.execv(sys.executable, [*fake, '--port', port, '--model-name', name])\n"
    )
    stand_in.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "run"
    argv = ["run", "--suite", str(suite), "--serve", "vllm", "--checkpoint", str(checkpoint)]
    argv += ["--reasoning-parser", "qwen3", "--serve-arg=--max-model-len", "--serve-arg", "8192"]
    argv += ["--tensor-parallel-size", "2"]
    assert main([*argv, "--no-cache", "--quiet", "--out", str(out), "--limit", "1"]) == 0
    args = json.loads(seen.read_text())
    assert args[:2] == ["serve", str(checkpoint.resolve())]
    assert args[args.index("--tool-call-parser") + 1] == "hermes"
    assert "--enable-auto-tool-choice" in args and args[-2:] == ["--max-model-len", "8192"]
    assert args[args.index("--host") + 1] == "127.0.0.1"
    server = json.loads((out / "manifest.json").read_text())["server"]
    assert server["kind"] == "vllm" and server["tool_parser"] == "hermes"
    assert server["reasoning_parser"] == "qwen3" and server["command"][1:] == args
    # GPU-seconds: the server's wall time times the 2 GPUs tensor parallelism holds.
    (span,) = json.loads((out / "manifest.json").read_text())["server_spans"]
    assert span["kind"] == "vllm" and span["gpus"] == 2
    from harness.report.leaderboard import load_run

    money = load_run(out, n_boot=10).cost.money
    assert money.gpu_seconds == pytest.approx(2 * span["seconds"]) and not money.cpu_only


@pytest.mark.slow
def test_another_parser_is_another_model_but_server_arguments_may_change(toy_env, tmp_path, capsys):
    suite, checkpoint = toy_env
    out = tmp_path / "run"
    argv = [*serve_args(suite, checkpoint, out), "--limit", "1", "--tool-parser", "hermes"]
    assert main(argv) == 0
    assert main([*argv[:-1], "qwen25"]) == 2
    assert "holds a run with different model" in capsys.readouterr().err
    # A changed server argument (memory settings after a crash, say) resumes the run.
    assert main([*argv, "--limit", "2", "--serve-arg=--latency", "--serve-arg", "0.01"]) == 0
    assert len(read_records(out / "samples.jsonl").latest) == 4
    # Both server starts that did work are counted in the run's server time.
    assert len(json.loads((out / "manifest.json").read_text())["server_spans"]) == 2
    assert json.loads((out / "manifest.json").read_text())["server"]["extra_args"] == [
        "--latency",
        "0.01",
    ]


@pytest.mark.slow
def test_run_serve_keeps_credentials_out_of_manifest_and_log(toy_env, tmp_path):
    suite, checkpoint = toy_env
    out = tmp_path / "run"
    secret = "sk-serve-SECRET-98765"
    argv = serve_args(suite, checkpoint, out, "--api-key", secret)
    argv += ["--limit", "1"]
    assert main(argv) == 0
    for path in out.iterdir():
        assert secret not in path.read_text(errors="replace"), path.name
    assert "--api-key" in (out / "server.log").read_text()  # the server did print its args


@pytest.mark.slow
def test_a_server_crashing_at_start_fails_the_run_with_exit_code_2(toy_env, tmp_path, capsys):
    suite, checkpoint = toy_env
    argv = serve_args(suite, checkpoint, tmp_path / "run", "--exit-at-start", "5")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "harness: error: the custom server exited with code 5 before it was ready" in err
    assert "checkpoint not found" in err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--serve", "vllm", "--checkpoint", "x", "--model", "m"], "--serve vllm needs vLLM"),
        (["--serve", "vllm"], "--serve vllm needs --checkpoint"),
        (["--model", "oracle", "--checkpoint", "x"], "--checkpoint only apply with --serve"),
        (["--serve", "custom", "--checkpoint", "x"], "--serve-command goes with --serve custom"),
        (
            ["--serve", "vllm", "--checkpoint", "x", "--api-base", "http://127.0.0.1:1/v1"],
            "drop --api-base",
        ),
        (["--serve", "llamacpp", "--checkpoint", "nofile.gguf"], "needs a GGUF file"),
        ([], "required: --model"),
    ],
)
def test_bad_serve_flags_are_one_line_and_exit_code_2(toy_env, capsys, monkeypatch, extra, message):
    monkeypatch.setenv("PATH", "/nonexistent")  # no vllm executable anywhere
    suite, _ = toy_env
    assert main(["run", "--suite", str(suite), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


# -- signals: the harness process is interrupted or killed mid-run ------------------


def _start_harness(
    toy_env, tmp_path: Path, pid_file: Path, *fake_flags: str
) -> tuple[subprocess.Popen, Path]:
    suite, checkpoint = toy_env
    out = tmp_path / "run"
    # Slow enough replies that the signal lands mid-run on an idle machine too
    # (8 samples, one at a time: ~4 s after the first record).
    flags = ["--latency", "0.5", "--pid-file", str(pid_file), *fake_flags]
    argv = serve_args(suite, checkpoint, out, *flags)
    argv += ["--concurrency", "1"]
    process = harness_process(argv, stdout=subprocess.DEVNULL)
    if wait_for_lines(out / "samples.jsonl", 1, timeout_s=30):
        return process, out
    process.kill()
    raise AssertionError("the run never wrote a record")


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_mid_run_stops_the_server_and_keeps_the_records(
    toy_env, tmp_path, signum
):
    pid_file = tmp_path / "pids"
    process, out = _start_harness(toy_env, tmp_path, pid_file, "--spawn-worker")
    server_pid, worker_pid = read_pids(pid_file)
    process.send_signal(signum)
    # 128 + the signal, as a shell reports it: 130 for Ctrl-C, 143 for SIGTERM.
    assert process.wait(timeout=30) == 128 + signum, process.stderr.read()
    assert "rerun the same command to resume" in process.stderr.read()
    assert wait_gone(server_pid) and wait_gone(worker_pid)
    assert not group_alive(server_pid)
    lines = (out / "samples.jsonl").read_text().splitlines()
    assert 1 <= len(lines) < 8 and all(json.loads(line)["status"] == "ok" for line in lines)


@pytest.mark.slow
def test_a_killed_harness_takes_its_server_with_it(toy_env, tmp_path):
    pid_file = tmp_path / "pids"
    process, _ = _start_harness(toy_env, tmp_path, pid_file)
    server_pid, _ = read_pids(pid_file)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    # SIGKILL cannot be handled: the kernel sends the server SIGTERM (PR_SET_PDEATHSIG),
    # on which a real server stops its own workers.
    assert wait_gone(server_pid)


def test_llamacpp_tools_get_a_system_message_to_live_in():
    """chatml-function-calling writes the tools into the system message only."""
    import asyncio

    from harness.models.base import ModelClient
    from harness.serving.client import ServedModelClient
    from harness.types import AssistantTurn, SamplingParams

    class Recorder(ModelClient):
        name = "openai/q"

        def __init__(self):
            self.seen = []

        async def complete(self, messages, tools, params):
            self.seen.append(messages)
            return AssistantTurn(content="ok")

    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    question = [{"role": "user", "content": "hi"}]
    with_system = [{"role": "system", "content": "be brief"}, *question]
    llama = LlamaCppSpec("/m/q.gguf", "q", tool_parser="chatml-function-calling")
    inner = Recorder()
    client = ServedModelClient(inner, llama.identity(), llama.label())
    for messages, tools in ((question, [tool]), (question, []), (with_system, [tool])):
        asyncio.run(client.complete(messages, tools, SamplingParams()))
    assert inner.seen == [[{"role": "system", "content": ""}, *question], question, with_system]
    # Other servers and formats get the conversation as it is.
    other = Recorder()
    plain = LlamaCppSpec("/m/q.gguf", "q", tool_parser="functionary")
    asyncio.run(
        ServedModelClient(other, plain.identity(), plain.label()).complete(
            question, [tool], SamplingParams()
        )
    )
    assert other.seen == [question]


def _end_servers_script():
    import importlib.util

    from support import REPO

    spec = importlib.util.spec_from_file_location("end_servers", REPO / "scripts/end_servers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_server_left_running_is_ended_by_the_group_its_log_records(tmp_path):
    """CI ends the servers a killed test tier left by the process groups their
    server.log files record, never by a name pattern (another job's would match)."""
    from harness.serving.process import started_groups

    server = managed(tmp_path)
    with server:
        assert started_groups((tmp_path / "server.log").read_text()) == [server.pid]
    assert not group_alive(server.pid)
    # A server whose harness was killed: still running, its group in its log.
    run = tmp_path / "tier" / "run-1"
    run.mkdir(parents=True)
    leftover = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                start_new_session=True)  # fmt: skip
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                 start_new_session=True)  # fmt: skip
    try:
        (run / "server.log").write_text(f"=== harness: server process group {leftover.pid}\n")
        assert _end_servers_script().end_servers(tmp_path / "tier") == [leftover.pid]
        assert leftover.wait(timeout=10) == -signal.SIGKILL
        assert bystander.poll() is None  # the same command line, not recorded: left alone
    finally:
        bystander.kill()
        bystander.wait()
    ci = (Path(__file__).parents[2] / ".ci/run").read_text()
    assert "pkill" not in ci and "scripts/end_servers.py" in ci
