"""Runner and results store: records, resume, infrastructure errors, regrading."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.config.suites import Suite, SuiteEntry
from harness.run.runner import Runner
from harness.run.scoring import regrade, score_run
from harness.run.suite_samples import load_suite_samples
from harness.store.records import Record
from harness.store.run_store import RunStore, read_records
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Services
from harness.task.registry import get_adapter, register_adapter
from harness.types import SamplingParams

from toy_adapter import FlakyOracle


@pytest.fixture(autouse=True)
def toy_registered():
    register_adapter("toy", "toy_adapter:ToyAdapter")


def toy_suite(subsets="all"):
    return Suite(name="toy", entries=[SuiteEntry(benchmark="toy", subsets=subsets)])


def write_manifest(store, plan):
    store.write_manifest(
        {
            "run_id": store.root.name,
            "planned": plan.planned_counts(),
            "not_run": [n.__dict__ for n in plan.not_run],
            "model": {"name": "test"},
        }
    )


def run_toy(tmp_path, provider, trials=1, subsets="all"):
    plan = load_suite_samples(toy_suite(subsets))
    store = RunStore(tmp_path / "run")
    write_manifest(store, plan)
    store.open_for_append()
    try:
        runner = Runner(
            store,
            PlainStrategy(),
            provider,
            Services(),
            SamplingParams(),
            concurrency=4,
            load_options=plan.load_options,
        )
        summary = asyncio.run(runner.run(plan.samples, trials))
    finally:
        store.close()
    return plan, store, summary


def oracle(sample):
    return get_adapter("toy").oracle(sample)


def test_plan_lists_subsets_that_cannot_run_instead_of_dropping_them():
    plan = load_suite_samples(toy_suite())
    assert len(plan.samples) == 8
    assert [(n.subset, n.reason) for n in plan.not_run] == [("keyed", "needs TOY_KEY")]


def test_oracle_run_scores_every_sample_and_records_one_line_per_trial(tmp_path):
    plan, store, summary = run_toy(tmp_path, oracle, trials=2)
    assert (summary.ran, summary.ok, summary.infra_errors) == (16, 16, 0)
    records = store.records()
    assert len(records) == 16
    assert all(r["score"]["passed"] for r in records.values())
    assert {r["seed"] for r in records.values()} == {0, 1}
    scores = score_run(store.root).to_dict()
    toy = scores["benchmarks"]["toy"]
    assert toy["headline"]["overall"] == 1.0
    assert toy["not_run"] == ["keyed"] and toy["counts"]["infra_errors"] == 0
    assert scores["regrade"] == {"regraded": 16, "changed": 0, "failed": 0}


def test_failing_samples_are_counted_apart_and_retried_on_resume(tmp_path):
    flaky = {3}  # the easy sample with target 3 always fails
    plan, store, summary = run_toy(tmp_path, lambda s: FlakyOracle(s, flaky), subsets=["easy"])
    assert (summary.ok, summary.infra_errors) == (4, 1)
    failed = [r for r in store.records().values() if r["status"] != "ok"]
    assert [r["sample_id"] for r in failed] == ["easy-2"]
    assert failed[0]["error"]["type"] == "ModelError" and failed[0]["score"] is None
    scores = score_run(store.root).to_dict()
    assert scores["benchmarks"]["toy"]["counts"]["infra_errors"] == 1
    # The infra error counts as not passed in the accuracy, and is shown apart.
    assert scores["benchmarks"]["toy"]["subsets"]["easy"]["n_infra_errors"] == 1
    # Resume: only the failed sample runs again, and now succeeds.
    _, store, summary = run_toy(tmp_path, oracle, subsets=["easy"])
    assert (summary.ran, summary.skipped, summary.ok) == (1, 4, 1)
    assert all(r["status"] == "ok" for r in store.records().values())
    lines = store.samples_path.read_text().splitlines()
    assert len(lines) == 6  # append-only: the failed record stays in the file


def test_a_torn_last_line_is_skipped_and_closed_off(tmp_path):
    _, store, _ = run_toy(tmp_path, oracle, subsets=["easy"])
    with store.samples_path.open("a") as handle:
        handle.write('{"key": "toy/easy/easy-0#0", "status": "o')  # killed mid-write
    loaded = read_records(store.samples_path)
    assert loaded.torn_lines == 1 and len(loaded.latest) == 5
    _, store, summary = run_toy(tmp_path, oracle, subsets=["easy"])
    assert summary.ran == 0
    store.open_for_append()
    store.append(Record(key="extra", benchmark="toy", subset="easy", sample_id="x", trial=0))
    store.close()
    assert "extra" in read_records(store.samples_path).latest


def test_regrade_uses_only_the_stored_trajectory(tmp_path):
    _, store, _ = run_toy(tmp_path, oracle, subsets=["easy"])
    # Tamper with one stored trajectory: regrading must notice.
    lines = store.samples_path.read_text().splitlines()
    first = json.loads(lines[0])
    first["trajectory"]["final_state"] = {"total": -1}
    store.samples_path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    scores = score_run(store.root).to_dict()
    assert scores["regrade"]["changed"] == 1
    assert scores["benchmarks"]["toy"]["headline"]["overall"] == pytest.approx(0.8)


def test_one_writer_per_run_folder(tmp_path):
    from harness.errors import ConfigError

    store = RunStore(tmp_path / "run")
    store.open_for_append()
    try:
        with pytest.raises(ConfigError, match="in use"):
            RunStore(tmp_path / "run").open_for_append()
    finally:
        store.close()


def test_an_episode_gives_its_slot_up_before_it_is_scored(tmp_path, monkeypatch):
    """With one episode at a time, the next episode runs while the one before is
    still being scored; every sample still gets its own scored record, once."""
    from toy_adapter import ToyAdapter

    real_score = ToyAdapter.score
    SCORING_S = 0.02
    episodes_started: list[str] = []
    scored_while_next_ran: list[str] = []

    def provider(sample):
        episodes_started.append(sample.id)
        return oracle(sample)

    async def score_after_the_next_episode_started(self, sample, trajectory, services):
        position = order.index(sample.id)
        if position + 1 < len(order):
            # Wait (bounded) for the next sample's episode: it can start only if
            # this sample gave its episode slot up before scoring.
            for _ in range(200):
                if order[position + 1] in episodes_started:
                    scored_while_next_ran.append(sample.id)
                    break
                await asyncio.sleep(0.01)
        await asyncio.sleep(SCORING_S)  # scoring that takes a measurable time
        return await real_score(self, sample, trajectory, services)

    monkeypatch.setattr(ToyAdapter, "score", score_after_the_next_episode_started)
    plan = load_suite_samples(toy_suite(["easy"]))
    order = [s.id for s in plan.samples]
    store = RunStore(tmp_path / "run")
    write_manifest(store, plan)
    store.open_for_append()
    try:
        runner = Runner(
            store, PlainStrategy(), provider, Services(), SamplingParams(), concurrency=1
        )
        summary = asyncio.run(runner.run(plan.samples, 1))
    finally:
        store.close()
    assert scored_while_next_ran == order[:-1]
    assert (summary.ran, summary.ok) == (5, 5)
    lines = [json.loads(line) for line in store.samples_path.read_text().splitlines()]
    assert sorted(r["sample_id"] for r in lines) == sorted(order)  # each once
    assert all(r["score"]["passed"] and r["status"] == "ok" for r in lines)
    # A record's latency is its episode and its scoring (an oracle episode alone
    # can take less than the 0.1 ms a latency is rounded to).
    assert all(SCORING_S <= r["latency_s"] < 10 for r in lines)


def test_a_failed_scoring_and_a_failed_episode_keep_their_records(tmp_path, monkeypatch):
    """Scoring after the slot is given up records what it recorded before: an
    episode's infrastructure error unscored, a scoring failure as a scoring error."""
    from toy_adapter import ToyAdapter

    real_score = ToyAdapter.score

    async def score_fails_on_easy_1(self, sample, trajectory, services):
        if sample.id == "easy-1":
            raise ValueError("the scorer broke")
        return await real_score(self, sample, trajectory, services)

    monkeypatch.setattr(ToyAdapter, "score", score_fails_on_easy_1)
    _, store, summary = run_toy(tmp_path, lambda s: FlakyOracle(s, {3}), subsets=["easy"])
    assert (summary.ok, summary.infra_errors, summary.score_errors) == (3, 1, 1)
    records = {r["sample_id"]: r for r in store.records().values()}
    assert records["easy-1"]["status"] == "score_error"
    assert records["easy-1"]["error"]["message"] == "the scorer broke"
    assert records["easy-1"]["trajectory"] is not None
    assert records["easy-2"]["status"] == "infra_error" and records["easy-2"]["score"] is None


def test_a_score_is_recorded_as_dataclasses_asdict_records_it_and_as_a_copy():
    import dataclasses

    from harness.types import Score

    @dataclasses.dataclass
    class Found:
        name: str

    def asdict_without_unset_exclusion(score: Score) -> dict:
        # ``excluded`` is written only when a benchmark's rule excludes the trial,
        # ``explanation`` only when there is one.
        data = dataclasses.asdict(score)
        if data["excluded"] is None:
            del data["excluded"]
        if not data["explanation"]:
            del data["explanation"]
        return data

    plain = Score(True, 1.0, progress=0.5, details={"calls": [{"n": [1, 2.0, None, "x"]}]})
    written = plain.to_dict()
    assert written == asdict_without_unset_exclusion(plain)
    assert "excluded" not in written
    written["details"]["calls"][0]["n"].append("changed")
    assert plain.details["calls"][0]["n"] == [1, 2.0, None, "x"]  # the record is a copy
    # Details that are not plain JSON-like data get asdict's own treatment.
    odd = Score(False, 0.0, details={"found": Found("a"), "pair": (1, 2)})
    assert odd.to_dict() == asdict_without_unset_exclusion(odd)
    assert odd.to_dict()["details"]["found"] == {"name": "a"}
    binned = Score(False, 0.0, excluded="infrastructure_error", explanation="why")
    assert binned.to_dict() == dataclasses.asdict(binned)
    assert Score.from_dict(binned.to_dict()) == binned


def test_the_garbage_collector_is_set_for_the_run_and_given_back(tmp_path):
    import gc

    from harness.boundary.collector import RUN_GC_THRESHOLD

    seen_during_run = []

    def provider(sample):
        seen_during_run.append((gc.get_freeze_count(), gc.get_threshold()[0]))
        return oracle(sample)

    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    _, _, summary = run_toy(tmp_path, provider, subsets=["easy"])
    assert summary.ok == 5
    # The objects alive at the start are left out of collections meanwhile, and
    # young ones are collected less often.
    assert all(frozen > 0 and young >= RUN_GC_THRESHOLD for frozen, young in seen_during_run)
    # Collected as before afterwards.
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_a_regrade_explains_old_failures_without_counting_them_changed(tmp_path):
    _, store, _ = run_toy(
        tmp_path, lambda sample: FlakyOracle(sample, set(), 0.0), subsets=["easy"]
    )
    lines = [json.loads(line) for line in store.samples_path.read_text().splitlines()]
    for record in lines:  # failed, as a version without explanations wrote it
        record["trajectory"]["final_state"] = {"total": 0}
        record["score"] = {**record["score"], "passed": False, "reward": 0.0}
        record["score"]["details"] = {"total": 0}
    store.samples_path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    scores = score_run(store.root).to_dict()
    assert scores["regrade"] == {"regraded": 5, "changed": 0, "failed": 0}
    records = [Record.from_dict(line) for line in lines]
    stats = asyncio.run(regrade(records, Services()))
    assert (stats.regraded, stats.changed) == (5, 0)
    assert records[0].score["explanation"] == "the counter reached 0, the target is 1"


def test_loaded_samples_carry_their_adapter(toy_suite):
    """A run asks the registry once per benchmark; every stage then asks the sample."""
    import dataclasses

    from harness.config.suites import load_suite
    from harness.task.registry import adapter_of, get_adapter

    plan = load_suite_samples(load_suite(str(toy_suite)))
    toy = get_adapter("toy")
    assert plan.samples and all(sample.adapter is toy for sample in plan.samples)
    assert plan.adapters == {"toy": toy}
    carried = object()
    sample = dataclasses.replace(plan.samples[0], adapter=carried)
    assert adapter_of(sample) is carried  # the carried one, not the registry's
    assert adapter_of(dataclasses.replace(sample, adapter=None)) is toy  # built by hand
