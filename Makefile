# The two commands of the README. Both make the environment first.
.PHONY: demo test test-slow lint bench

# uv as installed by scripts/bootstrap.sh (on PATH, or as a module of python3).
UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")

# A real evaluation with no key and no GPU: the smoke suite with the built-in
# oracle model, ending with its leaderboard.
demo:
	@bash scripts/bootstrap.sh
	$(UV) run harness run --suite smoke --model oracle --out results/smoke-oracle

# The HTML report's test opens the report in headless Chromium (installed here
# from the Debian package when missing); tau3's alltools retrieval needs its sandbox.
test:
	@bash scripts/bootstrap.sh
	@bash .ci/install-chromium.sh
	@bash .ci/install-sandbox.sh
	$(UV) run pytest -q

# The tests marked slow (official parity, servers, whole runs); CI runs them after `make test`.
test-slow:
	@bash scripts/bootstrap.sh
	@bash .ci/install-chromium.sh
	$(UV) run pytest -q -m 'slow and not full and not real_model'

# The type checker reads its settings (harness/ and adapters/) from pyproject.toml.
# Commit subjects after the rule's base commit: at most 72 characters.
lint:
	@bash scripts/bootstrap.sh
	$(UV) run ruff check .
	$(UV) run ruff format --check .
	$(UV) run mypy
	$(UV) run python scripts/check_commit_subjects.py

bench:
	@bash scripts/bootstrap.sh
	for script in bench/*.py; do $(UV) run python $$script || exit 1; done
