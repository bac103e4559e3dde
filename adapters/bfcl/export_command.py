"""``harness export-bfcl RUN_DIR OUT_DIR``: a run's BFCL records in BFCL's file layout.

A command the BFCL adapter contributes to the CLI (``BFCLAdapter.commands()``);
the layout itself is written by ``export.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "write a run's BFCL results in BFCL's file layout"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument(
        "--model-name",
        help="model name for the result folder: a name in BFCL's model registry, without '_' "
        "(default: one matching the run's mode)",
    )
    parser.add_argument("--trial", type=int, default=0, help="which trial to export")


def run(args: argparse.Namespace) -> int:
    from harness.config.validate import writable_folder
    from harness.errors import ConfigError
    from harness.store.run_store import RunStore

    from .export import export_bfcl

    if args.trial < 0:
        raise ConfigError("--trial must be >= 0")
    writable_folder(args.out_dir, "out_dir")
    store = RunStore(args.run_dir)
    store.read_manifest()  # a clear error when this is not a run folder
    records = [r for r in store.records().values() if r["benchmark"] == "bfcl"]
    if not records:
        raise ConfigError(f"{args.run_dir} has no BFCL records")
    if not any(int(record["trial"]) == args.trial for record in records):
        trials = sorted({int(record["trial"]) for record in records})
        raise ConfigError(f"{args.run_dir} has no BFCL records of --trial {args.trial} ({trials})")
    from harness.models.redact import mask

    # The records are written masked already; a key this command holds (its
    # environment's) is masked once more, by value: nothing else is rewritten, so
    # the export judges what the run judged.
    records = [mask(record) for record in records]
    written = export_bfcl(records, args.out_dir, model_name=args.model_name, trial=args.trial)
    print(f"wrote {len(written)} result files under {args.out_dir}", file=sys.stderr)
    return 0
