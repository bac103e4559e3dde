"""A 10,000-sample report builds quickly, stays a reasonable size and pages its list."""

from __future__ import annotations

import time

import pytest
from fake_runs import make_run, record
from headless_browser import dump_dom

from harness.report import PAGE_SIZE, ReportOptions, build_report
from harness.report_data import read_index

SAMPLES = 10_000
MAX_SECONDS = 45.0  # a loaded 2-core machine; it takes a few seconds when idle
MAX_BYTES = 25_000_000


@pytest.mark.slow
def test_ten_thousand_samples(tmp_path):
    domains = ("airline", "retail", "telecom", "mock")
    records = []
    for i in range(SAMPLES):
        messages = [
            {"role": "user", "content": f"Please change reservation {i:05d} to a later flight."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "get_reservation", "arguments": f'{{"id": "{i}"}}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": '{"status": "confirmed"}'},
            {"role": "assistant", "content": "Your reservation has been moved."},
        ]
        records.append(
            record("tau2", domains[i % 4], f"task{i:05d}", passed=i % 3 == 0, messages=messages)
        )
    pass_rate = sum(1 for i in range(SAMPLES) if i % 3 == 0) / SAMPLES
    per_domain = {
        d: sum(1 for i in range(k, SAMPLES, 4) if i % 3 == 0) / 2500 for k, d in enumerate(domains)
    }
    run = make_run(
        tmp_path,
        "big",
        records,
        {"tau2": {**per_domain, "tau2_mean": sum(per_domain.values()) / 4}},
    )
    assert abs(sum(per_domain.values()) / 4 - pass_rate) < 0.01

    start = time.monotonic()
    summary = build_report([run], tmp_path / "big.html", ReportOptions(n_boot=1000))
    elapsed = time.monotonic() - start
    page = (tmp_path / "big.html").read_text(encoding="utf-8")

    assert summary.samples == SAMPLES
    assert elapsed < MAX_SECONDS, f"took {elapsed:.1f}s"
    assert summary.size_bytes < MAX_BYTES, f"{summary.size_bytes} bytes"
    # The samples are in compressed chunks, inflated when one of theirs is opened.
    index = read_index(page)
    assert index["page_size"] == PAGE_SIZE and len(index["rows"]) == SAMPLES
    assert page.count('<script type="text/x-deflate-base64" id="c') == len(index["chunks"]) > 1
    assert index["rows"][-1][7] == "tau2/retail/task09999#0"
    # The browser shows the first page of the list and opens the first sample.
    dom = dump_dom(tmp_path, (tmp_path / "big.html").as_uri())
    assert "10000 of 10000 samples" in dom and "page 1 of 200" in dom
    assert dom.count('<button class="') >= PAGE_SIZE
    assert "Your reservation has been moved." in dom[dom.index('id="detail"') :]
