"""``harness view RUN_DIR...``: a local web viewer over run folders, live while they grow."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "local web viewer over run folders (127.0.0.1; follows a run still being written)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dirs", type=Path, nargs="+", help="run folders, or folders of runs (a sweep)"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one, printed)"
    )
    parser.add_argument(
        "--max-chars",
        type=int,
        default=20_000,
        help="cut longer strings in a sample (0: keep everything)",
    )
    parser.add_argument("--title", default="harness view")


def run(args: argparse.Namespace) -> int:
    from harness.errors import ConfigError
    from harness.view.runs import find_run_folders
    from harness.view.server import ViewerApp, make_server, url_of

    if args.max_chars < 0:
        raise ConfigError("--max-chars must be >= 0")
    if not 0 <= args.port <= 65535:
        raise ConfigError("--port must be between 0 and 65535")
    found = find_run_folders(args.run_dirs)
    if found.skipped:
        skipped = ", ".join(str(p) for p in found.skipped)
        print(f"harness view: skipped (not run folders): {skipped}", file=sys.stderr)
    app = ViewerApp(found.folders, args.max_chars, args.title)
    try:
        server = make_server(app, args.port)
    except OSError as exc:
        raise ConfigError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}") from None
    print(
        f"harness view: {len(app.runs.runs)} run(s) at {url_of(server)} (Ctrl-C stops)",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("harness view: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
