"""End the model servers that harness runs under a folder started and left running.

``python scripts/end_servers.py FOLDER``: every ``server.log`` under FOLDER
records the process group of the server it logs (harness/serving/process.py);
each group that still exists is sent SIGKILL (a server busy generating ignores
SIGTERM). Only those groups: never a process found by its name or command line,
which could be another user's, or another CI job's.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from harness.serving.process import started_groups


def end_servers(folder: Path) -> list[int]:
    """SIGKILL to each recorded server group under ``folder`` still alive; the groups ended."""
    ended = []
    for log in sorted(folder.rglob("server.log")):
        for group in started_groups(log.read_text(encoding="utf-8", errors="replace")):
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue  # ended already (its id is no group now), or not ours
            ended.append(group)
    return ended


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        for group in end_servers(Path(folder)):
            print(f"ended the server process group {group} left by {folder}")
