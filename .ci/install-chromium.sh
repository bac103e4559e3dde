#!/usr/bin/env bash
# Headless Chromium for the HTML report's browser test (tests/results/test_report.py).
# Idempotent: installs the Debian package only when /usr/bin/chromium is missing.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
else
    SUDO=
fi
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
/usr/bin/chromium --version
