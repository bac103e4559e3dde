"""Compare harness BFCL scores with the official BFCL evaluator on the same results.

Outside CI. Steps:

1. Export a run's BFCL records to BFCL's result-file layout::

       harness export-bfcl RUN_DIR EXPORT_DIR        # writes EXPORT_DIR/result/<model>/...

2. Run this script with the run's scores.json::

       python scripts/bfcl_official_parity.py EXPORT_DIR RUN_DIR/scores.json

   It runs the official evaluator (``bfcl_eval.eval_checker.eval_runner``) in a
   subprocess on EXPORT_DIR and prints per-category accuracies and the headline
   numbers side by side with ours.

Which Python runs the official evaluator:
- ``--python PATH`` pointing at an environment where ``bfcl-eval`` is installed
  with its full dependency tree (vendor SDKs and all): the evaluator runs as
  published, the model folder name must be a key of its registry (the export's
  default names are).
- by default, the current interpreter with the harness's stand-in for the
  package's model registry (``harness.adapters.bfcl.official``); this needs only
  ``openai`` importable (the registry entry's handler class imports it). The
  evaluator's checking and aggregation code still runs as published.

Both need OPENAI_API_KEY set to anything (the handler builds a client; no call
is made); the script sets a dummy one when it is missing.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The evaluator runs in a child process so that its module-level state (score
# folders, cached simulator instances) never touches the caller.
CHILD_CODE = r"""
import json, os, sys
from pathlib import Path
result_dir, score_dir, model, categories, stand_in = sys.argv[1:6]
if stand_in == "1":
    from harness.adapters.bfcl import official
    official.prepare()  # project root + registry stand-in, before any bfcl_eval import
    from bfcl_eval.model_handler.api_inference.openai_response import OpenAIResponsesHandler
    import bfcl_eval.constants.model_config as registry
    registry.MODEL_CONFIG_MAPPING.update(official.registry_entries(OpenAIResponsesHandler))
from bfcl_eval.eval_checker import eval_runner
eval_runner.main([model], json.loads(categories), result_dir, score_dir, partial_eval=True)
"""

# Our headline name -> (official CSV file, column); the group files hold the
# group scores with missing categories counted as 0, like ours.
HEADLINE_COLUMNS = {
    "overall": ("data_overall.csv", "Overall Acc"),
    "non_live": ("data_non_live.csv", "Non-Live Overall Acc"),
    "live": ("data_live.csv", "Live Overall Acc"),
    "hallucination": ("data_overall.csv", "Irrelevance Detection"),
    "multi_turn": ("data_multi_turn.csv", "Multi Turn Overall Acc"),
    "agentic": ("data_agentic.csv", "Agentic Overall Acc"),
}


def run_official(
    export_dir: Path, model: str, categories: list[str], python: str | None
) -> tuple[dict[str, dict], dict[str, str]]:
    """Per-category score headers and the headline numbers of the official evaluator."""
    score_dir = Path(tempfile.mkdtemp(prefix="bfcl-official-scores-"))
    env = dict(os.environ)
    env.setdefault("OPENAI_API_KEY", "unused")
    env["BFCL_PROJECT_ROOT"] = str(score_dir)
    stand_in = "0" if python else "1"
    command = [
        python or sys.executable,
        "-c",
        CHILD_CODE,
        str((export_dir / "result").resolve()),
        str(score_dir / "score"),
        model,
        json.dumps(categories),
        stand_in,
    ]
    completed = subprocess.run(command, env=env, capture_output=True, text=True)
    if completed.returncode != 0:
        sys.stderr.write(completed.stdout[-4000:] + completed.stderr[-4000:])
        raise SystemExit(f"official evaluator failed (exit {completed.returncode})")
    folder = model.replace("/", "_")
    headers = {}
    for path in (score_dir / "score" / folder).rglob("BFCL_v4_*_score.json"):
        category = path.name[len("BFCL_v4_") : -len("_score.json")]
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        # The first line is the summary; every further line is a failed entry.
        headers[category] = {**lines[0], "failed_ids": sorted(line["id"] for line in lines[1:])}
    headline: dict[str, str] = {}
    for name, (file_name, column) in HEADLINE_COLUMNS.items():
        path = score_dir / "score" / file_name
        if path.exists():
            with path.open() as handle:
                rows = list(csv.DictReader(handle))
            if rows:
                headline[name] = rows[0].get(column, "")
    return headers, headline


def our_scores(
    scores_path: Path,
) -> tuple[dict[str, float], dict[str, float], dict[str, list[str]]]:
    """Per-category accuracies, headline and failed entry ids (trial 0) of the
    BFCL part of a scores.json."""
    data = json.loads(scores_path.read_text())
    bfcl = data.get("bfcl") or data.get("benchmarks", {}).get("bfcl") or data
    subsets = {
        name: result["metrics"]["accuracy"] for name, result in (bfcl.get("subsets") or {}).items()
    }
    failed: dict[str, list[str]] = {}
    for key, record in (data.get("records") or {}).items():
        # keys look like bfcl/<category>/<id>#<trial>
        benchmark, category, rest = key.split("/", 2)
        entry_id, _, trial = rest.rpartition("#")
        score = record.get("score") or {}
        if benchmark == "bfcl" and trial == "0" and not score.get("passed"):
            failed.setdefault(category, []).append(entry_id)
    return subsets, dict(bfcl.get("headline") or {}), failed


def percent(value: object) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, str):
        value = value.strip().rstrip("%")
        try:
            return f"{float(value):.2f}"
        except ValueError:
            return value
    return f"{100 * float(value):.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export_dir", type=Path, help="folder holding result/<model>/...")
    parser.add_argument("scores", type=Path, nargs="?", help="the run's scores.json")
    parser.add_argument("--model", help="model folder name (default: the only one in the export)")
    parser.add_argument("--python", help="interpreter with the full bfcl-eval installed")
    args = parser.parse_args(argv)

    models = [p.name for p in (args.export_dir / "result").iterdir() if p.is_dir()]
    model = args.model or (models[0] if len(models) == 1 else None)
    if model is None:
        raise SystemExit(f"several models in the export, pick one with --model: {models}")
    categories = sorted(
        path.name[len("BFCL_v4_") : -len("_result.json")]
        for path in (args.export_dir / "result" / model.replace("/", "_")).rglob("*_result.json")
    )
    official_headers, official_overall = run_official(
        args.export_dir, model, categories, args.python
    )
    ours, headline, our_failed = our_scores(args.scores) if args.scores else ({}, {}, {})

    print(f"{'category':28} {'entries':>7} {'official %':>11} {'harness %':>10}  match")
    mismatches = 0
    for category in categories:
        header = official_headers.get(category, {})
        theirs = header.get("accuracy")
        mine = ours.get(category)
        same = theirs is not None and mine is not None and abs(theirs - mine) < 1e-9
        same_entries = sorted(our_failed.get(category, [])) == header.get("failed_ids", [])
        if mine is not None and not same_entries:
            print(f"  failed entries differ in {category}")
            same = False
        mismatches += int(mine is not None and not same)
        mark = "yes" if same else ("-" if mine is None else "NO")
        print(
            f"{category:28} {header.get('total_count', '-'):>7} {percent(theirs):>11} {percent(mine):>10}  {mark}"
        )
    if official_overall:
        print()
        print(f"{'headline':28} {'official %':>19} {'harness %':>10}")
        for name in HEADLINE_COLUMNS:
            print(
                f"{name:28} {percent(official_overall.get(name)):>19} {percent(headline.get(name)):>10}"
            )
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
