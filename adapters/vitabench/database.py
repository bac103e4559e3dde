"""The per-task VitaBench database: typed records built from a task's ``environment``.

Every episode gets a fresh database built from a deep copy of the task's
``environment`` dict. Only the keys of the scenario's whitelist are read; missing
collections are empty. Numbers declared as floats in the benchmark's data model
(prices, scores, coordinates) are stored as floats, because the agent reads them
printed the Python way (``25`` in the data prints as ``25.0``).

Besides the collections, the database keeps the two indexes the tools search:

* the product index, product id -> product object over every provider, in
  insertion order (a later duplicate id replaces the object but keeps its place);
* the address index, address -> Location, the candidate set of geocoding.

Generated ids are deterministic within an episode (a hash of the scenario prefix,
the user id, the clock and a counter). They never enter the score.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.boundary.json_value import (
    JsonMapping,
    JsonObject,
    JsonValue,
    list_field,
    object_field,
)

SCENARIOS = ("delivery", "instore", "ota", "cross")

# The keys each domain reads from ``task.environment`` (anything else is ignored).
BASE_KEYS = ("orders", "time", "user_id", "weather", "location", "user_historical_behaviors")
DOMAIN_KEYS: dict[str, tuple[str, ...]] = {
    "delivery": ("stores", *BASE_KEYS),
    "instore": ("shops", "reservations", "books", *BASE_KEYS),
    "ota": ("hotels", "attractions", "flights", "trains", *BASE_KEYS),
}
# Cross-domain builds every domain from the same dict, in this order.
CROSS_DOMAINS = ("delivery", "instore", "ota")

# Id prefixes of records created during an episode.
DELIVERY_ID_PREFIX = "OT"
INSTORE_ID_PREFIX = "OI"
OTA_ID_PREFIX = "OO"


def as_float(value: object) -> float:
    """A number declared float in the data model (ints and numeric strings coerce)."""
    if isinstance(value, (int, float, str)):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


def as_int(value: object) -> int:
    """A number declared int in the data model."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"not an integer: {value!r}")


def as_str(value: object) -> str:
    return "" if value is None else str(value)


def as_str_list(value: object) -> list[str]:
    if not value:
        return []
    if isinstance(value, (list, tuple, dict, str)):
        return [str(item) for item in value]
    raise TypeError(f"not a list: {value!r}")


def as_objects(value: object) -> list[JsonMapping]:
    """The objects of a JSON list field; an absent (or empty) one has none."""
    if not value:
        return []
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        return value
    raise TypeError(f"not a list of objects: {value!r}")


def objects_by_key(value: object) -> dict[str, JsonMapping]:
    """A JSON object of objects (a collection by id); an absent (or empty) one is ``{}``."""
    return {key: as_object_item(item) for key, item in object_field(value).items()}


def as_object_item(value: object) -> JsonMapping:
    """An element of a collection: an object (even an empty one)."""
    if isinstance(value, dict):
        return value
    raise TypeError(f"not an object: {value!r}")


# ---------------------------------------------------------------------------------------
# Shared entities


@dataclass
class Location:
    address: str
    longitude: float
    latitude: float

    @classmethod
    def from_dict(cls, data: JsonMapping) -> Location:
        return cls(
            address=as_str(data.get("address")),
            longitude=as_float(data.get("longitude", 0.0)),
            latitude=as_float(data.get("latitude", 0.0)),
        )

    def to_dict(self) -> JsonObject:
        return {"address": self.address, "longitude": self.longitude, "latitude": self.latitude}


def optional_location(data: object) -> Location | None:
    return Location.from_dict(data) if isinstance(data, dict) else None


@dataclass
class Weather:
    city: str
    category: str
    datetime: str
    temperature: list[float]
    humidity: float

    @classmethod
    def from_dict(cls, data: JsonMapping) -> Weather:
        return cls(
            city=as_str(data.get("city")),
            category=as_str(data.get("category")),
            datetime=as_str(data.get("datetime")),
            temperature=[as_float(t) for t in list_field(data.get("temperature"))],
            humidity=as_float(data.get("humidity", 0.0)),
        )


# ---------------------------------------------------------------------------------------
# Delivery


@dataclass
class StoreProduct:
    product_id: str
    name: str
    store_id: str
    store_name: str
    price: float
    quantity: int = 0
    attributes: str = ""
    tags: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: JsonMapping) -> StoreProduct:
        attributes = data.get("attributes", "")
        if isinstance(attributes, list):  # the data model joins a list into one string
            attributes = ", ".join(str(a) for a in attributes)
        return cls(
            product_id=as_str(data.get("product_id")),
            name=as_str(data.get("name")),
            store_id=as_str(data.get("store_id")),
            store_name=as_str(data.get("store_name")),
            price=as_float(data.get("price", 0.0)),
            quantity=as_int(data.get("quantity", 0) or 0),
            attributes=as_str(attributes),
            tags=as_str_list(data.get("tags")),
        )

    def to_dict(self) -> JsonObject:
        return {
            "product_id": self.product_id,
            "name": self.name,
            "store_id": self.store_id,
            "store_name": self.store_name,
            "price": self.price,
            "quantity": self.quantity,
            "attributes": self.attributes,
            "tags": list(self.tags),
        }


@dataclass
class Store:
    store_id: str
    name: str
    score: float
    location: Location
    tags: list[str]
    products: list[StoreProduct]

    @classmethod
    def from_dict(cls, data: JsonMapping) -> Store:
        return cls(
            store_id=as_str(data.get("store_id")),
            name=as_str(data.get("name")),
            score=as_float(data.get("score", 0.0)),
            location=Location.from_dict(object_field(data.get("location"))),
            tags=as_str_list(data.get("tags")),
            products=[StoreProduct.from_dict(p) for p in as_objects(data.get("products"))],
        )


# ---------------------------------------------------------------------------------------
# In-store


@dataclass
class ShopProduct:
    product_id: str
    name: str
    shop_id: str
    price: float
    quantity: int = 0
    tags: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: JsonMapping) -> ShopProduct:
        return cls(
            product_id=as_str(data.get("product_id")),
            name=as_str(data.get("name")),
            shop_id=as_str(data.get("shop_id")),
            price=as_float(data.get("price", 0.0)),
            quantity=as_int(data.get("quantity", 0) or 0),
            tags=as_str_list(data.get("tags")),
        )

    def to_dict(self) -> JsonObject:
        return {
            "product_id": self.product_id,
            "name": self.name,
            "shop_id": self.shop_id,
            "price": self.price,
            "quantity": self.quantity,
            "tags": list(self.tags),
        }


@dataclass
class Shop:
    shop_id: str
    shop_name: str
    score: float
    location: Location
    tags: list[str]
    enable_book: bool
    book_price: float
    enable_reservation: bool
    products: list[ShopProduct]

    @classmethod
    def from_dict(cls, data: JsonMapping) -> Shop:
        return cls(
            shop_id=as_str(data.get("shop_id")),
            shop_name=as_str(data.get("shop_name")),
            score=as_float(data.get("score", 0.0)),
            location=Location.from_dict(object_field(data.get("location"))),
            tags=as_str_list(data.get("tags")),
            enable_book=bool(data.get("enable_book", False)),
            book_price=as_float(data.get("book_price", 0.0) or 0.0),
            enable_reservation=bool(data.get("enable_reservation", False)),
            products=[ShopProduct.from_dict(p) for p in as_objects(data.get("products"))],
        )


@dataclass
class BookInfo:
    """A table booking."""

    book_id: str
    shop_id: str
    book_time: str
    update_time: str
    customer_id: str
    customer_count: int
    book_price: float
    status: str

    @classmethod
    def from_dict(cls, data: JsonMapping) -> BookInfo:
        return cls(
            book_id=as_str(data.get("book_id")),
            shop_id=as_str(data.get("shop_id")),
            book_time=as_str(data.get("book_time")),
            update_time=as_str(data.get("update_time")),
            customer_id=as_str(data.get("customer_id")),
            customer_count=as_int(data.get("customer_count", 0) or 0),
            book_price=as_float(data.get("book_price", 0.0) or 0.0),
            status=as_str(data.get("status")),
        )

    def to_dict(self) -> JsonObject:
        return {
            "book_id": self.book_id,
            "shop_id": self.shop_id,
            "book_time": self.book_time,
            "update_time": self.update_time,
            "customer_id": self.customer_id,
            "customer_count": self.customer_count,
            "book_price": self.book_price,
            "status": self.status,
        }


@dataclass
class ReservationInfo:
    """A service reservation."""

    reservation_id: str
    shop_id: str
    reservation_time: str
    update_time: str
    customer_id: str
    customer_count: int
    status: str

    @classmethod
    def from_dict(cls, data: JsonMapping) -> ReservationInfo:
        return cls(
            reservation_id=as_str(data.get("reservation_id")),
            shop_id=as_str(data.get("shop_id")),
            reservation_time=as_str(data.get("reservation_time")),
            update_time=as_str(data.get("update_time")),
            customer_id=as_str(data.get("customer_id")),
            customer_count=as_int(data.get("customer_count", 0) or 0),
            status=as_str(data.get("status")),
        )

    def to_dict(self) -> JsonObject:
        return {
            "reservation_id": self.reservation_id,
            "shop_id": self.shop_id,
            "reservation_time": self.reservation_time,
            "update_time": self.update_time,
            "customer_id": self.customer_id,
            "customer_count": self.customer_count,
            "status": self.status,
        }


# ---------------------------------------------------------------------------------------
# OTA


@dataclass
class OtaProduct:
    """One sellable row of an OTA provider: a room, ticket or seat type on one date.

    ``kind`` is the provider kind (hotel, attraction, flight, train); ``variant`` is
    its room_type / ticket_type / seat_type.
    """

    kind: str
    product_id: str
    price: float
    quantity: int
    date: str
    variant: str

    VARIANT_FIELD = {
        "hotel": "room_type",
        "attraction": "ticket_type",
        "flight": "seat_type",
        "train": "seat_type",
    }

    @classmethod
    def from_dict(cls, kind: str, data: JsonMapping) -> OtaProduct:
        return cls(
            kind=kind,
            product_id=as_str(data.get("product_id")),
            price=as_float(data.get("price", 0.0)),
            quantity=as_int(data.get("quantity", 0) or 0),
            date=as_str(data.get("date")),
            variant=as_str(data.get(cls.VARIANT_FIELD[kind])),
        )

    def to_dict(self) -> JsonObject:
        return {
            "product_id": self.product_id,
            "price": self.price,
            "quantity": self.quantity,
            "date": self.date,
            self.VARIANT_FIELD[self.kind]: self.variant,
        }


@dataclass
class Hotel:
    hotel_id: str
    hotel_name: str
    score: float
    star_rating: int
    location: Location
    tags: list[str]
    products: list[OtaProduct]

    @classmethod
    def from_dict(cls, data: JsonMapping) -> Hotel:
        return cls(
            hotel_id=as_str(data.get("hotel_id")),
            hotel_name=as_str(data.get("hotel_name")),
            score=as_float(data.get("score", 0.0)),
            star_rating=as_int(data.get("star_rating", 0) or 0),
            location=Location.from_dict(object_field(data.get("location"))),
            tags=as_str_list(data.get("tags")),
            products=[OtaProduct.from_dict("hotel", p) for p in as_objects(data.get("products"))],
        )


@dataclass
class Attraction:
    attraction_id: str
    attraction_name: str
    location: Location
    description: str
    score: float
    opening_hours: str
    ticket_price: float
    products: list[OtaProduct]

    @classmethod
    def from_dict(cls, data: JsonMapping) -> Attraction:
        return cls(
            attraction_id=as_str(data.get("attraction_id")),
            attraction_name=as_str(data.get("attraction_name")),
            location=Location.from_dict(object_field(data.get("location"))),
            description=as_str(data.get("description")),
            score=as_float(data.get("score", 0.0)),
            opening_hours=as_str(data.get("opening_hours")),
            ticket_price=as_float(data.get("ticket_price", 0.0) or 0.0),
            products=[
                OtaProduct.from_dict("attraction", p) for p in as_objects(data.get("products"))
            ],
        )


@dataclass
class Transport:
    """A flight or a train (``kind``); trains call their terminals stations."""

    kind: str
    transport_id: str
    number: str
    departure_city: str
    arrival_city: str
    departure_location: Location
    arrival_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str]
    products: list[OtaProduct]

    @classmethod
    def from_dict(cls, kind: str, data: JsonMapping) -> Transport:
        terminal = "airport" if kind == "flight" else "station"
        return cls(
            kind=kind,
            transport_id=as_str(data.get(f"{kind}_id")),
            number=as_str(data.get(f"{kind}_number")),
            departure_city=as_str(data.get("departure_city")),
            arrival_city=as_str(data.get("arrival_city")),
            departure_location=Location.from_dict(
                object_field(data.get(f"departure_{terminal}_location"))
            ),
            arrival_location=Location.from_dict(
                object_field(data.get(f"arrival_{terminal}_location"))
            ),
            departure_time=as_str(data.get("departure_time")),
            arrival_time=as_str(data.get("arrival_time")),
            tags=as_str_list(data.get("tags")),
            products=[OtaProduct.from_dict(kind, p) for p in as_objects(data.get("products"))],
        )


# ---------------------------------------------------------------------------------------
# Orders

ORDER_TYPES = ("delivery", "instore", "hotel", "attraction", "flight", "train")
# The label of ``store_id`` in printed orders, by order type.
PROVIDER_LABEL = {
    "delivery": "store_id",
    "instore": "shop_id",
    "hotel": "hotel_id",
    "attraction": "attraction_id",
    "flight": "flight_id",
    "train": "train_id",
}

Product = StoreProduct | ShopProduct | OtaProduct


@dataclass
class Order:
    """An order of any type. ``products`` holds plain dicts for records loaded from
    the task data and product objects for records created by a tool (they print
    differently)."""

    order_id: str
    order_type: str
    user_id: str
    store_id: str
    total_price: float
    status: str
    products: Sequence[Product | JsonValue] = field(default_factory=list)
    note: str = ""
    location: Location | None = None
    dispatch_time: str = ""
    shipping_time: float | None = 0.0
    delivery_time: str = ""
    create_time: str = ""
    update_time: str = ""

    def __post_init__(self) -> None:
        if not self.update_time:
            self.update_time = self.create_time

    @classmethod
    def from_dict(cls, data: JsonMapping) -> Order:
        shipping = data.get("shipping_time", 0.0)
        return cls(
            order_id=as_str(data.get("order_id")),
            order_type=as_str(data.get("order_type")),
            user_id=as_str(data.get("user_id")),
            store_id=as_str(data.get("store_id")),
            total_price=as_float(data.get("total_price", 0.0) or 0.0),
            status=as_str(data.get("status")),
            products=list(list_field(data.get("products"))),
            note=as_str(data.get("note")),
            location=optional_location(data.get("location")),
            dispatch_time=as_str(data.get("dispatch_time")),
            shipping_time=None if shipping is None else as_float(shipping),
            delivery_time=as_str(data.get("delivery_time")),
            create_time=as_str(data.get("create_time")),
            update_time=as_str(data.get("update_time")),
        )

    def to_dict(self) -> JsonObject:
        return {
            "order_id": self.order_id,
            "order_type": self.order_type,
            "user_id": self.user_id,
            "store_id": self.store_id,
            "note": self.note,
            "location": self.location.to_dict() if self.location else None,
            "dispatch_time": self.dispatch_time,
            "shipping_time": self.shipping_time,
            "delivery_time": self.delivery_time,
            "total_price": self.total_price,
            "create_time": self.create_time,
            "update_time": self.update_time,
            "status": self.status,
            "products": [
                p.to_dict()
                if isinstance(p, (StoreProduct, ShopProduct, OtaProduct))
                else copy.deepcopy(p)
                for p in self.products
            ],
        }


Record = Order | BookInfo | ReservationInfo


def record_to_dict(record: Record) -> JsonObject:
    return record.to_dict()


# ---------------------------------------------------------------------------------------
# The database


@dataclass
class VitaDatabase:
    """Everything one episode's tools read and write."""

    scenario: str
    time: str
    user_id: str
    weather: list[Weather]
    location: list[Location]
    user_historical_behaviors: JsonValue
    orders: dict[str, Order]
    stores: dict[str, Store] = field(default_factory=dict)
    shops: dict[str, Shop] = field(default_factory=dict)
    books: dict[str, BookInfo] = field(default_factory=dict)
    reservations: dict[str, ReservationInfo] = field(default_factory=dict)
    hotels: dict[str, Hotel] = field(default_factory=dict)
    attractions: dict[str, Attraction] = field(default_factory=dict)
    flights: dict[str, Transport] = field(default_factory=dict)
    trains: dict[str, Transport] = field(default_factory=dict)
    products: dict[str, Product] = field(default_factory=dict)
    addresses: dict[str, Location] = field(default_factory=dict)
    created: list[Record] = field(default_factory=list)
    _id_counter: int = 0

    # -- construction ------------------------------------------------------------------

    @classmethod
    def build(cls, environment: JsonMapping, scenario: str) -> VitaDatabase:
        """A fresh database for one episode (the task dict is never modified)."""
        if scenario not in SCENARIOS:
            raise ValueError(
                f"unknown VitaBench scenario {scenario!r}; expected one of {SCENARIOS}"
            )
        env = copy.deepcopy(environment or {})
        domains = CROSS_DOMAINS if scenario == "cross" else (scenario,)
        keys = {key for domain in domains for key in DOMAIN_KEYS[domain]}
        data = {key: env.get(key) for key in keys}
        db = cls(
            scenario=scenario,
            time=as_str(data.get("time")),
            user_id=as_str(data.get("user_id")),
            weather=[Weather.from_dict(w) for w in as_objects(data.get("weather"))],
            location=[Location.from_dict(loc) for loc in as_objects(data.get("location"))],
            user_historical_behaviors=data.get("user_historical_behaviors") or {},
            orders={k: Order.from_dict(v) for k, v in objects_by_key(data.get("orders")).items()},
        )
        if "stores" in keys:
            db.stores = {
                k: Store.from_dict(v) for k, v in objects_by_key(data.get("stores")).items()
            }
        if "shops" in keys:
            db.shops = {k: Shop.from_dict(v) for k, v in objects_by_key(data.get("shops")).items()}
            db.books = {
                k: BookInfo.from_dict(v) for k, v in objects_by_key(data.get("books")).items()
            }
            db.reservations = {
                k: ReservationInfo.from_dict(v)
                for k, v in objects_by_key(data.get("reservations")).items()
            }
        if "hotels" in keys:
            db.hotels = {
                k: Hotel.from_dict(v) for k, v in objects_by_key(data.get("hotels")).items()
            }
            db.attractions = {
                k: Attraction.from_dict(v)
                for k, v in objects_by_key(data.get("attractions")).items()
            }
            db.flights = {
                k: Transport.from_dict("flight", v)
                for k, v in objects_by_key(data.get("flights")).items()
            }
            db.trains = {
                k: Transport.from_dict("train", v)
                for k, v in objects_by_key(data.get("trains")).items()
            }
        db._build_indexes()
        return db

    def _build_indexes(self) -> None:
        places: list[Store | Shop | Hotel | Attraction] = [
            *self.stores.values(),
            *self.shops.values(),
            *self.hotels.values(),
            *self.attractions.values(),
        ]
        transports = [*self.flights.values(), *self.trains.values()]
        sellers: list[Store | Shop | Hotel | Attraction | Transport] = [*places, *transports]
        for seller in sellers:
            for product in seller.products:
                self.products[product.product_id] = product

        for loc in self.location:
            self.add_address(loc)
        for order in self.orders.values():
            if order.location is not None:
                self.add_address(order.location)
        for place in places:
            self.add_address(place.location)
        for transport in transports:
            self.add_address(transport.departure_location)
            self.add_address(transport.arrival_location)

    def add_address(self, location: Location) -> None:
        # Plain dict assignment: a repeated address keeps its first place, last value.
        self.addresses[location.address] = location

    # -- generated ids -----------------------------------------------------------------

    def new_id(self, prefix: str) -> str:
        """A fresh record id ``prefix`` + 10 hex digits, deterministic per episode."""
        taken = set(self.orders) | set(self.books) | set(self.reservations)
        while True:
            self._id_counter += 1
            seed = f"{prefix}|{self.user_id}|{self.time}|{self._id_counter}"
            candidate = prefix + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:10]
            if candidate not in taken:
                return candidate

    # -- views -------------------------------------------------------------------------

    def all_records(self) -> list[Record]:
        return [*self.orders.values(), *self.books.values(), *self.reservations.values()]
