"""A failing sample of each benchmark explains itself in the report, from its run folder
alone: the user's question, the tool names, the gold, the model's calls and the plain
explanation of the failure (checked in headless Chromium)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from urllib.parse import quote

import pytest
from headless_browser import keep_artifact, probe_result, run_chromium, run_probe

from harness.config.suites import Suite, SuiteEntry
from harness.models.base import ScriptedClient
from harness.report.detail import INPUT_NOT_KEPT, sample_detail, without_zeros
from harness.report.html import ReportOptions, build_report
from harness.report.sample_list import natural_key
from harness.report.samples import read_samples
from harness.run.runner import Runner
from harness.run.scoring import score_run
from harness.run.suite_samples import load_suite_samples
from harness.store.inputs import INPUTS
from harness.store.records import Record
from harness.store.run_store import RunStore
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.task.registry import get_adapter
from harness.types import AssistantTurn, SamplingParams, ToolCall
from harness.view.server import ViewerApp, make_server


def calls(*pairs: tuple[str, dict]) -> AssistantTurn:
    return AssistantTurn(
        tool_calls=[
            ToolCall(f"c{n}", name, arguments, json.dumps(arguments))
            for n, (name, arguments) in enumerate(pairs)
        ]
    )


def run_folder(root: Path, entry: SuiteEntry, model, data_dir: Path | None = None) -> Path:
    """One run of ``entry`` with ``model`` (offline user and judge), scored."""
    plan = load_suite_samples(Suite(name=entry.benchmark, entries=[entry]), data_dir=data_dir)
    assert plan.samples, plan.not_run
    adapter = get_adapter(entry.benchmark)
    services = Services(
        user_client=adapter.builtin_client("user", "scripted"),
        user_model="scripted" if adapter.needs_user_model else None,
        judge_client=adapter.builtin_client("judge", "stub"),
        judge_model="stub" if adapter.needs_judge_model else None,
    )
    store = RunStore(root)
    store.write_manifest(
        {"run_id": root.name, "planned": plan.planned_counts(), "model": {"name": "scripted"}}
    )
    store.open_for_append()
    try:
        runner = Runner(
            store,
            PlainStrategy(),
            lambda sample: model(),
            services,
            SamplingParams(),
            load_options=plan.load_options,
        )
        asyncio.run(runner.run(plan.samples, 1))
    finally:
        store.close()
    score_run(root, services, rescore=False)
    return root


# The sample each run fails, and what its page must show.
CASES = {
    "bfcl": {
        "key": "bfcl/parallel/parallel_0#0",
        "question": "Play songs from the artists Taylor Swift and Maroon 5",
        "tools": ["spotify_play"],
        "gold": "spotify_play(artist=Maroon 5, duration=15)",
        "call": "→ spotify_play(",
        "explanation": "expected 2 call(s), got 1: `spotify_play` missing",
    },
    "tau2": {
        "key": "tau2/retail/0#0",
        "question": "exchange the mechanical keyboard",  # the user's scenario (gold)
        "tools": ["find_user_id_by_name_zip", "get_order_details"],
        "gold": "exchange_delivered_order_items(order_id=#W2378156",
        "call": "→ get_order_details(",
        "explanation": "gold action not made as expected: find_user_id_by_name_zip(",
    },
    "finmcp": {
        "key": "finmcp/multi_turn/603#0",
        "question": "",  # filled from the data below
        "tools": ["BatchGetFundsDetail"],
        "gold": "BatchGetFundsDetail(",
        "call": "→ MadeUpTool(",
        "explanation": "calls not in the gold: `MadeUpTool`",
    },
    "vitabench": {
        "key": "",  # the first delivery task
        "question": "",
        "tools": ["weather"],
        "gold": "rubric",
        "call": "→ weather(",
        "explanation": "the judge found 0 of",
    },
}


@pytest.fixture(scope="module")
def failing_runs(tmp_path_factory, shared_data):
    root = tmp_path_factory.mktemp("sample-page")
    bfcl = run_folder(
        root / "bfcl-run",
        SuiteEntry("bfcl", ["parallel"], ids=["parallel_0"]),
        lambda: ScriptedClient(
            [calls(("spotify_play", {"artist": "Taylor Swift", "duration": 20}))]
        ),
    )
    tau2 = run_folder(
        root / "tau2-run",
        SuiteEntry("tau2", ["retail"], ids=["0"]),
        lambda: ScriptedClient([calls(("get_order_details", {"order_id": "#W0000000"}))]),
    )
    finmcp = run_folder(
        root / "finmcp-run",
        SuiteEntry("finmcp", ["multi_turn"], ids=["603"]),
        lambda: ScriptedClient([calls(("MadeUpTool", {"q": 1}))]),
        data_dir=shared_data,
    )
    vita = run_folder(
        root / "vita-run",
        SuiteEntry("vitabench", ["delivery"], limit=1, options={"language": "en"}),
        lambda: ScriptedClient([calls(("weather", {}))]),
        data_dir=shared_data,
    )
    return root, [bfcl, tau2, finmcp, vita]


def detail_probe(key: str) -> str:
    """Opens nothing itself: waits for the linked sample and reads its page's parts."""
    return r"""
(function () {
  var body = document.body;
  function text(selector) {
    return Array.prototype.map.call(document.querySelectorAll("#detail " + selector),
      function (n) { return n.textContent; });
  }
  function done() {
    var out = document.createElement("pre");
    out.id = "probe-result";
    out.textContent = JSON.stringify({
      opened: body.getAttribute("data-opened"),
      title: text("h3"),
      input: text("details.input"),
      tools: text("details.tools details.tool > summary"),
      gold: text("details.gold"),
      calls: text("details.transcript pre.call"),
      explanation: text("div.explanation"),
      summary: text("table.kv")
    });
    body.appendChild(out);
  }
  var observer = new MutationObserver(function () {
    if (body.getAttribute("data-opened") === KEY) { observer.disconnect(); done(); }
  });
  observer.observe(body, {attributes: true});
})();
""".replace("KEY", json.dumps(key))


def fill_cases(shared_data: Path) -> None:
    """The parts of CASES read from the data: FinMCP's first user turn, VitaBench's sample."""
    finmcp = get_adapter("finmcp").load("multi_turn", ids=["603"], data_dir=shared_data / "finmcp")
    vita = get_adapter("vitabench").load(
        "delivery", limit=1, data_dir=shared_data / "vitabench", options={"language": "en"}
    )[0]
    CASES["finmcp"]["question"] = finmcp[0].gold[0]["content"][:40].strip()
    CASES["vitabench"]["key"] = f"vitabench/delivery/{vita.id}#0"
    CASES["vitabench"]["question"] = vita.gold.instructions[:40].strip()


def check_sample_page(name: str, case: dict, seen: dict) -> None:
    """The opened sample shows its question, tools, gold, the model's call and why it failed."""
    assert seen["opened"] == case["key"], name
    shown = " ".join(seen["input"] + seen["gold"])
    assert case["question"] and case["question"] in shown, (name, shown[:500])
    assert set(case["tools"]) <= set(seen["tools"]), (name, seen["tools"][:10])
    assert any(case["gold"] in g for g in seen["gold"]), (name, seen["gold"])
    assert any(c.startswith(case["call"]) for c in seen["calls"]), (name, seen["calls"])
    assert case["explanation"] in " ".join(seen["explanation"]), (name, seen["explanation"])


def test_a_failing_sample_of_each_benchmark_explains_itself_in_chromium(failing_runs, shared_data):
    root, runs = failing_runs
    out = root / "report.html"
    build_report(runs, out, ReportOptions(n_boot=50, plots=False))
    fill_cases(shared_data)
    for (name, case), run in zip(CASES.items(), runs, strict=True):
        fragment = "#sample=" + quote(f"{run.name}/{case['key']}", safe="")
        check_sample_page(name, case, run_probe(root, out, detail_probe(case["key"]), fragment))
    # The BFCL summary counts the call the transcript shows (recorded, not run).
    bfcl = run_probe(
        root,
        out,
        detail_probe(CASES["bfcl"]["key"]),
        "#sample=" + quote(f"bfcl-run/{CASES['bfcl']['key']}", safe=""),
    )
    assert "tool calls1 (0 run)" in bfcl["summary"][0]
    shot = root / "sample-page.png"
    url = out.as_uri() + "#sample=" + quote(f"bfcl-run/{CASES['bfcl']['key']}", safe="")
    run_chromium(root, f"--screenshot={shot}", "--window-size=1400,2400", url)
    keep_artifact(shot)


def test_the_report_keeps_each_input_once_and_reads_old_run_folders(failing_runs, tmp_path):
    root, runs = failing_runs
    tau2 = runs[1]
    page = tmp_path / "r.html"
    build_report([tau2], page, ReportOptions(n_boot=50, plots=False))
    (detail,) = read_samples(page.read_text(encoding="utf-8"))
    assert detail["input"]["messages"][0]["role"] == "system"  # the policy
    assert detail["input_note"] == ""
    # No all-zero usage or cost blocks.
    assert "costs" not in detail["trajectory"]["extra"]
    # A run folder from before inputs were kept: still reported, its input marked.
    (tau2 / INPUTS).rename(tmp_path / "kept.jsonl")
    try:
        build_report([tau2], page, ReportOptions(n_boot=50, plots=False))
    finally:
        (tmp_path / "kept.jsonl").rename(tau2 / INPUTS)
    (old,) = read_samples(page.read_text(encoding="utf-8"))
    assert old["input"] is None and old["input_note"] == INPUT_NOT_KEPT
    assert old["explanation"] == detail["explanation"] != ""


def test_sample_ids_sort_by_their_numbers():
    ids = ["simple_10", "simple_2", "simple_1", "simple_0", "a", "simple_2b"]
    assert sorted(ids, key=natural_key) == [
        "a",
        "simple_0",
        "simple_1",
        "simple_2",
        "simple_2b",
        "simple_10",
    ]


def test_usage_and_costs_are_shown_only_where_not_zero():
    zero = {"calls": 0, "prompt_tokens": 0}
    assert without_zeros({"actor": {"calls": 2, "prompt_tokens": 0}, "user": zero}) == {
        "actor": {"calls": 2}
    }
    assert without_zeros({"user": zero}) is None
    record = Record(
        key="b/s/1#0",
        benchmark="b",
        subset="s",
        sample_id="1",
        trial=0,
        score={"passed": False, "reward": 0.0, "details": {"error_type": "x:y"}},
        trajectory={
            "messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]}],
            "tool_calls": 0,
            "usage": {"actor": zero},
            "extra": {"costs": {"total": {"actor": zero}}},
        },
    )
    detail = sample_detail(record, None)
    assert detail["trajectory"]["usage"] is None
    assert "costs" not in detail["trajectory"]["extra"]
    assert detail["counts"]["tool calls made"] == 1 and detail["error_code"] == "x:y"


class ViewerWithProbe(ViewerApp):
    """`harness view`'s app with a probe script in its page (allowed by its nonce)."""

    def __init__(self, folders: list[Path], probe: str):
        super().__init__(folders)
        self.probe = probe

    def page(self, nonce: str) -> str:
        script = f'<script nonce="{nonce}">{self.probe}</script>'
        return super().page(nonce).replace("</body>", script + "</body>")


def test_harness_view_shows_the_same_sample_page(failing_runs, shared_data):
    root, runs = failing_runs
    fill_cases(shared_data)
    for (name, case), run in zip(CASES.items(), runs, strict=True):
        server = make_server(ViewerWithProbe(runs, detail_probe(case["key"])), 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        fragment = "#sample=" + quote(f"{run.name}/{case['key']}", safe="")
        try:
            seen = probe_result(root, f"http://127.0.0.1:{server.server_port}/{fragment}")
        finally:
            server.shutdown()
            server.server_close()
        check_sample_page(name, case, seen)
