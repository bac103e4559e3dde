"""The 12 food-delivery tools."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any

from ..database import DELIVERY_ID_PREFIX, Location, Order, Store, StoreProduct
from . import templates
from .common import TIME_FORMAT, LookupFailure, check_user, haversine_m, parses_as, refuse_unless
from .general import ToolKitBase
from .search import DELIVERY_TOP_K, join_keywords, rerank

# Rider time: a fixed base plus a per-metre rate, in minutes.
BASE_DELIVERY_MINUTES = 25.0
MINUTES_PER_METRE = 0.006510


def distance_to_minutes(distance: float) -> float:
    return float(round(BASE_DELIVERY_MINUTES + int(distance) * MINUTES_PER_METRE))


def _count_value(count: Any) -> Any:
    # The data model stores a whole float count (2.0) as the int 2.
    return int(count) if isinstance(count, float) and count.is_integer() else count


def _attribute_text(value: object) -> str:
    if isinstance(value, list):  # the data model joins a list of attributes
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


class DeliveryTools(ToolKitBase):
    """Stores, dishes and delivery orders."""

    # -- lookups (not tools) -----------------------------------------------------------

    def _store(self, store_id: str) -> Store:
        store = self.db.stores.get(store_id)
        if store is None:
            raise LookupFailure(f"Store {store_id} not found")
        return store

    def _product(self, product_id: str) -> StoreProduct:
        product = self.db.products.get(product_id)
        if product is None:
            raise LookupFailure(f"{product_id} not found")
        if not isinstance(product, StoreProduct):
            raise LookupFailure(f"{product_id} is not a delivery product")
        return product

    def _order(self, order_id: str) -> Order:
        order = self.db.orders.get(order_id)
        if order is None:
            raise LookupFailure(f"Order {order_id} not found")
        if order.order_type != "delivery":
            raise LookupFailure(f"Order {order_id} is not a delivery order")
        return order

    # -- tools -------------------------------------------------------------------------

    def delivery_distance_to_time(self, distance: float) -> str | float:
        if isinstance(distance, bool) or not isinstance(distance, int | float):
            return f"distance value type should be float or int, but get {type(distance)}"
        return distance_to_minutes(distance)

    def get_delivery_store_info(self, store_id: str) -> str:
        return templates.store_long_text(self._store(store_id))

    def get_delivery_product_info(self, product_id: str) -> str:
        return templates.store_product_text(self._product(product_id))

    def delivery_store_search_recommand(self, keywords: list[str]) -> str:
        documents = {
            store.store_id: store.name + ",".join(store.tags) for store in self.db.stores.values()
        }
        ranked = rerank(join_keywords(keywords), documents)[:DELIVERY_TOP_K]
        # Results are looked up by the printed id: a store whose dict key differs
        # from its id field breaks the whole search (a data quirk kept as is).
        return "\n".join(templates.store_short_text(self._store(sid)) for sid in ranked)

    def delivery_product_search_recommand(self, keywords: list[str]) -> str:
        documents = {
            pid: f"{p.store_name} {p.name} {p.tags}"
            for pid, p in self.db.products.items()
            if isinstance(p, StoreProduct)
        }
        ranked = rerank(join_keywords(keywords), documents)[:DELIVERY_TOP_K]
        return "\n".join(templates.store_product_text(self._product(pid)) for pid in ranked)

    def create_delivery_order(
        self,
        user_id: str,
        store_id: str,
        product_ids: list[str],
        product_cnts: list[int],
        address: str,
        dispatch_time: str,
        attributes: list[str] | None = None,
        note: str = "",
    ) -> str:
        db = self.db
        check_user(db, user_id)
        refuse_unless(store_id in db.stores, f"Store {store_id} not found")
        catalogue = [self._product(pid) for pid in product_ids]
        refuse_unless(address, f"Location {address} is empty")
        refuse_unless(
            len(product_ids) == len(product_cnts) and all(cnt > 0 for cnt in product_cnts),
            f"product_cnts {product_cnts} list is invalid",
        )
        refuse_unless(
            dispatch_time and parses_as(dispatch_time, TIME_FORMAT),
            f"dispatch_time {dispatch_time} time format is invalid, yyyy-mm-dd HH:MM:SS required",
        )
        dispatch = datetime.strptime(dispatch_time, TIME_FORMAT)
        refuse_unless(
            dispatch >= datetime.strptime(db.time, TIME_FORMAT),
            f"dispatch_time {dispatch_time} must be in the future",
        )

        point = self.geocode(address)
        store = db.stores[store_id]
        distance = haversine_m(
            point.longitude, point.latitude, store.location.longitude, store.location.latitude
        )
        shipping_time = distance_to_minutes(distance)
        delivery_time = dispatch + timedelta(minutes=shipping_time)

        items: list[StoreProduct] = []
        total_price = 0.0
        for index, (product, count) in enumerate(zip(catalogue, product_cnts, strict=True)):
            attribute = attributes[index] if attributes and index < len(attributes) else ""
            item = dataclasses.replace(
                product,
                quantity=_count_value(count),
                attributes=_attribute_text(attribute),
                tags=list(product.tags),
            )
            items.append(item)
            total_price += product.price * count
            # The index now answers with the ordered copy (seen by later product lookups).
            db.products[product.product_id] = item

        location = Location(address, point.longitude, point.latitude)
        order = Order(
            order_id=db.new_id(DELIVERY_ID_PREFIX),
            order_type="delivery",
            user_id=user_id,
            store_id=store_id,
            total_price=total_price,
            status="unpaid",
            products=items,
            note=note,
            location=location,
            dispatch_time=dispatch_time,
            shipping_time=shipping_time,
            delivery_time=delivery_time.strftime(TIME_FORMAT),
            create_time=db.time,
            update_time=db.time,
        )
        db.orders[order.order_id] = order
        db.created.append(order)
        db.add_address(location)
        return templates.order_long_text(order)

    def pay_delivery_order(self, order_id: str) -> str:
        order = self._order(order_id)
        refuse_unless(order.status == "unpaid", "Order is not in `unpaid` status.")
        order.status = "paid"  # the benchmark leaves update_time unchanged here
        return "Payment successful"

    def get_delivery_order_status(self, order_id: str) -> str:
        return self._order(order_id).status

    def cancel_delivery_order(self, order_id: str) -> str:
        order = self._order(order_id)
        refuse_unless(order.status != "cancelled", f"Order {order_id} is already cancelled")
        order.status = "cancelled"
        return f"Order {order_id} has been cancelled."

    def modify_delivery_order(self, order_id: str, note: str) -> str:
        order = self._order(order_id)
        order.note = note
        return f"Order {order_id} has been modified."

    def search_delivery_orders(self, user_id: str, status: str = "unpaid") -> str:
        check_user(self.db, user_id)
        matches = [
            o
            for o in self.db.orders.values()
            if o.order_type == "delivery" and o.user_id == user_id and o.status == status
        ]
        if not matches:
            return "No delivery orders available"
        return "\n".join(templates.order_short_text(o) for o in matches)

    def get_delivery_order_detail(self, order_id: str) -> str:
        refuse_unless(order_id, "Order ID cannot be empty")
        return templates.order_long_text(self._order(order_id))
