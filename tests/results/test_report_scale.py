"""A 10,000-sample report of real τ² trajectories stays small, builds in bounded time and
opens in headless Chromium within seconds.

The records come from a real ``harness run`` of the oracle on τ² (every domain), then
are replicated to 10,000 samples with distinct ids and distinct message texts
(tests/fake_runs.py), so that sharing cannot fold the copies into one.
"""

from __future__ import annotations

import contextlib
import io
import re
import time

import pytest
from fake_runs import replicate_run
from headless_browser import dump_dom

from harness.cli import main
from harness.report.html import PAGE_SIZE, ReportOptions, build_report
from harness.report.samples import read_index, read_samples

pytestmark = pytest.mark.slow

SAMPLES = 10_000
MAX_BYTES_PER_SAMPLE = 4_096  # the target for a τ² run
MAX_BUILD_SECONDS = 240.0  # a loaded 2-core machine; well under a minute when idle
MAX_OPEN_SECONDS = 5.0  # the page's own clock: list shown and first sample drawn


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tau2") / "oracle"
    argv = ["run", "--suite", "tau2", "--model", "oracle", "--user-model", "scripted"]
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors):
        code = main([*argv, "--limit", "2", "--trials", "2", "--out", str(out), "--quiet"])
    assert code == 0, errors.getvalue()[-3000:]
    return out


def test_ten_thousand_real_trajectories(oracle_run, tmp_path):
    run = replicate_run(oracle_run, tmp_path / "big", SAMPLES)
    records_bytes = (run / "samples.jsonl").stat().st_size
    assert records_bytes > SAMPLES * 2_000  # full trajectories, not toy records

    start = time.monotonic()
    summary = build_report([run], tmp_path / "big.html", ReportOptions(n_boot=200))
    elapsed = time.monotonic() - start
    page = (tmp_path / "big.html").read_text(encoding="utf-8")

    assert summary.samples == SAMPLES
    assert elapsed < MAX_BUILD_SECONDS, f"took {elapsed:.1f}s"
    per_sample = summary.size_bytes / SAMPLES
    assert per_sample <= MAX_BYTES_PER_SAMPLE, f"{per_sample:.0f} bytes a sample"
    # The data is all there: the index names every sample, and a sample reads back whole.
    index = read_index(page)
    assert index["page_size"] == PAGE_SIZE and len(index["rows"]) == SAMPLES
    assert len({row[7] for row in index["rows"]}) == SAMPLES
    last = read_samples(page)[-1]
    assert last["trajectory"]["messages"][0]["content"].endswith(")")
    assert re.search(r"\(copy \d+\)$", last["trajectory"]["messages"][0]["content"])

    # The browser shows the first page of the list and opens the first sample.
    dom = dump_dom(tmp_path, (tmp_path / "big.html").as_uri())
    assert f"{SAMPLES} of {SAMPLES} samples" in dom and "page 1 of 200" in dom
    assert dom.count('<button class="') >= PAGE_SIZE
    ready = re.search(r'data-ready="(\d+)"', dom)
    assert ready, "the viewer never finished opening"
    assert int(ready.group(1)) / 1000 < MAX_OPEN_SECONDS, f"opened after {ready.group(1)} ms"
    first = index["rows"][0][7]
    assert f'data-opened="{first}"' in dom
    assert "transcript (" in dom[dom.index('id="detail"') :]
