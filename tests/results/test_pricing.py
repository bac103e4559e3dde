"""Cost in money: USD from litellm's cost map, GPU-seconds of served checkpoints, the
rehearsal ratio, and "-" with its reason (never 0) where a price cannot be known."""

from __future__ import annotations

import csv
import io
import json
from importlib.metadata import version

import pytest
from fake_runs import make_run, record

from harness.report.leaderboard import load_run, render
from harness.results import pricing
from harness.store.manifest import Manifest
from harness.store.scores import ScoresFile

API_MODEL = "openai/gpt-4.1"


def _usage(prompt: int = 1000, completion: int = 100, calls: int = 2) -> dict:
    return {"actor": {"calls": calls, "prompt_tokens": prompt, "completion_tokens": completion}}


def _records(n: int = 3, usage: dict | None = None, extra: dict | None = None) -> list[dict]:
    return [
        record("tau2", "airline", str(i), usage=usage or _usage(), extra=extra) for i in range(n)
    ]


def _summary_row(text: str, run: str) -> dict[str, str]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip(" |").split("|")]
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip(" |").split("|")]
        if cells[0] == run:
            return dict(zip(header, cells, strict=True))
    raise AssertionError(run)


def test_api_model_is_priced_from_litellms_cost_map(tmp_path):
    run = make_run(tmp_path, "api", _records(), {"tau2": {"tau2_mean": 1.0}}, model=API_MODEL)
    money = load_run(run, n_boot=10).cost.money
    info = _litellm_info(API_MODEL)
    expected = 3 * (1000 * info["input_cost_per_token"] + 100 * info["output_cost_per_token"])
    assert expected > 0 and money.usd == pytest.approx(expected)
    assert money.usd_by_role == {"actor": pytest.approx(expected)}
    assert money.price_source == f"litellm {version('litellm')} cost map"
    text = render([run], "md", n_boot=10)
    row = _summary_row(text, "api")
    assert row["cost (USD)"] == f"{expected:.4f}" if expected < 0.01 else f"{expected:,.2f}"
    assert f"litellm {version('litellm')} cost map" in text


def test_an_unknown_price_is_a_dash_with_its_reason_once_never_zero(tmp_path):
    runs = [
        make_run(tmp_path, name, _records(), {"tau2": {"tau2_mean": 1.0}}, model="my-own-model")
        for name in ("a", "b")
    ]
    money = load_run(runs[0], n_boot=10).cost.money
    assert money.usd is None
    assert money.usd_note == "actor: no price for my-own-model in the litellm cost map"
    text = render(runs, "md", n_boot=10)
    assert _summary_row(text, "a")["cost (USD)"] == "-"
    reason = 'cost (USD) "-": actor: no price for my-own-model in the litellm cost map (a, b)'
    assert text.count(reason) == 1
    rows = list(csv.DictReader(io.StringIO(render(runs, "csv", n_boot=10))))
    cost = next(r for r in rows if r["run"] == "a" and r["metric"] == "cost_usd")
    assert cost["value"] == "" and cost["unit"] == "USD" and "no price" in cost["note"]


def test_an_api_model_that_reported_no_tokens_is_not_priced_at_zero(tmp_path):
    records = _records(usage=_usage(prompt=0, completion=0))
    run = make_run(tmp_path, "a", records, {"tau2": {"tau2_mean": 1.0}}, model=API_MODEL)
    money = load_run(run, n_boot=10).cost.money
    assert money.usd is None and "reported no tokens" in money.usd_note


def test_built_in_models_call_no_api(tmp_path):
    run = make_run(tmp_path, "o", _records(), {"tau2": {"tau2_mean": 1.0}}, model="oracle")
    money = load_run(run, n_boot=10).cost.money
    assert money.usd is None and money.usd_note == "no API-priced calls"
    assert money.gpu_seconds is None and money.gpu_note == "no served checkpoint"


def test_served_checkpoint_in_gpu_seconds_and_api_user_in_usd(tmp_path):
    usage = {**_usage(), "user": {"calls": 1, "prompt_tokens": 500, "completion_tokens": 50}}
    server = {"kind": "vllm", "tensor_parallel_size": 2, "data_parallel_size": 1}
    spans = [
        {"kind": "vllm", "seconds": 100.0, "gpus": 2},
        {"kind": "vllm", "seconds": 20.5, "gpus": 2},
    ]
    run = make_run(
        tmp_path,
        "served",
        _records(usage=usage),
        {"tau2": {"tau2_mean": 1.0}},
        model="openai/step_200",
        user_model="gpt-4.1-2025-04-14",
        manifest_extra={"server": server, "server_spans": spans},
    )
    money = load_run(run, n_boot=10).cost.money
    assert money.gpu_seconds == pytest.approx(2 * 120.5) and money.server_seconds == 120.5
    prices = pricing.token_prices("gpt-4.1-2025-04-14")
    assert money.usd == pytest.approx(3 * (500 * prices[0] + 50 * prices[1]))
    assert "actor (openai/step_200, served: in GPU-s)" in money.usd_note
    row = _summary_row(render([run], "md", n_boot=10), "served")
    assert row["GPU-s"] == "241"


def test_cpu_only_server_says_so(tmp_path):
    run = make_run(
        tmp_path,
        "cpu",
        _records(),
        {"tau2": {"tau2_mean": 1.0}},
        model="openai/model.gguf",
        manifest_extra={
            "server": {"kind": "llamacpp"},
            "server_spans": [{"kind": "llamacpp", "seconds": 42.0, "gpus": 0}],
        },
    )
    money = load_run(run, n_boot=10).cost.money
    assert money.cpu_only and money.gpu_seconds is None and money.server_seconds == 42.0
    text = render([run], "md", n_boot=10)
    assert _summary_row(text, "cpu")["GPU-s"] == "CPU-only"
    assert 'GPU-s "CPU-only": CPU-only server (42 s wall time)' in text


def test_an_api_base_server_has_no_known_gpus(tmp_path):
    run = make_run(tmp_path, "ext", _records(), {"tau2": {"tau2_mean": 1.0}}, model="openai/x")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["model"]["api_base"] = "http://10.0.0.5:8000/v1"
    (run / "manifest.json").write_text(json.dumps(manifest))
    money = pricing.run_money(ScoresFile(), Manifest.from_dict(manifest))
    assert money.gpu_seconds is None and "--api-base" in money.gpu_note
    assert money.usd is None  # served: not an API price list


def _phase(actor: tuple[int, int], rehearser: tuple[int, int] = (0, 0)) -> dict:
    def usage(pair: tuple[int, int]) -> dict:
        return {
            "calls": 1 if any(pair) else 0,
            "prompt_tokens": pair[0],
            "completion_tokens": pair[1],
        }

    return {
        "actor": usage(actor),
        "rehearser": usage(rehearser),
        "env_calls": 0,
        "wall_time_s": 1.0,
    }


def _with_costs(run, rehearsal: dict, committed: dict) -> None:
    scores = json.loads((run / "scores.json").read_text())
    scores["costs"] = {"sum": {"rehearsal": rehearsal, "committed": committed}}
    (run / "scores.json").write_text(json.dumps(scores))


def test_rehearsal_ratio_in_usd_when_every_call_is_priced(tmp_path):
    strategy = {"name": "rehearsal-parallel:2", "settings": {"rehearser_model": "gpt-4o-mini"}}
    run = make_run(
        tmp_path, "r", _records(), {"tau2": {"tau2_mean": 1.0}}, model=API_MODEL, strategy=strategy
    )
    _with_costs(run, _phase((2000, 200), (3000, 300)), _phase((1000, 100)))
    money = load_run(run, n_boot=10).cost.money
    actor, mini = pricing.token_prices(API_MODEL), pricing.token_prices("gpt-4o-mini")
    rehearsal = 2000 * actor[0] + 200 * actor[1] + 3000 * mini[0] + 300 * mini[1]
    committed = 1000 * actor[0] + 100 * actor[1]
    assert money.rehearsal_basis == "USD"
    assert money.rehearsal_ratio == pytest.approx(rehearsal / committed)
    row = _summary_row(render([run], "md", n_boot=10), "r")
    assert row["rehearsal cost ×"] == f"{rehearsal / committed:.2f}× USD"


def test_rehearsal_ratio_falls_back_to_tokens_when_a_price_is_unknown(tmp_path):
    strategy = {"name": "rehearsal-parallel:2", "settings": {}}
    run = make_run(
        tmp_path, "r", _records(), {"tau2": {"tau2_mean": 1.0}}, model="my-own", strategy=strategy
    )
    _with_costs(run, _phase((2000, 200), (3000, 300)), _phase((1000, 100)))
    money = load_run(run, n_boot=10).cost.money
    assert money.rehearsal_basis == "tokens"
    assert money.rehearsal_ratio == pytest.approx(5500 / 1100)


def test_no_rehearsal_no_ratio(tmp_path):
    run = make_run(tmp_path, "p", _records(), {"tau2": {"tau2_mean": 1.0}}, model=API_MODEL)
    _with_costs(run, _phase((0, 0)), _phase((1000, 100)))
    money = load_run(run, n_boot=10).cost.money
    assert money.rehearsal_ratio is None and money.rehearsal_note == "no rehearsal"
    text = render([run], "md", n_boot=10)
    assert _summary_row(text, "p")["rehearsal cost ×"] == "-"
    assert 'rehearsal cost × "-": no rehearsal (p)' in text


def test_leaderboard_json_carries_the_money_fields(tmp_path):
    run = make_run(tmp_path, "api", _records(), {"tau2": {"tau2_mean": 1.0}}, model=API_MODEL)
    data = json.loads(render([run], "json", n_boot=10))
    money = data["rows"][0]["cost"]["money"]
    assert money["usd"] > 0 and money["price_source"].startswith("litellm ")
    assert set(money) == set(pricing.MoneyCost().to_dict())


def _litellm_info(model: str) -> dict:
    import litellm

    return litellm.get_model_info(model)


@pytest.mark.parametrize("model", ["gpt-4.1-2025-04-14", "gpt-4o-mini", "openai/gpt-4o"])
def test_prices_read_from_the_map_file_are_litellms_own(model):
    info = _litellm_info(model)
    assert pricing.token_prices(model) == (
        info["input_cost_per_token"],
        info["output_cost_per_token"],
    )


def test_pricing_a_run_does_not_import_litellm():
    import subprocess
    import sys

    probe = (
        "import sys; from harness.results import pricing; "
        "assert pricing.token_prices('gpt-4.1-2025-04-14'); "
        "print('litellm' in sys.modules)"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "False"
