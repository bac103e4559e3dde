#!/usr/bin/env bash
# The sandbox of tau2-bench's shell-based banking_knowledge retrieval (alltools,
# terminal_use*): sandbox-runtime from npm at the version tau2-bench v1.0.1 pins,
# and ripgrep, bubblewrap and socat from Debian. Idempotent: installs only what is
# missing from PATH (tests/adapters/tau2/test_tau3_banking.py uses them).
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
else
    SUDO=
fi
missing=()
command -v rg >/dev/null || missing+=(ripgrep)
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v socat >/dev/null || missing+=(socat)
command -v npm >/dev/null || command -v srt >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
if ! command -v srt >/dev/null; then
    $SUDO npm install -g @anthropic-ai/sandbox-runtime@0.0.23
fi
# Whether bubblewrap can make its namespaces here (containers may forbid it).
bwrap --ro-bind / / true || echo "install-sandbox: bubblewrap cannot create its namespaces here (the alltools test says why)" >&2
