#!/usr/bin/env bash
# Make the project's environment (.venv) on a fresh machine: install uv if it is
# missing, then sync the locked dependencies. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v uv >/dev/null 2>&1; then
    python3 -m pip install --quiet --disable-pip-version-check uv
fi
uv sync --quiet --frozen 2>/dev/null || uv sync --quiet
