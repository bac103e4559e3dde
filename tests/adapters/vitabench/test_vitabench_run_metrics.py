"""VitaBench metrics (avg@k, pass@k, pass^k, Avg) and the judge-free order diagnostic."""

from __future__ import annotations

import pytest

from harness.adapters.vitabench.data import VitaTask
from harness.adapters.vitabench.metrics import (
    aggregate_records,
    changed_records,
    orders_diagnostic,
    pass_at_k,
    pass_hat_k,
    task_set_metrics,
)
from harness.task.contract import RecordView
from harness.types import Score


def test_worked_example_of_the_specification():
    rewards = {
        "a": [1.0, 1.0, 1.0, 1.0],
        "b": [1.0, 0.0, 0.0, 1.0],
        "c": [0.0, 0.0, 0.0, 0.0],
    }
    metrics = task_set_metrics(rewards, num_trials=4)
    expected_hat = [0.5, 0.3889, 0.3333, 0.3333]
    expected_at = [0.5, 0.6111, 0.6667, 0.6667]
    for k in range(1, 5):
        assert metrics[f"pass^{k}"] == pytest.approx(expected_hat[k - 1], abs=1e-4)
        assert metrics[f"pass@{k}"] == pytest.approx(expected_at[k - 1], abs=1e-4)
        assert metrics[f"avg@{k}"] == pytest.approx(0.5)
    assert metrics["avg_reward"] == pytest.approx(0.5)


def test_success_means_reward_exactly_one_and_uneven_trials():
    assert pass_at_k(4, 1, 4) == 1.0 and pass_at_k(4, 0, 1) == 0.0
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    # the second task has only 1 trial: pass^k stops at k = 1, pass@2 uses task a only
    metrics = task_set_metrics({"a": [1.0, 0.5], "b": [1.0]}, num_trials=2)
    assert metrics["pass^1"] == pytest.approx((0.5 + 1.0) / 2)
    assert "pass^2" not in metrics
    assert metrics["pass@2"] == pytest.approx(1.0)
    assert metrics["avg@1"] == pytest.approx((0.75 + 1.0) / 2)
    assert metrics["avg@2"] == pytest.approx(0.75)


def record(task, scenario, trial, reward, status="ok", match=None, language="en"):
    score = None
    if status == "ok":
        details = {} if match is None else {"orders_match": {"match": match}}
        score = Score(passed=reward == 1.0, reward=reward, progress=reward, details=details)
    return RecordView(
        sample_id=task,
        subset=scenario,
        trial=trial,
        status=status,
        score=score,
        metadata={"scenario": scenario, "language": language},
    )


def test_aggregate_counts_failed_trials_as_zero_and_reports_avg():
    records = [
        record("d1", "delivery", 0, 1.0, match=True),
        record("d1", "delivery", 1, 0.0, status="infra_error"),
        record("d2", "delivery", 0, 0.0, match=False),
        record("d2", "delivery", 1, 1.0, match=True),
        record("i1", "instore", 0, 1.0),
        record("i1", "instore", 1, 1.0),
    ]
    result = aggregate_records("vitabench", records)
    delivery = result.subsets["delivery"]
    assert delivery.n_samples == 2 and delivery.n_records == 4 and delivery.n_infra_errors == 1
    assert delivery.metrics["avg@2"] == pytest.approx(0.5)
    assert delivery.metrics["pass@2"] == pytest.approx(1.0)
    assert delivery.metrics["pass^2"] == pytest.approx(0.0)
    assert delivery.metrics["diagnostic/orders_match"] == pytest.approx(2 / 3)
    assert result.headline["delivery/avg@2"] == pytest.approx(0.5)
    assert result.headline["instore/pass^2"] == pytest.approx(1.0)
    assert result.headline["Avg"] == pytest.approx((0.5 + 1.0) / 2)
    assert any("Avg" in note for note in result.notes)


def test_aggregate_separates_languages_when_both_are_present():
    records = [
        record("t", "delivery", 0, 1.0, language="en"),
        record("t", "delivery", 0, 0.0, language="zh"),
    ]
    result = aggregate_records("vitabench", records)
    assert set(result.subsets) == {"delivery-en", "delivery-zh"}


def make_task(required, initial_orders=None) -> VitaTask:
    return VitaTask(
        record={
            "id": "T",
            "environment": {"time": "2025-01-01 10:00:00", "orders": initial_orders or {}},
            "evaluation_criteria": {
                "expected_states": [
                    {"required_orders": required, "state_rubrics": ["x"]},
                    {"required_orders": required, "state_rubrics": ["y"]},
                ]
            },
        },
        scenario="delivery",
        language="en",
    )


def order(oid, store, products, status="unpaid", order_type="delivery"):
    return {
        "order_id": oid,
        "order_type": order_type,
        "store_id": store,
        "status": status,
        "products": [{"product_id": p, "quantity": q, "price": 1.0} for p, q in products],
    }


def test_diagnostic_matches_store_products_quantities_and_type():
    required = [order("T01", "S1", [("P1", 2), ("P2", 1)], status="processed")]
    task = make_task(required)
    assert len(task.required_orders) == 1  # identical expected states are merged
    placed = {"orders": {"OTabc": order("OTabc", "S1", [("P2", 1), ("P1", 2.0)], status="paid")}}
    diagnostic = orders_diagnostic(placed, task)
    assert diagnostic["match"] is True and "not the official score" in diagnostic["label"]
    wrong_qty = {"orders": {"OTabc": order("OTabc", "S1", [("P1", 1), ("P2", 1)])}}
    diagnostic = orders_diagnostic(wrong_qty, task)
    assert diagnostic["match"] is False and diagnostic["missing"] and diagnostic["unexpected"]
    extra = {"orders": {**placed["orders"], "OTdef": order("OTdef", "S9", [("P9", 1)])}}
    assert orders_diagnostic(extra, task)["match"] is False
    assert orders_diagnostic({"orders": {}}, task)["match"] is False
    assert orders_diagnostic(None, task)["match"] is False


def test_diagnostic_checks_reachable_status_changes_of_existing_orders():
    existing = order("10716001O01", "S1", [("P1", 1)], status="paid")
    required = [dict(existing, status="cancelled")]
    task = make_task(required, initial_orders={"10716001O01": existing})
    kept = {"orders": {"10716001O01": existing}}
    assert orders_diagnostic(kept, task)["status_mismatches"] == [
        {"id": "10716001O01", "required": "cancelled", "actual": "paid"}
    ]
    cancelled = {"orders": {"10716001O01": dict(existing, status="cancelled")}}
    assert orders_diagnostic(cancelled, task)["match"] is True
    assert changed_records(cancelled, task.initial_records) == ["10716001O01"]
    assert changed_records(kept, task.initial_records) == []


def test_diagnostic_handles_bookings_and_reservations_as_lists():
    reservation = {
        "reservation_id": "R1",
        "shop_id": "SH1",
        "reservation_time": "2025-11-07 17:30:00",
        "customer_count": 1,
        "status": "paid",
    }
    task = make_task([reservation])
    state = {
        "orders": [],
        "reservations": [dict(reservation, reservation_id="OI1", status="unconsumed")],
    }
    assert orders_diagnostic(state, task)["match"] is True
    moved = {
        "reservations": [
            dict(reservation, reservation_id="OI1", reservation_time="2025-11-07 10:00:00")
        ]
    }
    assert orders_diagnostic(moved, task)["match"] is False
