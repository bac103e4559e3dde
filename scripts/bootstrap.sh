#!/usr/bin/env bash
# Make the project's environment (.venv) on a fresh machine: install uv if it is
# missing, then sync the locked dependencies. Safe to run again.
# HARNESS_EXTRAS="ray memory-vector" adds optional extras (CI adds ray, so that the
# Ray executor's test runs).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v uv >/dev/null 2>&1; then
    python3 -m pip install --quiet --disable-pip-version-check uv
    uv() { python3 -m uv "$@"; }
fi
extras=()
for extra in ${HARNESS_EXTRAS:-}; do
    extras+=(--extra "$extra")
done
# Byte-compiled at install: imports stay fast even where PYTHONDONTWRITEBYTECODE
# is set (Ray's workers must import within its start-up timeout).
uv sync --quiet --frozen --compile-bytecode "${extras[@]}" 2>/dev/null ||
    uv sync --quiet --compile-bytecode "${extras[@]}"
