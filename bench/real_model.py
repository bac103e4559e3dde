"""The harness against a real llama.cpp server: its overhead, and time to first request.

    eval "$(bash scripts/real_model_env.sh)"   # the server's Python and a small GGUF
    uv run python bench/real_model.py [--samples 8] [--max-tokens 64]

1. One llama-cpp-python server (SmolLM2-135M-Instruct on CPU) is started through
   the harness's own serving code. ``harness run`` evaluates N BFCL simple_python
   samples against it (one request at a time); then a bare client sends the same
   N requests (the same bodies, built by the harness's wire format from the same
   samples) straight to the same server. Both answer from the same server with
   the same greedy settings, so the ratio of the two wall times is what the
   harness adds (target <= 1.05). One uncounted pass goes first, so that both
   counted passes meet a server that is already warm.
2. ``make demo``'s suite (smoke) with its model behind a fake server: the time
   from starting ``harness run`` to the model's first request (target <= 3 s).

Prints ratios, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.cli import main as harness_main  # noqa: E402
from harness.models.openai_wire import chat_request  # noqa: E402
from harness.models.tool_placement import with_system_message  # noqa: E402
from harness.serving.process import HOST, ManagedServer, free_port  # noqa: E402
from harness.serving.specs import LlamaCppSpec  # noqa: E402
from harness.store.run_store import read_records  # noqa: E402
from harness.task.registry import get_adapter  # noqa: E402
from harness.testing.fake_server import FakeServer  # noqa: E402
from harness.types import SamplingParams  # noqa: E402

OVERHEAD_TARGET = 1.05
FIRST_REQUEST_TARGET_S = 3.0
SERVED_NAME = "smollm2"
CATEGORY = "simple_python"


def gguf_path(given: str | None) -> Path | None:
    path = given or os.environ.get("HARNESS_REAL_MODEL_GGUF")
    return Path(path) if path and Path(path).is_file() else None


def harness_seconds(url: str, folder: Path, samples: int, max_tokens: int) -> tuple[float, Path]:
    suite = folder / "overhead.yaml"
    suite.write_text(
        f"name: overhead\nentries:\n  - benchmark: bfcl\n    subsets: [{CATEGORY}]\n"
        f"    limit: {samples}\n"
    )
    run_dir = folder / "run"
    harness_main(
        [
            "run",
            "--suite",
            str(suite),
            "--model",
            f"openai/{SERVED_NAME}",
            "--api-base",
            url,
            "--concurrency",
            "1",
            "--max-tokens",
            str(max_tokens),
            "--no-cache",
            "--quiet",
            "--out",
            str(run_dir),
        ]
    )
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return float(manifest["last_summary"]["elapsed_s"]), run_dir


def bare_seconds(url: str, run_dir: Path, max_tokens: int) -> float:
    """The run's requests again, from a plain HTTP client, one at a time."""
    records = read_records(run_dir / "samples.jsonl").latest.values()
    ids = [record["sample_id"] for record in records]
    samples = get_adapter("bfcl").load(CATEGORY, ids=ids)
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, seed=0)
    # What the harness sent: its preflight finds that this chat format shows
    # the tools only inside a system message, and adds an empty one.
    bodies = [
        json.dumps(
            chat_request(
                SERVED_NAME, with_system_message(s.initial_messages, s.tools), s.tools, params
            )
        ).encode()
        for s in samples
    ]
    start = time.perf_counter()
    for body in bodies:
        request = urllib.request.Request(
            f"{url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=600) as reply:
            json.loads(reply.read())
    return time.perf_counter() - start


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a live process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_request_seconds() -> tuple[float, float]:
    """``harness run --suite smoke`` against a fake server: wall and CPU seconds
    from start to the first model request (CPU time does not depend on how busy
    the machine is)."""
    with FakeServer() as server, tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "harness.cli", "run", "--suite", "smoke"]
        command += ["--model", "openai/fake-model", "--api-base", server.url]
        command += ["--out", f"{folder}/run", "--no-cache", "--quiet"]
        start = time.time()
        process = subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            while not server.chat_requests and process.poll() is None:
                time.sleep(0.01)
            if not server.chat_requests:
                sys.exit("the smoke run ended without a model request")
            cpu = cpu_seconds(process.pid)
            return server.chat_requests[0].received_at - start, cpu
        finally:
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--gguf", help="the model file (default: $HARNESS_REAL_MODEL_GGUF)")
    args = parser.parse_args()

    first, first_cpu = first_request_seconds()
    print(
        f"make demo (smoke suite), start to first model request: {first:.2f} s, "
        f"{first_cpu:.2f} CPU s (target <= {FIRST_REQUEST_TARGET_S:g} s, "
        f"ratio {first / FIRST_REQUEST_TARGET_S:.2f})"
    )

    gguf = gguf_path(args.gguf)
    if gguf is None:
        print(
            "overhead vs a bare client: not measured (no model: pass --gguf, or run "
            'eval "$(bash scripts/real_model_env.sh)" first)'
        )
        return
    spec = LlamaCppSpec(str(gguf), SERVED_NAME, tool_parser=LlamaCppSpec.default_tool_parser)
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        with ManagedServer(
            command=spec.command(HOST, port),
            port=port,
            model=SERVED_NAME,
            log_path=Path(folder) / "server.log",
            label="llamacpp",
        ) as server:
            # A first pass, not counted, so that neither counted pass meets a server
            # that has just loaded its model: measured without it, the ratio of the
            # first harness pass was about 0.015 above that of a second one.
            warm = Path(folder) / "warm-up"
            warm.mkdir()
            harness_seconds(server.url, warm, args.samples, args.max_tokens)
            harness_s, run_dir = harness_seconds(
                server.url, Path(folder), args.samples, args.max_tokens
            )
            bare_s = bare_seconds(server.url, run_dir, args.max_tokens)
    ratio = harness_s / bare_s
    print(
        f"{args.samples} BFCL {CATEGORY} samples against llama.cpp (one at a time): "
        f"harness {harness_s:.2f} s, bare client {bare_s:.2f} s, "
        f"ratio {ratio:.3f} (target <= {OVERHEAD_TARGET})"
    )


if __name__ == "__main__":
    main()
