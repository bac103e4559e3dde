"""The 30 travel (OTA) tools: hotels, attractions, flights and trains.

The four provider kinds share most of their logic; each tool is still its own
method so that its name and parameters are exactly what the agent sees.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..database import OTA_ID_PREFIX, Attraction, Hotel, Order, OtaProduct, Transport
from . import templates
from .common import DATE_FORMAT, LookupFailure, Refusal, check_user, parses_as, refuse_unless
from .general import ToolKitBase
from .search import OTA_TOP_K, join_keywords, partial_ratio, rerank

# A city name "matches" an address or city field at this raw partial_ratio.
CITY_MATCH_SCORE = 40
DATE_FORMAT_MESSAGE = "Date format is incorrect, correct format is %Y-%m-%d"
# How messages name each kind: (capitalised word, article + word for type errors).
KIND_WORDS = {
    "hotel": ("Hotel", "a hotel"),
    "attraction": ("Attraction", "an attraction"),
    "flight": ("Flight", "a flight"),
    "train": ("Train", "a train"),
}


def city_matches(city_name: str, text: str) -> bool:
    return partial_ratio(city_name, text) >= CITY_MATCH_SCORE


def _product_field(product: Any, name: str) -> Any:
    """A field of an order line, whether a product object or a dict from the data."""
    if isinstance(product, dict):
        return product.get(name)
    if name in ("seat_type", "room_type", "ticket_type"):
        return product.variant
    return getattr(product, name)


class OTATools(ToolKitBase):
    """Travel booking: hotels, attraction tickets, flights and trains."""

    # -- lookups (not tools) -----------------------------------------------------------

    def _collection(self, kind: str) -> dict[str, Any]:
        collections: dict[str, dict[str, Any]] = {
            "hotel": self.db.hotels,
            "attraction": self.db.attractions,
            "flight": self.db.flights,
            "train": self.db.trains,
        }
        return collections[kind]

    def _provider(self, kind: str, provider_id: str) -> Any:
        provider = self._collection(kind).get(provider_id)
        if provider is None:
            raise LookupFailure(f"{kind} {provider_id} not found")
        return provider

    def _order(self, order_id: str) -> Order:
        order = self.db.orders.get(order_id)
        if order is None:
            raise LookupFailure(f"Order {order_id} not found")
        return order

    def _typed_order(self, kind: str, order_id: str) -> Order:
        order = self._order(order_id)
        refuse_unless(order.order_type == kind, f"Order type is not {KIND_WORDS[kind][1]} order")
        return order

    # -- shared implementations --------------------------------------------------------

    def _info(self, kind: str, provider_id: str, long_text: Any) -> str:
        word = KIND_WORDS[kind][0]
        refuse_unless(provider_id, f"{word} ID cannot be empty")
        try:
            provider = self._provider(kind, provider_id)
        except LookupFailure as exc:
            # This family of tools answers a failed lookup as text, not as an error.
            return f"Error: {exc}"
        return f"{word} Info:\n{long_text(provider)}"

    def _place_order(
        self, kind: str, provider_id: str, item: OtaProduct | None, total: float, user_id: str
    ) -> str:
        db = self.db
        order = Order(
            order_id=db.new_id(OTA_ID_PREFIX),
            order_type=kind,
            user_id=user_id,
            store_id=provider_id,
            total_price=total,
            status="unpaid",
            products=[] if item is None else [item],
            create_time=db.time,
            update_time=db.time,
        )
        db.orders[order.order_id] = order
        db.created.append(order)
        return templates.order_long_text(order)

    def _create_dated_order(
        self,
        kind: str,
        provider_id: str,
        product_id: str,
        user_id: str,
        date: str,
        quantity: int,
        product_word: str,
    ) -> str:
        word = KIND_WORDS[kind][0]
        refuse_unless(provider_id, f"{word} ID cannot be empty")
        refuse_unless(
            product_id, f"{'Ticket' if kind == 'attraction' else 'Seat'} ID cannot be empty"
        )
        refuse_unless(user_id, "User ID cannot be empty")
        refuse_unless(quantity > 0, "Booking quantity must be greater than 0")
        check_user(self.db, user_id)
        provider = self._provider(kind, provider_id)
        product = next(
            (p for p in provider.products if p.date == date and p.product_id == product_id), None
        )
        if product is None:
            raise Refusal(
                f"The {kind} does not have the specified {product_word} on the specified date"
            )
        refuse_unless(
            product.quantity >= quantity,
            f"Insufficient {product_word} inventory for the specified date",
        )
        product.quantity -= quantity
        item = dataclasses.replace(product, quantity=quantity)
        return self._place_order(kind, provider_id, item, product.price * quantity, user_id)

    def _pay(self, order_id: str) -> str:
        refuse_unless(order_id, "Order ID cannot be empty")
        order = self._order(order_id)  # the benchmark does not check the order type here
        refuse_unless(order.status == "unpaid", "Order status must be unpaid")
        order.status = "paid"
        order.update_time = self.db.time
        return "Payment successful"

    def _search_orders(self, kind: str, user_id: str, date: str | None, status: str | None) -> str:
        check_user(self.db, user_id)
        mine = [o for o in self.db.orders.values() if o.order_type == kind and o.user_id == user_id]
        if kind == "hotel" and not mine:
            raise LookupFailure("User does not exist or has no order records")
        if date:
            refuse_unless(parses_as(date, DATE_FORMAT), DATE_FORMAT_MESSAGE)
        if status:
            mine = [o for o in mine if o.status == status]
        if date:
            # Only product objects carry a date; lines loaded from the data never match.
            mine = [
                o
                for o in mine
                if any(isinstance(p, OtaProduct) and p.date == date for p in o.products)
            ]
        return "\n".join(templates.order_short_text(o) for o in mine)

    def _detail(self, kind: str, order_id: str) -> str:
        refuse_unless(order_id, "Order ID cannot be empty")
        return templates.order_long_text(self._typed_order(kind, order_id))

    def _cancel(self, kind: str, order_id: str, user_id: str) -> str:
        refuse_unless(order_id, "Order ID cannot be empty")
        refuse_unless(user_id, "User ID cannot be empty")
        check_user(self.db, user_id)
        order = self._typed_order(kind, order_id)
        refuse_unless(order.status != "cancelled", "Order is already in cancelled status")
        refund: float | int = order.total_price if order.status == "paid" else 0
        order.status = "cancelled"  # stock is not given back, as in the benchmark
        order.update_time = self.db.time
        return f"Cancellation successful, refund amount: {refund}"

    def _move_ticket(self, order: Order, new_date: str) -> str:
        """Move a one-line flight/train order to ``new_date`` (same seat type)."""
        kind = order.order_type
        old = order.products[0]
        seat_type = _product_field(old, "seat_type")
        quantity = _product_field(old, "quantity")
        old_date = _product_field(old, "date")
        old_price = _product_field(old, "price")
        transport: Transport = self._provider(kind, order.store_id)
        new = next(
            (p for p in transport.products if p.date == new_date and p.variant == seat_type), None
        )
        if new is None:
            raise Refusal(f"New date {new_date} does not have {seat_type} type seats")
        refuse_unless(
            new.quantity >= quantity,
            f"Insufficient {seat_type} seat inventory for new date {new_date}",
        )
        for product in transport.products:
            if product.date == old_date and product.variant == seat_type:
                product.quantity += quantity
                break
        new.quantity -= quantity
        new_total = new.price * quantity
        difference = new_total - old_price * quantity
        order.products = [dataclasses.replace(new, quantity=quantity)]
        order.total_price = new_total
        order.update_time = self.db.time
        if difference > 0:
            order.status = "unpaid"
            return (
                f"Modification successful, need to pay additional amount: {difference}, "
                "please pay as soon as possible"
            )
        return f"Modification successful, price difference: {difference}, refunded"

    # -- info --------------------------------------------------------------------------

    def get_ota_hotel_info(self, hotel_id: str) -> str:
        return self._info("hotel", hotel_id, templates.hotel_long_text)

    def get_ota_attraction_info(self, attraction_id: str) -> str:
        return self._info("attraction", attraction_id, templates.attraction_long_text)

    def get_ota_flight_info(self, flight_id: str) -> str:
        return self._info("flight", flight_id, templates.transport_long_text)

    def get_ota_train_info(self, train_id: str) -> str:
        return self._info("train", train_id, templates.transport_long_text)

    # -- search ------------------------------------------------------------------------

    def hotel_search_recommand(self, city_name: str, key_words: list[str] | None = None) -> str:
        hotels: dict[str, Hotel] = {
            h.hotel_id: h
            for h in self.db.hotels.values()
            if city_matches(city_name, h.location.address)
        }
        if not hotels:
            return (
                "No hotels found matching the criteria. "
                "Please check if the city name is correct and try again."
            )
        documents = {hid: h.hotel_name + ",".join(h.tags) for hid, h in hotels.items()}
        ranked = rerank(join_keywords(key_words or []), documents)[:OTA_TOP_K]
        return "\n".join(templates.hotel_short_text(hotels[hid]) for hid in ranked)

    def attractions_search_recommend(self, city_name: str, key_words: list[str]) -> str:
        attractions: dict[str, Attraction] = {
            a.attraction_id: a
            for a in self.db.attractions.values()
            if city_matches(city_name, a.location.address)
        }
        if not attractions:
            return (
                "No attractions found matching the criteria. "
                "Please check if the city name is correct and try again."
            )
        documents = {
            aid: f"{a.attraction_name},{a.description},{a.location.address}"
            for aid, a in attractions.items()
        }
        ranked = rerank(join_keywords(key_words), documents)[:OTA_TOP_K]
        return "\n".join(templates.attraction_short_text(attractions[aid]) for aid in ranked)

    def flight_search_recommend(self, departure: str, destination: str) -> str:
        refuse_unless(departure, "Departure city cannot be empty")
        refuse_unless(destination, "Destination city cannot be empty")
        flights = [
            f
            for f in self.db.flights.values()
            if city_matches(departure, f.departure_city)
            and city_matches(destination, f.arrival_city)
        ]
        if not flights:
            return "No flights found matching the criteria"
        return "\n".join(templates.transport_short_text(f) for f in flights)

    def train_ticket_search(self, departure: str, destination: str, date: str) -> str:
        refuse_unless(departure, "Departure city cannot be empty")
        refuse_unless(destination, "Destination city cannot be empty")
        refuse_unless(date, "Departure date cannot be empty")
        refuse_unless(parses_as(date, DATE_FORMAT), DATE_FORMAT_MESSAGE)
        lines = []
        for train in self.db.trains.values():
            for product in train.products:
                # One line per matching seat product: a train with two seat types on
                # that date is listed twice, as in the benchmark.
                if (
                    product.date == date
                    and city_matches(departure, train.departure_city)
                    and city_matches(destination, train.arrival_city)
                ):
                    lines.append(templates.transport_short_text(train))
        if not lines:
            return "No trains found matching the criteria"
        return "\n".join(lines)

    # -- create ------------------------------------------------------------------------

    def create_hotel_order(self, hotel_id: str, room_id: str, user_id: str) -> str:
        refuse_unless(hotel_id, "Hotel ID cannot be empty")
        refuse_unless(user_id, "User ID cannot be empty")
        check_user(self.db, user_id)
        hotel: Hotel = self._provider("hotel", hotel_id)
        room = next((p for p in hotel.products if p.product_id == room_id), None)
        if room is None:
            # An unknown room still creates an empty order, as in the benchmark.
            return self._place_order("hotel", hotel_id, None, 0.0, user_id)
        refuse_unless(room.quantity > 0, "No available rooms at the moment")
        room.quantity -= 1
        item = dataclasses.replace(room, quantity=1)
        return self._place_order("hotel", hotel_id, item, room.price, user_id)

    def create_attraction_order(
        self, attraction_id: str, ticket_id: str, user_id: str, date: str, quantity: int
    ) -> str:
        return self._create_dated_order(
            "attraction", attraction_id, ticket_id, user_id, date, quantity, "ticket"
        )

    def create_flight_order(
        self, flight_id: str, seat_id: str, user_id: str, date: str, quantity: int
    ) -> str:
        return self._create_dated_order(
            "flight", flight_id, seat_id, user_id, date, quantity, "seat"
        )

    def create_train_order(
        self, train_id: str, seat_id: str, user_id: str, date: str, quantity: int
    ) -> str:
        return self._create_dated_order("train", train_id, seat_id, user_id, date, quantity, "seat")

    # -- pay ---------------------------------------------------------------------------

    def pay_hotel_order(self, order_id: str) -> str:
        return self._pay(order_id)

    def pay_attraction_order(self, order_id: str) -> str:
        return self._pay(order_id)

    def pay_flight_order(self, order_id: str) -> str:
        return self._pay(order_id)

    def pay_train_order(self, order_id: str) -> str:
        return self._pay(order_id)

    # -- search orders -----------------------------------------------------------------

    def search_hotel_order(
        self, user_id: str, date: str | None = None, status: str = "paid"
    ) -> str:
        return self._search_orders("hotel", user_id, date, status)

    def search_attraction_order(
        self, user_id: str, date: str | None = None, status: str = "paid"
    ) -> str:
        return self._search_orders("attraction", user_id, date, status)

    def search_flight_order(
        self, user_id: str, date: str | None = None, status: str = "paid"
    ) -> str:
        return self._search_orders("flight", user_id, date, status)

    def search_train_order(
        self, user_id: str, date: str | None = None, status: str = "paid"
    ) -> str:
        return self._search_orders("train", user_id, date, status)

    # -- order details -----------------------------------------------------------------

    def get_hotel_order_detail(self, order_id: str) -> str:
        return self._detail("hotel", order_id)

    def get_attraction_order_detail(self, order_id: str) -> str:
        return self._detail("attraction", order_id)

    def get_flight_order_detail(self, order_id: str) -> str:
        return self._detail("flight", order_id)

    def get_train_order_detail(self, order_id: str) -> str:
        return self._detail("train", order_id)

    # -- modify ------------------------------------------------------------------------

    def modify_train_order(self, order_id: str, user_id: str, new_date: str) -> str:
        refuse_unless(order_id, "Order ID cannot be empty")
        refuse_unless(user_id, "User ID cannot be empty")
        refuse_unless(new_date, "New departure date cannot be empty")
        check_user(self.db, user_id)
        refuse_unless(parses_as(new_date, DATE_FORMAT), DATE_FORMAT_MESSAGE)
        order = self._typed_order("train", order_id)
        refuse_unless(
            order.user_id == user_id, f"Order {order_id} does not belong to user {user_id}"
        )
        refuse_unless(
            order.status == "paid",
            f"Only paid orders can be modified, current status: {order.status}",
        )
        refuse_unless(
            len(order.products) == 1, "Only single train ticket order modification is supported"
        )
        return self._move_ticket(order, new_date)

    def modify_flight_order(self, order_id: str, user_id: str, new_date: str) -> str:
        refuse_unless(order_id, "Order ID cannot be empty")
        refuse_unless(user_id, "User ID cannot be empty")
        refuse_unless(new_date, "New departure date cannot be empty")
        refuse_unless(parses_as(new_date, DATE_FORMAT), DATE_FORMAT_MESSAGE)
        check_user(self.db, user_id)
        order = self._typed_order("flight", order_id)
        refuse_unless(
            order.user_id == user_id,
            f"User {user_id} does not have permission to modify this order",
        )
        refuse_unless(order.status == "paid", "Only paid orders can be modified")
        refuse_unless(
            len(order.products) == 1, "Only single flight ticket order modification is supported"
        )
        return self._move_ticket(order, new_date)

    # -- cancel ------------------------------------------------------------------------

    def cancel_hotel_order(self, order_id: str, user_id: str) -> str:
        return self._cancel("hotel", order_id, user_id)

    def cancel_attraction_order(self, order_id: str, user_id: str) -> str:
        return self._cancel("attraction", order_id, user_id)

    def cancel_flight_order(self, order_id: str, user_id: str) -> str:
        return self._cancel("flight", order_id, user_id)

    def cancel_train_order(self, order_id: str, user_id: str) -> str:
        return self._cancel("train", order_id, user_id)
