"""Headless Chromium for the report tests.

``.ci/install-chromium.sh`` installs it. A test that needs it fails when it is
missing, unless HARNESS_SKIP_BROWSER=1 asks to skip it on purpose. Set
HARNESS_TEST_ARTIFACTS to a folder to keep screenshots and dumped pages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def chromium() -> str:
    path = (
        os.environ.get("HARNESS_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )
    if path:
        return path
    if os.environ.get("HARNESS_SKIP_BROWSER") == "1":
        pytest.skip("HARNESS_SKIP_BROWSER=1: browser test skipped on request")
    pytest.fail("Chromium not found; run .ci/install-chromium.sh (or set HARNESS_CHROMIUM)")


def run_chromium(profile_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """Chromium headless, offline, with a fresh profile; JavaScript gets 5 s of virtual time."""
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile_dir / 'chromium-profile'}",
        "--virtual-time-budget=5000",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def dump_dom(profile_dir: Path, url: str) -> str:
    done = run_chromium(profile_dir, "--dump-dom", url)
    assert "<html" in done.stdout, done.stderr[-2000:]
    return done.stdout


def keep_artifact(path: Path) -> None:
    folder = os.environ.get("HARNESS_TEST_ARTIFACTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(folder) / path.name)


# Pages through the viewer's list and clicks every sample, as a reader would; a
# sample "opens" when its detail heading appears without a script error. The
# viewer inflates its data asynchronously: it marks the body with data-ready once
# its list is shown and with data-opened once a sample's detail is drawn.
_OPEN_EVERY_SAMPLE = r"""
(function () {
  var errors = [];
  window.addEventListener("error", function (e) { errors.push(String(e.message)); });
  window.addEventListener("unhandledrejection", function (e) { errors.push(String(e.reason)); });
  var opened = 0, failed = [], pages = 0, body = document.body;
  // Calls then() once test() holds, re-checked whenever the body's attributes change.
  function until(test, then) {
    if (test()) { then(); return; }
    var observer = new MutationObserver(function () {
      if (!test()) return;
      observer.disconnect();
      then();
    });
    observer.observe(body, {attributes: true});
  }
  function finish() {
    var out = document.createElement("pre");
    out.id = "probe-result";
    out.textContent = JSON.stringify({opened: opened, failed: failed.slice(0, 20),
                                      errors: errors.slice(0, 20), title: document.title});
    body.appendChild(out);
  }
  function clickEach(k) {
    var buttons = document.querySelectorAll("#list button");
    if (k >= buttons.length) {
      var label = document.getElementById("page").textContent;
      document.getElementById("next").click();
      pages++;
      if (document.getElementById("page").textContent === label || pages > 100000) finish();
      else clickEach(0);
      return;
    }
    var before = errors.length, button = buttons[k], text = button.textContent;
    document.getElementById("detail").replaceChildren();
    body.removeAttribute("data-opened");
    button.click();
    until(function () { return body.hasAttribute("data-opened"); }, function () {
      if (document.querySelector("#detail h3") && errors.length === before) opened++;
      else failed.push(text);
      clickEach(k + 1);
    });
  }
  until(function () { return body.hasAttribute("data-ready"); }, function () {
    until(function () { return body.hasAttribute("data-opened"); }, function () { clickEach(0); });
  });
})();
"""


def run_probe(profile_dir: Path, report: Path, script: str, fragment: str = "") -> dict:
    """Run ``script`` in a copy of the report (allowed by the page's own nonce) and
    return the JSON it writes into ``<pre id="probe-result">``."""
    import re

    page = report.read_text(encoding="utf-8")
    nonce = re.search(r'<script nonce="([^"]+)">', page).group(1)
    probe = f'<script nonce="{nonce}">{script}</script>'
    copy = profile_dir / f"probe-{report.name}"
    copy.write_text(page.replace("</body></html>", probe + "</body></html>"), encoding="utf-8")
    return probe_result(profile_dir, copy.as_uri() + fragment)


def probe_result(profile_dir: Path, url: str) -> dict:
    """Open ``url`` (a page carrying a probe script) and return the JSON the probe
    writes into ``<pre id="probe-result">``."""
    import html
    import json
    import re

    done = run_chromium(profile_dir, "--dump-dom", url)
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


def open_every_sample(profile_dir: Path, report: Path) -> dict:
    """Open every sample of a report in Chromium: {"opened", "failed", "errors", "title"}."""
    return run_probe(profile_dir, report, _OPEN_EVERY_SAMPLE)
