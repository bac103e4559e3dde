"""Plans for the required orders of the released delivery and in-store tasks.

Each reachable plan is replayed on a fresh environment of its task; the records it
creates must be exactly the task's new required records (type, store/shop, products
x quantity; bookings and reservations by shop, time and head count), and records
that existed before must end in their required status when a tool can set it.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from support import SHARED_PLACEHOLDER, shared_available, shared_location

from harness.adapters.vitabench.environment import VitaEnvironment
from harness.adapters.vitabench.orders import (
    plan_required_orders,
    record_id,
    record_kind,
    required_records,
)

# Read at collection time (the parametrisation); without it, one placeholder case
# that the ``shared_data`` fixture skips.
SHARED = shared_location("data") / "vitabench"
TASK_FILES = {
    "delivery-zh": ("delivery/tasks.json", "delivery", "zh"),
    "delivery-en": ("delivery/tasks_en.json", "delivery", "en"),
    "instore-en": ("instore/tasks_en.json", "instore", "en"),
}
# How many tasks of each file the tools can bring to their required orders. The
# others need an in-store order of two products (one product per order is all the
# tool places), a dish, product or shop missing from the task's own database, a
# booking at a shop without table booking, a booking/reservation without a valid
# time, or have a malformed product line.
EXPECTED_REACHABLE = {"delivery-zh": 97, "delivery-en": 97, "instore-en": 79}
TOOL_SETTABLE_STATUSES = ("cancelled", "paid")


@cache
def _tasks(task_file: str) -> list[dict]:
    return json.loads((SHARED / task_file).read_text(encoding="utf-8"))


def _task_ids() -> list:
    if not shared_available("data"):
        return [pytest.param("", "", id=SHARED_PLACEHOLDER)]
    return [(key, t["id"]) for key, (f, _, _) in TASK_FILES.items() for t in _tasks(f)]


def _signature(record: dict) -> tuple:
    kind = record_kind(record)
    cancelled = record.get("status") == "cancelled"
    if kind in ("book", "reservation"):
        return (
            kind,
            record.get("shop_id"),
            record.get(f"{kind}_time"),
            int(record.get("customer_count") or 0),
            cancelled,
        )
    products = sorted(
        (str(p.get("product_id")), int(p.get("quantity") or 0))
        for p in record.get("products") or []
    )
    return (kind, record.get("store_id"), tuple(products), cancelled)


def _status_now(env: VitaEnvironment, rid: str) -> str | None:
    record = env.db.orders.get(rid) or env.db.books.get(rid) or env.db.reservations.get(rid)
    return None if record is None else record.status


@pytest.mark.parametrize(("task_set", "task_id"), _task_ids())
def test_reachable_plans_place_the_required_orders(
    shared_data: Path, task_set: str, task_id: str
) -> None:
    task_file, scenario, language = TASK_FILES[task_set]
    task = next(t for t in _tasks(task_file) if t["id"] == task_id)
    calls, reason = plan_required_orders(task, scenario)
    if reason is not None:
        assert calls == [] and reason
        return
    env = VitaEnvironment(task, scenario, language)
    for call in calls:
        result = env.run(call.name, call.arguments)
        assert not result.is_error, (call.name, result.content)
    initial = {
        str(k)
        for collection in ("orders", "books", "reservations")
        for k in (task["environment"].get(collection) or {})
    }
    required = required_records(task)
    wanted_new = Counter(_signature(r) for r in required if record_id(r) not in initial)
    placed = Counter(_signature(r) for r in env.orders())
    assert placed == wanted_new
    for record in required:
        rid = record_id(record)
        if rid in initial and record["status"] in TOOL_SETTABLE_STATUSES:
            before = task["environment"]
            assert _status_now(env, rid) == record["status"] or (
                record["status"] == "paid" and _status_now(env, rid) != "unpaid"
            ), (rid, before)


def test_reachable_counts(shared_data: Path) -> None:
    counts = {
        key: sum(plan_required_orders(t, scenario)[1] is None for t in _tasks(task_file))
        for key, (task_file, scenario, _) in TASK_FILES.items()
    }
    assert counts == EXPECTED_REACHABLE


def test_unreachable_reasons_name_the_cause(shared_data: Path) -> None:
    instore = {t["id"]: t for t in _tasks("instore/tasks_en.json")}
    calls, reason = plan_required_orders(instore["10826031"], "instore")
    assert calls == [] and "Shop does not support table booking" in (reason or "")
    delivery = {t["id"]: t for t in _tasks("delivery/tasks_en.json")}
    calls, reason = plan_required_orders(delivery["80715001"], "delivery")
    assert calls == [] and "S75401753354131701_P99357 not found" in (reason or "")


def test_plan_pays_and_cancels_like_the_required_statuses(shared_data: Path) -> None:
    delivery = {t["id"]: t for t in _tasks("delivery/tasks_en.json")}
    calls, reason = plan_required_orders(delivery["10716001"], "delivery")
    assert reason is None
    names = [c.name for c in calls]
    # A new unpaid order, and the pre-existing paid order cancelled.
    assert names == ["create_delivery_order", "cancel_delivery_order"]
    assert calls[1].arguments == {"order_id": "10716001O01"}
