"""`harness view` in headless Chromium: open the page, filter, open a failing sample,
put it beside the other run, follow a record that lands, and land on a link (see
tests/headless_browser.py for how Chromium is found and where artifacts go)."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from urllib.parse import quote

import pytest
from fake_runs import record
from headless_browser import dump_dom, keep_artifact, probe_result, run_chromium
from test_view import WRONG_COUNT, bfcl_run

from harness.report.html import ReportOptions, build_report
from harness.view.server import Response, ViewerApp, make_server

# Filters the list as a reader would, opens a failing sample and the same sample in
# the other run, then waits for the record the server adds on the page's second poll.
VIEW_PROBE = r"""
(function () {
  var body = document.body, result = {};
  function until(test, then) {
    if (test()) { then(); return; }
    var observer = new MutationObserver(function () {
      if (!test()) return;
      observer.disconnect();
      then();
    });
    observer.observe(body, {attributes: true, childList: true, subtree: true,
                            characterData: true});
  }
  function text(selector) {
    return Array.prototype.map.call(document.querySelectorAll(selector),
                                    function (n) { return n.textContent; });
  }
  function count() { return document.getElementById("count").textContent; }
  function choose(id, label) {
    var select = document.getElementById(id);
    Array.prototype.forEach.call(select.options, function (o) {
      if (o.textContent === label) select.value = o.value;
    });
    select.dispatchEvent(new Event("change"));
  }
  function finish() {
    var out = document.createElement("pre");
    out.id = "probe-result";
    out.textContent = JSON.stringify(result);
    body.appendChild(out);
  }
  until(function () { return body.hasAttribute("data-ready") && body.hasAttribute("data-opened"); },
        function () {
    result.runs = text("#run-list td:first-child");
    result.all = count();
    result.buttonHeights = Array.prototype.map.call(document.querySelectorAll("#list button"),
                                                    function (b) { return b.offsetHeight; });
    choose("f-outcome", "failed");
    result.failed = count();
    choose("f-subset", "bfcl/simple");
    result.none = text("#list p.empty")[0];
    choose("f-subset", "all");
    choose("f-error", "parallel_function_checker_no_order:wrong_count");
    result.errorKind = count();
    var search = document.getElementById("f-text");
    search.value = "parallel_1";
    search.dispatchEvent(new Event("input"));
    result.searched = count();
    result.labels = text("#list button");
    result.hash = decodeURIComponent(location.hash);
    body.removeAttribute("data-opened");
    document.querySelectorAll("#list button")[1].click();
    until(function () { return body.hasAttribute("data-opened"); }, function () {
      result.opened = body.getAttribute("data-opened");
      result.heading = text("#detail .pane h3");
      result.scoreRows = text("#detail table.kv tr");
      result.transcript = text("#detail .msg pre");
      body.removeAttribute("data-opened");
      choose("partner", "other");
      until(function () { return body.hasAttribute("data-opened"); }, function () {
        result.panes = text("#detail .pane h3");
        result.linkHash = decodeURIComponent(location.hash);
        body.removeAttribute("data-opened");
        document.dispatchEvent(new KeyboardEvent("keydown", {key: "k"}));
        until(function () { return body.hasAttribute("data-opened"); }, function () {
        result.afterKey = text("#detail .pane h3");
        until(function () { return /of 27 samples/.test(count()); }, function () {
          result.afterLanding = count();
          result.runsAfter = text("#run-list tr");
          choose("f-outcome", "all");
          choose("f-error", "all");
          search.value = "simple_1";
          search.dispatchEvent(new Event("input"));
          result.landed = text("#list button");
          finish();
        });
        });
      });
    });
  });
})();
"""


class ProbedViewer(ViewerApp):
    """The viewer with a probe script in its page (allowed by the page's nonce) and,
    on the page's second poll, one more record written to the first run."""

    def __init__(self, folders: list[Path], probe: str):
        super().__init__(folders)
        self.probe = probe
        self.polls = 0

    def page(self, nonce: str) -> str:
        script = f'<script nonce="{nonce}">{self.probe}</script>'
        return super().page(nonce).replace("</body>", script + "</body>")

    def handle(self, target: str) -> Response:
        if target.startswith("/api/rows"):
            self.polls += 1
            if self.polls == 2:
                landing = record("bfcl", "simple", "simple_1")
                with (self.runs.runs[0].folder / "samples.jsonl").open("a") as handle:
                    handle.write(json.dumps(landing) + "\n")
        return super().handle(target)


def serve(app: ViewerApp):
    server = make_server(app, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def two_runs(tmp_path):
    return [bfcl_run(tmp_path / "a", "small"), bfcl_run(tmp_path / "b", "other")]


def test_filter_open_a_failing_sample_side_by_side_and_follow_a_live_run(two_runs, tmp_path):
    server = serve(ProbedViewer(two_runs, VIEW_PROBE))
    try:
        seen = probe_result(tmp_path, f"http://127.0.0.1:{server.server_port}/")
    finally:
        server.shutdown()
        server.server_close()

    assert seen["runs"] == ["small", "other"]
    assert seen["all"] == "26 of 26 samples"
    # More buttons than the list's height holds: they scroll, none is squeezed.
    assert len(seen["buttonHeights"]) == 26 and min(seen["buttonHeights"]) >= 18
    assert seen["failed"] == "8 of 26 samples"  # parallel_1, 4, 7, 10 in each run
    assert seen["none"] == "No sample matches these filters."
    assert seen["errorKind"] == "8 of 26 samples"
    assert seen["searched"] == "4 of 26 samples"
    # Natural order: parallel_1 before parallel_10.
    assert seen["labels"] == [
        "FAIL small · bfcl/parallel/parallel_1#0 · reward 0",
        "FAIL small · bfcl/parallel/parallel_10#0 · reward 0",
        "FAIL other · bfcl/parallel/parallel_1#0 · reward 0",
        "FAIL other · bfcl/parallel/parallel_10#0 · reward 0",
    ]
    assert seen["hash"].endswith(f"&error={WRONG_COUNT}&outcome=fail&q=parallel_1")
    # The failing sample: its outcome, its BFCL error code and its transcript.
    assert seen["opened"] == "bfcl/parallel/parallel_10#0"
    assert seen["heading"] == ["bfcl/parallel/parallel_10#0  (small)"]
    assert "outcomefail" in seen["scoreRows"]
    assert f"error_type{WRONG_COUNT}" in seen["scoreRows"]
    assert "task parallel_10" in seen["transcript"]
    assert seen["panes"] == [
        "bfcl/parallel/parallel_10#0  (small)",
        "bfcl/parallel/parallel_10#0  (other)",
    ]
    assert seen["linkHash"] == (
        f"#sample=small/bfcl/parallel/parallel_10#0&with=other&error={WRONG_COUNT}"
        "&outcome=fail&q=parallel_1"
    )
    # "k" steps to the previous sample of the list, still beside the other run.
    assert seen["afterKey"] == [
        "bfcl/parallel/parallel_1#0  (small)",
        "bfcl/parallel/parallel_1#0  (other)",
    ]
    # A record written while the page was open shows up in the list and the run list.
    assert seen["afterLanding"] == "4 of 27 samples"
    assert any(row.startswith("small") and "14" in row for row in seen["runsAfter"])
    assert seen["landed"] == ["PASS small · bfcl/simple/simple_1#0 · reward 1"]


def test_a_link_lands_on_one_sample_with_its_filters(two_runs, tmp_path):
    server = serve(ViewerApp(two_runs))
    url = f"http://127.0.0.1:{server.server_port}/#" + "&".join(
        [
            "sample=" + quote("other/bfcl/parallel/parallel_4#0", safe=""),
            "with=small",
            "outcome=fail",
        ]
    )
    try:
        dom = dump_dom(tmp_path, url)
        shot = tmp_path / "view-screenshot.png"
        done = run_chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,1000", url)
    finally:
        server.shutdown()
        server.server_close()
    assert re.search(r'<body[^>]*data-opened="bfcl/parallel/parallel_4#0"', dom)
    assert "8 of 26 samples" in dom
    headings = re.findall(r'<div class="pane"><h3>([^<]*)</h3>', dom)
    assert headings == [
        "bfcl/parallel/parallel_4#0  (other)",
        "bfcl/parallel/parallel_4#0  (small)",
    ]
    assert 'aria-current="true">FAIL other · bfcl/parallel/parallel_4#0' in dom
    assert shot.is_file() and shot.read_bytes().startswith(b"\x89PNG"), done.stderr[-2000:]
    keep_artifact(shot)


def test_a_run_without_records_shows_an_empty_list(tmp_path):
    run = tmp_path / "starting"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"model": {"name": "m"}}))
    server = serve(ViewerApp([run]))
    try:
        dom = dump_dom(tmp_path, f"http://127.0.0.1:{server.server_port}/")
    finally:
        server.shutdown()
        server.server_close()
    assert 'data-ready="' in dom and "0 of 0 samples" in dom
    assert "No records yet: the list fills in as samples finish." in dom
    assert "no records yet" in dom  # the run list's state


def test_the_report_file_reads_the_same_address(two_runs, tmp_path):
    """The report shares the page: its list takes the filters from the address too."""
    out = tmp_path / "report.html"
    build_report(two_runs, out, ReportOptions(n_boot=20, plots=False))
    fragment = "#" + "&".join(
        ["outcome=fail", "error=" + quote(WRONG_COUNT, safe=""), "q=parallel_1", "run=other"]
    )
    dom = dump_dom(tmp_path, out.as_uri() + fragment)
    assert "2 of 26 samples" in dom
    listed = dom[dom.index('id="list"') : dom.index('id="pager"')]
    labels = re.findall(r'title="([^"]*)"', listed)
    assert labels == [
        "FAIL other · bfcl/parallel/parallel_1#0 · reward 0",
        "FAIL other · bfcl/parallel/parallel_10#0 · reward 0",
    ]
