"""FinMCP: the harness's metrics against the official ``evaluation.py`` itself.

Outside CI (needs a copy of the official repository, aliyun/qwen-dianjin)::

    python scripts/finmcp_official_parity.py PATH/TO/DianJin-TIR/eval/evaluation.py \
        [--data-dir ../shared/data/finmcp] [--without-labels]

The scripted model of ``tests/adapters/finmcp/test_finmcp_official_loop.py`` (every kind of
mistake, malformed arguments the official loop drops items for and some it keeps)
answers both the test-only re-implementation of the official inference loop and
the harness. The loop's answer file goes to the official ``evaluation.py``, run
unchanged in a subprocess (it needs only the standard library); its printed
metrics are compared cell by cell with the harness's aggregate. Exits non-zero
on any difference.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "adapters" / "finmcp"))

from finmcp_official_reference import infer_all  # noqa: E402
from test_finmcp_official_loop import (  # noqa: E402
    build_plans,
    compare_cells,
    official_execute,
    policy_for,
    run_harness,
    without_labels,
)

from harness.adapters.finmcp import FinMCPAdapter  # noqa: E402
from harness.adapters.finmcp.data import load_source  # noqa: E402

GROUPS = ("level1", "difficulty", "task")


def parse_official_output(text: str) -> dict:
    """The overall lines (``key value``) and the three group sections (``name {dict}``)."""
    body = text.split("=" * 20, 1)[1]
    sections = [s for s in body.split("-" * 10) if s.strip()]
    overall = {}
    for line in sections[0].strip().splitlines():
        key, value = line.split(" ", 1)
        overall[key] = ast.literal_eval(value)
    result = {"overall": overall}
    for name, section in zip(GROUPS, sections[1:4], strict=True):
        table = {}
        for line in section.strip().splitlines():
            key, _, value = line.rpartition(" {")
            table[key] = ast.literal_eval("{" + value)
        result[name] = table
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("evaluation_py", type=Path)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared/data/finmcp")
    parser.add_argument(
        "--without-labels",
        action="store_true",
        help="take scenery / diff_level / task away from a few items first (the official "
        "evaluation skips an item without scenery or diff_level.level)",
    )
    args = parser.parse_args()

    items = load_source(args.data_dir).subsets["all"]
    data_dir = args.data_dir
    if args.without_labels:
        items = without_labels(items)
        data_dir = Path(tempfile.mkdtemp()) / "items.json"
        data_dir.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    policy = policy_for(build_plans(items))
    answers = infer_all(items, policy, official_execute)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "answers.json"
        path.write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")
        run = subprocess.run(
            [sys.executable, str(args.evaluation_py), "--eval_data_path", str(path)],
            capture_output=True,
            text=True,
            check=True,
        )
    official = parse_official_output(run.stdout)

    adapter = FinMCPAdapter()
    samples = adapter.load("all", data_dir=data_dir)
    result = adapter.aggregate(run_harness(adapter, samples, policy))
    cells, differences = compare_cells(official, result.subsets)
    dropped = sum(1 for a in answers if a.get("error"))
    print(
        f"items {len(items)}, dropped by the official loop {dropped}, harness dropped "
        f"{result.subsets.get('dropped_items').n_records if 'dropped_items' in result.subsets else 0}"
    )
    skipped = result.subsets.get("skipped_items")
    print(f"harness skipped for missing labels: {skipped.n_records if skipped else 0}")
    print(f"official overall: {official['overall']}")
    print(f"{cells} cells compared, {len(differences)} differ")
    for line in differences:
        print("  " + line)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
