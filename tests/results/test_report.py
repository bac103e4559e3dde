"""The HTML report: model output is shown as text and never runs, checked in headless Chromium
(see tests/headless_browser.py for how Chromium is found and where artifacts go)."""

from __future__ import annotations

import html
import json
import re
from urllib.parse import quote

import pytest
from fake_runs import make_run, pass_fail_records, record
from headless_browser import dump_dom, keep_artifact, run_chromium, run_probe

from harness.cli import main
from harness.errors import ConfigError
from harness.report.html import ReportOptions, build_report
from harness.report.samples import read_index, read_samples

# Each would change the page if the browser ever treated it as markup.
SCRIPT_ATTACK = "<script>document.title='pwned'</script>"
IMG_ATTACK = "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">"
HTML_ATTACK = '<b id="injected-bold">bold</b> & </script><script>document.title="pwned2"</script>'
SVG_ATTACK = "<svg onload=\"document.body.setAttribute('data-pwned','svg')\"></svg>"
TITLE = "harness report"


def evil_record() -> dict:
    messages = [
        {"role": "system", "content": "You are a helpful agent."},
        {"role": "user", "content": "Book a flight from <SFO> to <JFK>."},
        {"role": "user", "content": "hidden goal: insist on a refund", "hidden": True},
        {
            "role": "assistant",
            "content": SCRIPT_ATTACK,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search", "arguments": json.dumps({"q": IMG_ATTACK})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": HTML_ATTACK},
        {"role": "assistant", "content": "line one\u2028line two\u2029end"},
    ]
    rehearsal = {
        "mode": "parallel",
        "n": 1,
        "memory": "Lesson: check airport codes first. " + SVG_ATTACK,
        "rehearsals": [
            {
                "messages": [{"role": "assistant", "content": "imagined call " + SCRIPT_ATTACK}],
                "critique": "the imagined search failed",
            }
        ],
    }
    return record(
        "tau2",
        "airline",
        "evil",
        passed=False,
        messages=messages,
        extra={"rehearsal": rehearsal},
        details={"judge_note": '<iframe src="javascript:alert(1)"></iframe>'},
    )


@pytest.fixture
def evil_run(tmp_path):
    records = [evil_record(), *pass_fail_records("tau2", "airline", [True, False], prefix="z")]
    return make_run(
        tmp_path,
        "evil-run",
        records,
        {"tau2": {"airline": 1 / 3, "tau2_mean": 1 / 3}},
        model="<img src=y onerror=\"document.body.setAttribute('data-pwned','model')\">",
    )


def test_model_output_is_escaped_in_the_html_text(evil_run, tmp_path):
    out = tmp_path / "report.html"
    summary = build_report([evil_run], out, ReportOptions(n_boot=100))
    page = out.read_text(encoding="utf-8")
    assert summary.samples == 3
    for attack in (SCRIPT_ATTACK, IMG_ATTACK, HTML_ATTACK, SVG_ATTACK, "<iframe", "<img src=y"):
        assert attack not in page
    # Exactly our own script runs: the others are base64 data blocks (index + chunks).
    chunks = len(read_index(page)["chunks"])
    assert page.count("<script") == 1 + 1 + chunks
    assert page.count('<script type="text/x-deflate-base64"') == 1 + chunks
    blocks = re.findall(r'<script type="text/x-deflate-base64" id="[^"]+">(.*?)</script>', page)
    assert all(re.fullmatch(r"[A-Za-z0-9+/=]*", block) for block in blocks)
    # The data holds the attacks as plain text.
    evil = next(s for s in read_samples(page) if s["trajectory"]["messages"][3:])
    assert evil["trajectory"]["messages"][3]["content"] == SCRIPT_ATTACK
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert html.unescape(policy).startswith("default-src 'none'; img-src data:;")
    # The model name from the manifest is escaped in the leaderboard.
    assert "&lt;img src=y onerror=" in page


@pytest.mark.slow
def test_no_injected_script_runs_in_chromium_and_the_viewer_shows_the_text(evil_run, tmp_path):
    out = tmp_path / "report.html"
    build_report([evil_run], out, ReportOptions(n_boot=100))
    url = out.as_uri() + "#sample=" + quote("evil-run/tau2/airline/evil#0", safe="")
    dom = dump_dom(tmp_path, url)
    dom_file = tmp_path / "report-dom.html"
    dom_file.write_text(dom, encoding="utf-8")
    keep_artifact(dom_file)

    # No injected code ran: the title is ours and nothing marked the body.
    assert re.search(r"<title>([^<]*)</title>", dom).group(1) == TITLE
    body_tag = re.search(r"<body[^>]*>", dom).group(0)
    assert "data-pwned" not in body_tag
    # No injected element exists: the markup is text inside the viewer.
    assert '<b id="injected-bold"' not in dom and "<iframe" not in dom
    assert "<svg" not in dom and '<img src="x"' not in dom and "<img src=x" not in dom
    # The viewer rendered the opened sample (its text nodes serialise escaped).
    detail = dom[dom.index('id="detail"') :]
    assert "tau2/airline/evil#0" in detail
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in detail
    assert "&lt;img src=x onerror=" in detail  # the tool call's arguments
    assert '&lt;b id="injected-bold"&gt;bold&lt;/b&gt; &amp; &lt;/script&gt;' in detail
    assert "hidden from the agent" in detail and "hidden goal: insist on a refund" in detail
    assert "rehearsal memory (parallel, N = 1)" in detail
    assert "Lesson: check airport codes first. &lt;svg onload=" in detail
    # A plain score detail is a row of its table, as text.
    assert (
        '<td>judge_note</td><td>&lt;iframe src="javascript:alert(1)"&gt;&lt;/iframe&gt;</td>'
        in detail
    )
    assert "line one\u2028line two\u2029end" in detail
    # The list shows the three samples of the run.
    assert "3 of 3 samples" in dom

    shot = tmp_path / "report-screenshot.png"
    done = run_chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,2200", url)
    assert shot.is_file() and shot.read_bytes().startswith(b"\x89PNG"), done.stderr[-2000:]
    assert shot.stat().st_size > 20_000
    keep_artifact(shot)


def test_long_strings_are_cut_and_marked(tmp_path):
    long_text = "x" * 50_000
    run = make_run(
        tmp_path,
        "long",
        [record("tau2", "retail", "big", messages=[{"role": "assistant", "content": long_text}])],
        {"tau2": {"retail": 1.0, "tau2_mean": 1.0}},
    )
    out = tmp_path / "r.html"
    build_report([run], out, ReportOptions(n_boot=50, max_chars=1000, plots=False))
    (sample,) = read_samples(out.read_text(encoding="utf-8"))
    shown = sample["trajectory"]["messages"][0]["content"]
    assert shown == "x" * 1000 + " … [truncated: 49000 more characters]"


def test_report_command_with_two_runs_comparison_plots_and_reference(tmp_path, capsys):
    base = make_run(
        tmp_path,
        "qwen3-8b",
        pass_fail_records("tau2", "airline", [True, False, False, True, False, False]),
        {"tau2": {"airline": 2 / 6, "tau2_mean": 2 / 6}},
    )
    trained = make_run(
        tmp_path,
        "envace-8b",
        pass_fail_records("tau2", "airline", [True, True, True, True, False, False]),
        {"tau2": {"airline": 4 / 6, "tau2_mean": 4 / 6}},
    )
    out = tmp_path / "sub" / "report.html"
    argv = ["report", str(base), str(trained), "--out", str(out), "--with-reference", "envace"]
    assert main([*argv, "--n-boot", "200"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "Paired comparisons" in page and "envace-8b against A = qwen3-8b" in page
    # B passed, A failed: each flipped task links to A and B side by side.
    assert (
        '<a class="flip" href="#sample=qwen3-8b%2Ftau2%2Fairline%2Ft1&amp;with=envace-8b">'
        "tau2/airline/t1</a>, "
        '<a class="flip" href="#sample=qwen3-8b%2Ftau2%2Fairline%2Ft2&amp;with=envace-8b">'
    ) in page
    assert page.count('src="data:image/png;base64,') >= 2  # bars and cost at least
    assert "ref:envace" in page and "EnvACE-8B" in page
    assert "http://" not in page and "https://" not in page  # nothing to fetch
    assert "wrote" in capsys.readouterr().err


def test_credentials_echoed_in_records_are_masked(tmp_path, monkeypatch):
    """A key the run holds (the environment's) is masked in the report's samples;
    a key-shaped value of the trajectory that the run does not hold is data."""
    monkeypatch.setenv("HARNESS_TEST_API_KEY", "envsecret-0123456789")
    messages = [
        {"role": "tool", "content": "auth failed for sk-live0123456789abcdef"},
        {"role": "assistant", "content": "the key is envsecret-0123456789"},
    ]
    run = make_run(
        tmp_path,
        "keys",
        [record("tau2", "retail", "k", messages=messages)],
        {"tau2": {"pass^1/retail": 1.0, "tau2_mean": 1.0}},
    )
    out = tmp_path / "r.html"
    build_report([run], out, ReportOptions(n_boot=50, plots=False))
    page = out.read_text(encoding="utf-8")
    data = json.dumps(read_samples(page))
    for text in (page, data):
        assert "envsecret-0123456789" not in text
    assert "auth failed for sk-live0123456789abcdef" in data and "the key is ***" in data


def two_runs(tmp_path, runs=("base", "tuned")):
    """Two runs of 60 tasks; the tuned one passes tasks 40..59 too, and every record
    carries rubric verdicts."""

    def records(passing: int) -> list[dict]:
        out = []
        for n in range(60):
            verdicts = [
                # As VitaBench's judge writes them.
                {"nl_rubric": "greets the user", "met": True, "justification": "said hello"},
                {"nl_rubric": "books it", "met": n < passing, "justification": f"task {n}"},
            ]
            messages = [{"role": "assistant", "content": f"reply for task {n}, {passing}"}]
            out.append(
                record(
                    "tau2",
                    "airline",
                    f"t{n:02d}",
                    passed=n < passing,
                    messages=messages,
                    details={"rubrics": verdicts, "note": "rubric judge"},
                )
            )
        return out

    made = []
    for name, passing in zip(runs, (40, 60), strict=True):
        rate = passing / 60
        made.append(
            make_run(
                tmp_path, name, records(passing), {"tau2": {"airline": rate, "tau2_mean": rate}}
            )
        )
    return made


def test_baseline_option_and_every_baseline_in_the_page(tmp_path):
    base, tuned = two_runs(tmp_path)
    out = tmp_path / "r.html"
    build_report([base, tuned], out, ReportOptions(n_boot=100, plots=False, baseline="tuned"))
    page = out.read_text(encoding="utf-8")
    # Both baselines are in the page; the chosen one is shown, the other hidden.
    assert '<div class="baseline" data-baseline="1"><h3>B = base against A = tuned</h3>' in page
    assert '<div class="baseline" data-baseline="0" hidden><h3>B = tuned against A = base' in page
    assert '<option value="1" selected>tuned</option>' in page
    # Against "tuned", base lost tasks 40..59: A passed, B failed (20).
    assert "A passed, B failed (20)" in page
    with pytest.raises(ConfigError, match="--baseline 'nope' is none of the runs"):
        build_report([base, tuned], out, ReportOptions(plots=False, baseline="nope"))


# Clicks a flip link, then changes the baseline; reports what the page shows.
FLIP_PROBE = r"""
(function () {
  var body = document.body;
  function later(test, then) {
    if (test()) { then(); return; }
    var observer = new MutationObserver(function () {
      if (test()) { observer.disconnect(); then(); }
    });
    observer.observe(body, {attributes: true, subtree: true, childList: true});
  }
  function text(selector) {
    return Array.prototype.map.call(document.querySelectorAll(selector),
                                    function (n) { return n.textContent; });
  }
  later(function () { return body.hasAttribute("data-ready"); }, function () {
    var result = {};
    result.deepLinked = body.getAttribute("data-opened");
    result.current = text("#list button.current");
    result.ariaCurrent = text('#list button[aria-current="true"]');
    result.page = document.getElementById("page").textContent;
    result.panes = text("#detail .pane h3");
    result.rubricRows = text("#detail table.records tr").length;
    result.verdicts = text("#detail td.verdict");
    var link = document.querySelector("div.baseline:not([hidden]) a.flip");
    result.link = link.textContent;
    body.removeAttribute("data-opened");
    link.click();
    later(function () { return body.hasAttribute("data-opened"); }, function () {
      result.afterClick = text("#detail .pane h3");
      result.afterVerdicts = text("#detail td.verdict");
      result.hash = decodeURIComponent(location.hash);
      var select = document.getElementById("baseline");
      select.value = "1";
      select.dispatchEvent(new Event("change"));
      result.visible = text("div.baseline:not([hidden]) h3");
      var out = document.createElement("pre");
      out.id = "probe-result";
      out.textContent = JSON.stringify(result);
      body.appendChild(out);
    });
  });
})();
"""


def test_deep_link_flip_links_side_by_side_rubrics_and_baseline_in_chromium(tmp_path):
    base, tuned = two_runs(tmp_path)
    out = tmp_path / "r.html"
    build_report([base, tuned], out, ReportOptions(n_boot=100, plots=False))
    # Sample 55 of run "tuned" is on the third page of the list (50 a page, runs in order).
    fragment = "#sample=" + quote("tuned/tau2/airline/t55#0", safe="")
    seen = run_probe(tmp_path, out, FLIP_PROBE, fragment)

    assert seen["deepLinked"] == "tau2/airline/t55#0"
    assert seen["current"] == seen["ariaCurrent"] == ["PASS tuned · tau2/airline/t55#0 · reward 1"]
    assert seen["page"] == "page 3 of 3"
    assert seen["panes"] == ["tau2/airline/t55#0  (tuned)"]
    # Rubric verdicts as a table: a header and one row per rubric.
    assert seen["rubricRows"] == 3 and seen["verdicts"] == ["✓ yes", "✓ yes"]
    # The first flip against baseline "base": task 40 passed only in "tuned".
    assert seen["link"] == "tau2/airline/t40"
    assert seen["afterClick"] == ["tau2/airline/t40#0  (base)", "tau2/airline/t40#0  (tuned)"]
    # Base failed "books it" on task 40, tuned met it.
    assert seen["afterVerdicts"] == ["✓ yes", "✗ no", "✓ yes", "✓ yes"]
    assert seen["hash"] == "#sample=base/tau2/airline/t40&with=tuned"
    assert seen["visible"] == ["B = base against A = tuned"]


def test_a_non_standard_number_is_marked_in_the_report(tmp_path):
    run = make_run(
        tmp_path,
        "lenient",
        pass_fail_records("tau2", "airline", [True, False]),
        {"tau2": {"tau2_mean": 0.5}},
    )
    scores = json.loads((run / "scores.json").read_text())
    scores["benchmarks"]["tau2"]["nonstandard"] = ["option malformed_calls: continue"]
    (run / "scores.json").write_text(json.dumps(scores))
    out = tmp_path / "report.html"
    build_report([run], out, ReportOptions(n_boot=50, plots=False))
    page = out.read_text(encoding="utf-8")
    assert "50.00 (" in page and "§" in page
    assert "§ = not the benchmark&#x27;s standard configuration" in page or (
        "§ = not the benchmark's standard configuration" in page
    )
    assert "option malformed_calls: continue" in page
