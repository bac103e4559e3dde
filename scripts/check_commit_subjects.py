"""Check that commit subjects are at most 72 characters (details go in the body).

``python scripts/check_commit_subjects.py [BASE [HEAD]]``, in the repository,
checks every commit that descends from BASE and leads to HEAD (default: the
commit the rule starts at, and HEAD). Older history is never checked. A clone
without BASE (a shallow clone, an unrelated fork) or a folder that is no git
repository checks nothing and says so: exit code 0. A subject over the limit is printed with its commit: exit code 1.
"""

from __future__ import annotations

import subprocess
import sys

LIMIT = 72
# The rule applies to commits after this one (the history before it is left as is;
# it holds one subject of 74 characters).
BASE = "70adb551542ea4f647854045c5601c2eeff574fe"


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=False)


def subjects_after(base: str, head: str) -> list[tuple[str, str]] | None:
    """(commit, subject) of each commit descending from ``base`` up to ``head``;
    None when this clone lacks ``base`` (or is no repository)."""
    if _git("cat-file", "-e", f"{base}^{{commit}}").returncode != 0:
        return None
    listed = _git("log", "--ancestry-path", "--format=%h%x00%s", f"{base}..{head}", "--")
    if listed.returncode != 0:
        return None
    found = []
    for line in listed.stdout.splitlines():
        commit, _, subject = line.partition("\0")
        found.append((commit, subject))
    return found


def main(argv: list[str]) -> int:
    base = argv[0] if argv else BASE
    head = argv[1] if len(argv) > 1 else "HEAD"
    found = subjects_after(base, head)
    if found is None:
        print(f"commit subjects: {base[:12]} is not in this clone; nothing checked")
        return 0
    long = [(commit, subject) for commit, subject in found if len(subject) > LIMIT]
    for commit, subject in long:
        print(f"{commit}: subject of {len(subject)} characters (at most {LIMIT}): {subject}")
    print(
        f"commit subjects: {len(found)} commits after {base[:12]} checked, "
        f"{len(long)} over {LIMIT} characters"
    )
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
