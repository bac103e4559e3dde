"""The HTML report: model output is shown as text and never runs, checked in headless Chromium
(see tests/headless_browser.py for how Chromium is found and where artifacts go)."""

from __future__ import annotations

import html
import json
import re
from urllib.parse import quote

import pytest
from fake_runs import make_run, pass_fail_records, record
from headless_browser import dump_dom, keep_artifact, run_chromium

from harness.cli import main
from harness.report import ReportOptions, build_report, json_for_script

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


def test_json_for_script_leaves_no_markup_characters():
    value = {"a": "</script><!-- & \u2028 \u2029 >", "<key>": ["&amp;"]}
    text = json_for_script(value)
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == value


def test_model_output_is_escaped_in_the_html_text(evil_run, tmp_path):
    out = tmp_path / "report.html"
    summary = build_report([evil_run], out, ReportOptions(n_boot=100))
    page = out.read_text(encoding="utf-8")
    assert summary.samples == 3
    for attack in (SCRIPT_ATTACK, IMG_ATTACK, HTML_ATTACK, SVG_ATTACK, "<iframe", "<img src=y"):
        assert attack not in page
    # Exactly our own script runs: the others are JSON blocks (index + one per sample).
    assert page.count("<script") == 1 + 1 + 3
    assert page.count('<script type="application/json"') == 4
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert html.unescape(policy).startswith("default-src 'none'; img-src data:;")
    # The model name from the manifest is escaped in the leaderboard.
    assert "&lt;img src=y onerror=" in page


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
    # Score details are shown as JSON, so their quotes are backslash-escaped.
    assert '"judge_note": "&lt;iframe src=\\"javascript:alert(1)\\"&gt;' in detail
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
    page = out.read_text(encoding="utf-8")
    assert "x" * 1000 + " … [truncated: 49000 more characters]" in page
    assert "x" * 1001 not in page


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
    assert "tau2/airline/t1, tau2/airline/t2" in page  # B passed, A failed
    assert page.count('src="data:image/png;base64,') >= 2  # bars and cost at least
    assert "ref:envace" in page and "EnvACE-8B" in page
    assert "http://" not in page and "https://" not in page  # nothing to fetch
    assert "wrote" in capsys.readouterr().err


def test_credentials_echoed_in_records_are_masked(tmp_path, monkeypatch):
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
    assert "sk-live0123456789abcdef" not in page and "envsecret-0123456789" not in page
    assert "auth failed for ***" in page and "the key is ***" in page
