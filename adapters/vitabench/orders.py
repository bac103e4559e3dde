"""Plans that place a task's required orders with the benchmark's own tools.

A task's ``required_orders`` (every expected state, de-duplicated by content) are
the orders, table bookings and reservations the user wants. The plan is the tool
calls that create each new one (store/shop, products x quantity, type; bookings and
reservations by shop, time and head count), pay it when it should end up paid, and
cancel or pay records that existed before the episode when their required status
says so. Status changes no tool can make (``processed``, ``delivered`` ...) are
left alone.

The plan is checked by running it on a scratch environment of the same task: every
step must succeed. Generated ids are deterministic per episode, so the ids the
plan passes to later calls (pay, cancel) are the ones a fresh environment of the
same task will generate when the calls are replayed in order.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import cast

from harness.boundary.json_value import JsonMapping, JsonObject, list_field, object_field
from harness.types import ToolCall

from .database import VitaDatabase, as_object_item, as_objects
from .environment import VitaEnvironment
from .tools.common import TIME_FORMAT, parses_as

# Required statuses that mean "the user paid" (later ones happen after the conversation).
PAID_STATUSES = {"paid", "processed", "in-progress", "delivered", "unconsumed", "consumed"}
# How to pay or cancel each kind of record (None: the tools cannot).
PAY_TOOL = {
    "delivery": "pay_delivery_order",
    "instore": "pay_instore_order",
    "book": "pay_instore_book",
}
CANCEL_TOOL = {
    "delivery": ("cancel_delivery_order", "order_id"),
    "instore": ("instore_cancel_order", "order_id"),
    "book": ("instore_cancel_book", "book_id"),
    "reservation": ("instore_cancel_reservation", "reservation_id"),
}
ID_ARGUMENT = {"delivery": "order_id", "instore": "order_id", "book": "book_id"}


class Unreachable(Exception):  # noqa: N818
    """A required record the tools cannot produce; the message says why."""


def required_records(task: JsonMapping) -> list[JsonMapping]:
    """The task's required records over every expected state, first copy kept."""
    criteria = object_field(task.get("evaluation_criteria"))
    seen: dict[str, JsonMapping] = {}
    for state in as_objects(criteria.get("expected_states")):
        for record in list_field(state.get("required_orders")):
            if isinstance(record, dict):
                seen.setdefault(json.dumps(record, sort_keys=True, ensure_ascii=False), record)
    return list(seen.values())


def record_kind(record: JsonMapping) -> str:
    """delivery / instore / hotel / ... for orders, book or reservation otherwise."""
    if "book_id" in record:
        return "book"
    if "reservation_id" in record:
        return "reservation"
    return str(record.get("order_type") or "")


def record_id(record: JsonMapping) -> str:
    for key in ("order_id", "book_id", "reservation_id"):
        if record.get(key):
            return str(record[key])
    return ""


class _Planner:
    def __init__(self, task: JsonMapping, scenario: str):
        self.env = VitaEnvironment(task, scenario, "en")
        self.db: VitaDatabase = self.env.db
        environment = object_field(task.get("environment"))
        self.initial_ids = {
            str(key)
            for collection in ("orders", "books", "reservations")
            for key in object_field(environment.get(collection))
        }
        self.calls: list[ToolCall] = []

    # -- running steps on the scratch environment --------------------------------------

    def step(self, name: str, arguments: dict[str, object]) -> str:
        if name not in self.env.tool_names():
            raise Unreachable(f"tool {name} is not available in scenario {self.env.scenario}")
        created_before = len(self.db.created)
        result = self.env.run(name, arguments)
        self.calls.append(
            ToolCall(
                id=f"plan_{len(self.calls)}",
                name=name,
                # The plan's arguments are JSON (json.dumps below writes them).
                arguments=cast(JsonObject, arguments),
                raw_arguments=json.dumps(arguments, ensure_ascii=False),
            )
        )
        if result.is_error:
            raise Unreachable(f"{name} failed: {result.content}")
        self._created_now = self.db.created[created_before:]
        return result.content

    def create(self, name: str, arguments: dict[str, object]) -> str:
        answer = self.step(name, arguments)
        if len(self._created_now) != 1:
            raise Unreachable(f"{name} created nothing: {answer}")
        return record_id(self._created_now[0].to_dict())

    def expect(self, name: str, arguments: dict[str, object], success: str) -> None:
        answer = self.step(name, arguments)
        if success not in answer:
            raise Unreachable(f"{name} answered: {answer}")

    # -- planning ----------------------------------------------------------------------

    def plan(self, record: JsonMapping) -> None:
        kind = record_kind(record)
        rid = record_id(record)
        status = str(record.get("status") or "")
        if rid in self.initial_ids:
            self.change_status(kind, rid, status)
            return
        new_id = self.place(kind, record)
        if status == "cancelled":
            name, argument = CANCEL_TOOL[kind]
            self.expect(name, {argument: new_id}, "cancelled")
        elif status in PAID_STATUSES and kind in PAY_TOOL and self.status_of(new_id) == "unpaid":
            self.expect(PAY_TOOL[kind], {ID_ARGUMENT[kind]: new_id}, "Payment successful")

    def status_of(self, rid: str) -> str:
        record = self.db.orders.get(rid) or self.db.books.get(rid) or self.db.reservations.get(rid)
        return record.status if record is not None else ""

    def change_status(self, kind: str, rid: str, status: str) -> None:
        current = self.status_of(rid)
        if status == current:
            return
        if status == "cancelled" and kind in CANCEL_TOOL:
            name, argument = CANCEL_TOOL[kind]
            self.expect(name, {argument: rid}, "cancelled")
        elif status in PAID_STATUSES and current == "unpaid" and kind in PAY_TOOL:
            self.expect(PAY_TOOL[kind], {ID_ARGUMENT[kind]: rid}, "Payment successful")
        # Other changes (paid -> processed ...) happen outside the conversation.

    def place(self, kind: str, record: JsonMapping) -> str:
        user_id = self.db.user_id
        if kind == "delivery":
            return self.create("create_delivery_order", self.delivery_arguments(record))
        if kind == "instore":
            products = list_field(record.get("products"))
            if len(products) != 1:
                raise Unreachable(
                    f"in-store order {record_id(record)} has {len(products)} products; "
                    "create_instore_product_order places exactly one product per order"
                )
            product = as_object_item(products[0])
            return self.create(
                "create_instore_product_order",
                {
                    "user_id": user_id,
                    "shop_id": record.get("store_id"),
                    "product_id": product.get("product_id"),
                    "quantity": product.get("quantity"),
                },
            )
        if kind in ("book", "reservation"):
            time_field = f"{kind}_time"
            if not record.get(time_field):
                raise Unreachable(f"{kind} {record_id(record)} has no {time_field}")
            return self.create(
                "instore_book" if kind == "book" else "instore_reservation",
                {
                    "user_id": user_id,
                    "shop_id": record.get("shop_id"),
                    "time": record.get(time_field),
                    "customer_count": record.get("customer_count"),
                },
            )
        raise Unreachable(f"no plan for records of type {kind!r}")

    def delivery_arguments(self, record: JsonMapping) -> dict[str, object]:
        location = record.get("location")
        address = location.get("address") if isinstance(location, dict) else None
        if not address:
            raise Unreachable(f"delivery order {record_id(record)} has no address")
        lines = list_field(record.get("products"))
        products = [p for p in lines if isinstance(p, dict)]
        if len(products) != len(lines) or not all(p.get("product_id") for p in products):
            raise Unreachable(
                f"delivery order {record_id(record)} has a product line without a product_id"
            )
        dispatch = str(record.get("dispatch_time") or "")
        now = datetime.strptime(self.db.time, TIME_FORMAT)
        if not parses_as(dispatch, TIME_FORMAT) or datetime.strptime(dispatch, TIME_FORMAT) < now:
            dispatch = self.db.time  # the order's own time is past or absent: dispatch now
        arguments: dict[str, object] = {
            "user_id": self.db.user_id,
            "store_id": record.get("store_id"),
            "product_ids": [p.get("product_id") for p in products],
            "product_cnts": [p.get("quantity") for p in products],
            "address": address,
            "dispatch_time": dispatch,
        }
        attributes = [str(p.get("attributes") or "") for p in products]
        if any(attributes):
            arguments["attributes"] = attributes
        if record.get("note"):
            arguments["note"] = record["note"]
        return arguments


def plan_required_orders(task: JsonMapping, scenario: str) -> tuple[list[ToolCall], str | None]:
    """The tool calls that produce the task's required orders, or ([], why not)."""
    records = required_records(task)
    if not records:
        return [], "the task has no required orders"
    planner = _Planner(task, scenario)
    problems: list[str] = []
    for record in records:
        try:
            planner.plan(record)
        except Unreachable as exc:
            problems.append(str(exc))
    if problems:
        return [], "; ".join(problems)
    return planner.calls, None
