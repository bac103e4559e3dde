"""The text forms the agent reads for every VitaBench record.

These templates are part of the benchmark's interface and are reproduced exactly,
including their irregular punctuation (missing closing parentheses, trailing
comma-space, no space after some commas). Values print with Python's ``str``:
floats as ``25.0``, lists as ``['a', 'b']``, booleans as ``True``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..database import (
    PROVIDER_LABEL,
    Attraction,
    BookInfo,
    Hotel,
    Location,
    Order,
    OtaProduct,
    ReservationInfo,
    Shop,
    ShopProduct,
    Store,
    StoreProduct,
    Transport,
    Weather,
)


def location_text(location: Location) -> str:
    """How delivery and in-store records print a location."""
    return f"{location.address} longitude:{location.longitude},latitude:{location.latitude}"


def ota_location_text(location: Location) -> str:
    """How OTA records print a location (the data model's default string form)."""
    return (
        f"address={location.address!r} longitude={location.longitude} latitude={location.latitude}"
    )


def weather_text(weather: Weather) -> str:
    low, high = (weather.temperature + [None, None])[:2]
    return (
        f"city: {weather.city}, weather: {weather.category}, datetime: {weather.datetime}, "
        f"temperature: {low}~{high}, humidity: {weather.humidity}"
    )


# -- delivery --------------------------------------------------------------------------


def store_product_text(product: StoreProduct) -> str:
    return (
        f"StoreProduct(store_name={product.store_name}, store_id={product.store_id}, "
        f"product_name={product.name}, product_id={product.product_id}, "
        f"attributes={product.attributes}, quantity={product.quantity}, "
        f"price={product.price}, tags={product.tags})"
    )


def store_short_text(store: Store) -> str:
    return (
        f"Store(name={store.name}, store_id={store.store_id}, score={store.score}, "
        f"location={location_text(store.location)}, tags={store.tags})"
    )


def store_long_text(store: Store) -> str:
    # The products follow the closed short form and nothing closes after them.
    products = "\n".join(store_product_text(p) for p in store.products)
    return f"{store_short_text(store)}, products={products}"


# -- in-store --------------------------------------------------------------------------


def shop_product_text(product: ShopProduct) -> str:
    return (
        f"ShopProduct(shop_id={product.shop_id}, product_id={product.product_id}, "
        f"name={product.name}, price={product.price}, quantity={product.quantity}, "
        f"tags={product.tags})"
    )


def _shop_fields(shop: Shop) -> str:
    return (
        f"Shop(shop_name={shop.shop_name}, shop_id={shop.shop_id}, score={shop.score}, "
        f"location={location_text(shop.location)}, tags={shop.tags}, "
        f"enable_book={shop.enable_book}, book_price={shop.book_price}, "
        f"enable_reservation={shop.enable_reservation}"
    )


def shop_short_text(shop: Shop) -> str:
    return _shop_fields(shop) + ")"


def shop_long_text(shop: Shop) -> str:
    products = "\n".join(shop_product_text(p) for p in shop.products)
    return f"{_shop_fields(shop)}, products={products})"


def book_text(book: BookInfo) -> str:
    return (
        f"BookInfo(book_id={book.book_id},shop_id={book.shop_id}, book_time={book.book_time}, "
        f"customer_id={book.customer_id}, customer_count={book.customer_count}, "
        f"book_price={book.book_price}, status={book.status}"
    )


def reservation_text(reservation: ReservationInfo) -> str:
    return (
        f"ReservationInfo(reservation_id={reservation.reservation_id},"
        f"shop_id={reservation.shop_id}, reservation_time={reservation.reservation_time}, "
        f"customer_id={reservation.customer_id}, customer_count={reservation.customer_count}, "
        f"status={reservation.status}"
    )


# -- OTA -------------------------------------------------------------------------------

_OTA_PRODUCT_FORMS = {
    "hotel": ("HotelProduct", "room_type", "room_id"),
    "attraction": ("AttractionProduct", "ticket_type", "attraction_id"),
    "flight": ("FlightProduct", "seat_type", "seat_id"),
    "train": ("TrainProduct", "seat_type", "seat_id"),
}


def ota_product_text(product: OtaProduct) -> str:
    class_name, variant_label, id_label = _OTA_PRODUCT_FORMS[product.kind]
    return (
        f"{class_name}({variant_label}={product.variant}, date={product.date}, "
        f"price={product.price}, quantity={product.quantity}, {id_label}={product.product_id})"
    )


def _ota_products_text(products: list[OtaProduct]) -> str:
    return "\n".join(ota_product_text(p) for p in products)


def _hotel_fields(hotel: Hotel) -> str:
    return (
        f"Hotel(hotel_id={hotel.hotel_id}, hotel_name={hotel.hotel_name}, score={hotel.score}, "
        f"star_rating={hotel.star_rating}, location={ota_location_text(hotel.location)}, "
        f"tags={hotel.tags}"
    )


def hotel_short_text(hotel: Hotel) -> str:
    return _hotel_fields(hotel) + ")"


def hotel_long_text(hotel: Hotel) -> str:
    return f"{_hotel_fields(hotel)}, products={_ota_products_text(hotel.products)})"


def _attraction_fields(attraction: Attraction) -> str:
    return (
        f"Attraction(attraction_id={attraction.attraction_id}, "
        f"attraction_name={attraction.attraction_name}, "
        f"location={ota_location_text(attraction.location)}, "
        f"description={attraction.description}, score={attraction.score}, "
        f"opening_hours={attraction.opening_hours}, "
    )


def attraction_short_text(attraction: Attraction) -> str:
    return _attraction_fields(attraction)


def attraction_long_text(attraction: Attraction) -> str:
    return (
        f"{_attraction_fields(attraction)}ticket_price={attraction.ticket_price}, "
        f"products={_ota_products_text(attraction.products)})"
    )


def _transport_fields(transport: Transport) -> str:
    if transport.kind == "flight":
        head, terminal = "Flight", "airport"
    else:
        head, terminal = "Train", "station"
    kind = transport.kind
    return (
        f"{head}({kind}_id={transport.transport_id}, {kind}_number={transport.number}, "
        f"departure_city={transport.departure_city}, arrival_city={transport.arrival_city}, "
        f"departure_{terminal}_location={ota_location_text(transport.departure_location)}, "
        f"arrival_{terminal}_location={ota_location_text(transport.arrival_location)}, "
        f"departure_time={transport.departure_time}, arrival_time={transport.arrival_time}, "
        f"tags={transport.tags}"
    )


def transport_short_text(transport: Transport) -> str:
    return _transport_fields(transport) + ")"


def transport_long_text(transport: Transport) -> str:
    return f"{_transport_fields(transport)}, products={_ota_products_text(transport.products)})"


# -- orders ----------------------------------------------------------------------------


def product_item_text(product: object) -> str:
    """One element of an order's product list, as Python prints a list element."""
    if isinstance(product, StoreProduct):
        return store_product_text(product)
    if isinstance(product, ShopProduct):
        return shop_product_text(product)
    if isinstance(product, OtaProduct):
        return ota_product_text(product)
    return repr(product)  # a plain dict loaded from the task data


def product_list_text(products: Sequence[object]) -> str:
    return "[" + ", ".join(product_item_text(p) for p in products) + "]"


def order_short_text(order: Order) -> str:
    label = PROVIDER_LABEL.get(order.order_type, "store_id")
    return (
        f"Order(order_id:{order.order_id}, order_type:{order.order_type}, "
        f"user_id:{order.user_id}, {label}:{order.store_id}, total_price:{order.total_price}, "
        f"create_time:{order.create_time}, update_time:{order.update_time}, "
        f"status:{order.status}, "
    )


def order_long_text(order: Order) -> str:
    if order.order_type == "delivery":
        return (
            f"Order(order_id:{order.order_id}, order_type:{order.order_type}, "
            f"user_id:{order.user_id}, store_id:{order.store_id}, "
            f"dispatch_time:{order.dispatch_time}, shipping_time:{order.shipping_time}, "
            f"delivery_time:{order.delivery_time}, total_price:{order.total_price}, "
            f"create_time:{order.create_time}, update_time:{order.update_time}, "
            f"note:{order.note}, status:{order.status}, "
            f"products:{product_list_text(order.products)})"
        )
    label = PROVIDER_LABEL.get(order.order_type, "store_id")
    return (
        f"Order(order_id:{order.order_id}, order_type:{order.order_type}, "
        f"user_id:{order.user_id}, {label}:{order.store_id}, total_price:{order.total_price}, "
        f"create_time:{order.create_time}, update_time:{order.update_time}, "
        f"status:{order.status}, products:{product_list_text(order.products)})"
    )
