"""A fake "model server program" for the server-lifecycle, replica and sweep tests.

It stands where ``vllm serve`` or ``python -m sglang.launch_server`` would: a
separate process that takes a while to start, logs to stdout, listens on the
port it is given and answers as a toy-benchmark agent. Flags script the ways
a real server misbehaves:

    --startup-delay S     sleep S seconds before listening (a model loading)
    --exit-at-start CODE  print an error and exit with CODE (a bad checkpoint)
    --never-listen        run but never open the port (a server that hangs)
    --crash-after S       exit abruptly S seconds after it starts listening
    --ignore-sigterm      survive SIGTERM (only SIGKILL stops it)
    --spawn-worker        start a worker process (in the server's process group,
                          as vLLM starts its engine processes)
    --pid-file PATH       write "<pid> <worker pid or 0>" once started
    --log-line TEXT       print TEXT at start (a server that logs a request's headers)

The agent reaches the toy target for a deterministic fraction of samples, the
checkpoint's "skill": the number in ``<checkpoint>/fake_skill`` (1.0 when
absent), so that checkpoints of a fake training run score differently. A
checkpoint with a file ``fake_broken`` makes the server exit at start.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from harness.testing.fake_server import FakeServer, Reply


def read_skill(checkpoint: str | None) -> float:
    if not checkpoint:
        return 1.0
    path = Path(checkpoint) / "fake_skill"
    return float(path.read_text().strip()) if path.is_file() else 1.0


def passes(target: int, skill: float) -> bool:
    """Whether an agent of this skill solves the sample with this target."""
    return (target * 7919) % 100 < round(skill * 100)


def toy_agent(skill: float):
    def reply(request: dict) -> Reply:
        messages = request["messages"]
        if messages[-1]["role"] == "tool":
            return Reply.text("done")
        target = int(re.search(r"Reach (\d+)", messages[-1]["content"]).group(1))
        return Reply.calls(("add", {"n": target if passes(target, skill) else target + 1}))

    return reply


def _crash_later(seconds: float) -> None:
    def crash() -> None:
        time.sleep(seconds)
        print("fatal: the engine died", flush=True)
        os._exit(1)

    threading.Thread(target=crash, daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model-name", default="fake-model")
    parser.add_argument("--checkpoint")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--startup-delay", type=float, default=0.0)
    parser.add_argument("--exit-at-start", type=int)
    parser.add_argument("--never-listen", action="store_true")
    parser.add_argument("--crash-after", type=float)
    parser.add_argument("--ignore-sigterm", action="store_true")
    parser.add_argument("--spawn-worker", action="store_true")
    parser.add_argument("--pid-file")
    parser.add_argument("--api-key", help="accepted and ignored (log scrubbing tests)")
    parser.add_argument("--log-line", help="printed at start (log scrubbing tests)")
    parser.add_argument(
        "--skip-tokenizer-init", action="store_true", help="a boolean flag named like a key"
    )
    args = parser.parse_args()

    # Real servers print their arguments at start; so does this one.
    print(f"args: {sys.argv[1:]}", flush=True)
    # The GPUs a scheduler gave the job (the Ray executor's tests read this).
    print(f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '')}", flush=True)
    if args.log_line:
        print(args.log_line, flush=True)
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    worker_pid = 0
    if args.spawn_worker:
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        worker_pid = worker.pid
    if args.pid_file:
        Path(args.pid_file).write_text(f"{os.getpid()} {worker_pid}")
    broken = bool(args.checkpoint) and (Path(args.checkpoint) / "fake_broken").exists()
    if args.exit_at_start is not None or broken:
        print("error: checkpoint not found (CUDA out of memory)", flush=True)
        sys.exit(3 if args.exit_at_start is None else args.exit_at_start)
    time.sleep(args.startup_delay)
    if args.never_listen:
        while True:
            time.sleep(1)
    server = FakeServer(
        latency=args.latency,
        handler=toy_agent(read_skill(args.checkpoint)),
        model_name=args.model_name,
        host=args.host,
        port=args.port,
        record_bodies=False,
    )

    async def serve() -> None:
        await server.listen()
        print(f"listening on {server.url}", flush=True)
        if args.crash_after is not None:
            _crash_later(args.crash_after)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
