"""The 66 VitaBench tools as the agent sees them: names, parameters, descriptions.

Names, parameter names, JSON types, defaults, required lists, domains and kinds
are the benchmark's interface and are kept exactly (a test checks them against
the benchmark's stripped parameter schemas). Descriptions are our own wording of
what each tool does, laid out the benchmark's way: a one-line summary, a blank
line, then ``Preconditions:`` and ``Postconditions:`` bullet lists.

Parameters follow the benchmark's schema rules: optional parameters keep their
default; every parameter has a Title Case ``title``; a few parameters have no
description (delivery ``product_id``/``product_ids``/``product_cnts`` and
``create_hotel_order.room_id``), as in the benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.types import ToolSchema

DOMAIN_ORDER = ("delivery", "instore", "ota")
SCENARIO_DOMAINS: dict[str, tuple[str, ...]] = {
    "delivery": ("delivery",),
    "instore": ("instore",),
    "ota": ("ota",),
    "cross": DOMAIN_ORDER,
}

_REQUIRED = object()  # marks a parameter without a default


@dataclass(frozen=True)
class ParamSpec:
    name: str
    type: str  # "string", "number", "integer", or "array<string>" / "array<integer>"
    description: str | None = None
    default: object = _REQUIRED  # a JSON value when given

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def json_schema(self) -> dict[str, object]:
        schema: dict[str, object] = {}
        if self.type.startswith("array<"):
            schema["type"] = "array"
            schema["items"] = {"type": self.type[len("array<") : -1]}
        else:
            schema["type"] = self.type
        schema["title"] = self.name.replace("_", " ").title()
        if self.description is not None:
            schema["description"] = self.description
        if not self.required:
            schema["default"] = self.default
        return schema


@dataclass(frozen=True)
class ToolSpec:
    name: str
    domain: str  # "general" or one of DOMAIN_ORDER
    kind: str  # "generic", "read" or "write"
    summary: str
    preconditions: tuple[str, ...]
    postconditions: tuple[str, ...]
    params: tuple[ParamSpec, ...] = ()
    # The two no-argument tools also carry an Args/Returns block in the benchmark.
    args_returns: str | None = None

    def description(self) -> str:
        lines = [self.summary, "", "Preconditions:"]
        lines += [f"    - {item}" for item in self.preconditions]
        lines.append("Postconditions:")
        lines += [f"    - {item}" for item in self.postconditions]
        text = "\n".join(lines)
        if self.args_returns:
            text += "\n\n" + self.args_returns
        return text

    def parameters_schema(self) -> dict[str, object]:
        return {
            "type": "object",
            "title": "parameters",
            "properties": {p.name: p.json_schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
        }

    def openai_schema(self) -> ToolSchema:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description(),
                "parameters": self.parameters_schema(),
            },
        }


P = ParamSpec

_USER_ID = "The user's id (from the user's historical behaviours or from the user)."
_ORDER_ID = "The id of the order."
_KEYWORDS = "Keywords describing what is wanted; they are matched together."
_TIME = "in the format yyyy-mm-dd HH:MM:SS."
_DATE = "Date in the format yyyy-mm-dd."
_STATUS = "Order status to list (unpaid, paid, cancelled, ...)."


def _lookup(what: str) -> tuple[str, ...]:
    return (f"The {what} id is known (from search results or from the user).",)


GENERAL_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "longitude_latitude_to_distance",
        "general",
        "generic",
        "Compute the straight-line distance in metres between two longitude/latitude points.",
        ("Both points are given as decimal longitude and latitude.",),
        ("Returns the distance in metres, rounded to whole metres.",),
        (
            P("longitude1", "number", "Longitude of the first point."),
            P("latitude1", "number", "Latitude of the first point."),
            P("longitude2", "number", "Longitude of the second point."),
            P("latitude2", "number", "Latitude of the second point."),
        ),
    ),
    ToolSpec(
        "weather",
        "general",
        "generic",
        "Look up the weather of the city matching an address over an inclusive date range.",
        ("Dates are in the format yyyy-mm-dd.", "The address names a city or a place in it."),
        ("Returns one weather record per day found in the range.",),
        (
            P("address", "string", "A city name or an address inside the city."),
            P("date_start", "string", "First day of the range, yyyy-mm-dd."),
            P("date_end", "string", "Last day of the range, yyyy-mm-dd."),
        ),
    ),
    ToolSpec(
        "address_to_longitude_latitude",
        "general",
        "generic",
        "Convert an address into its longitude and latitude.",
        ("The address is as complete as possible.",),
        ("Returns [longitude, latitude] of the best-matching known address.",),
        (P("address", "string", "The address to locate."),),
    ),
    ToolSpec(
        "get_date_holiday_info",
        "general",
        "generic",
        "Tell whether a date is a public holiday in China and which one.",
        ("The date is in the format yyyy-mm-dd.",),
        ("Returns the holiday name, or says the date is not a holiday.",),
        (P("date", "string", _DATE),),
    ),
    ToolSpec(
        "get_holiday_date",
        "general",
        "generic",
        "Find the date of a named festival in a given year.",
        ("The year is given as a four-digit string.",),
        ("Returns the festival's date as yyyy-mm-dd, or says it is unknown.",),
        (
            P("year", "string", "The year, e.g. 2025."),
            P("holiday_name", "string", "The festival's name."),
        ),
    ),
    ToolSpec(
        "get_user_historical_behaviors",
        "general",
        "read",
        "Get the user's profile and historical behaviours.",
        ("None.",),
        ("Returns the user's id, addresses, habits and past orders per scenario.",),
        (),
        "Args:\n    None\n\nReturns:\n    The user's historical behaviours.",
    ),
    ToolSpec(
        "get_user_all_orders",
        "general",
        "read",
        "Get all orders of the user.",
        ("None.",),
        ("Returns every order with its details, one per line.",),
        (),
        "Args:\n    None\n\nReturns:\n    All orders of the user.",
    ),
    ToolSpec(
        "get_nearby",
        "general",
        "read",
        "List the stores, shops, hotels, attractions, flights and trains within a radius of a point.",
        ("The point is given as decimal longitude and latitude.",),
        ("Returns every provider within the radius, or says none was found.",),
        (
            P("longitude", "number", "Longitude of the centre."),
            P("latitude", "number", "Latitude of the centre."),
            P("range", "number", "Search radius in metres."),
        ),
    ),
)

DELIVERY_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "cancel_delivery_order",
        "delivery",
        "write",
        "Cancel a delivery order.",
        ("The order exists and is a delivery order.", "The order is not already cancelled."),
        ("The order's status becomes cancelled.",),
        (P("order_id", "string", _ORDER_ID),),
    ),
    ToolSpec(
        "create_delivery_order",
        "delivery",
        "write",
        "Create a delivery order of one or more dishes from one store.",
        (
            "The user id is the current user's.",
            "The store and every dish exist; the dish ids and counts lists have the same length.",
            "Every count is greater than 0.",
            "The address is not empty and can be located.",
            "The dispatch time is in the format yyyy-mm-dd HH:MM:SS and not in the past.",
        ),
        (
            "An unpaid order is created with its delivery time and total price.",
            "Returns the order's details.",
        ),
        (
            P("user_id", "string", _USER_ID),
            P("store_id", "string", "The id of the store."),
            P("product_ids", "array<string>"),
            P("product_cnts", "array<integer>"),
            P("address", "string", "The delivery address."),
            P("dispatch_time", "string", f"When the store should dispatch the order, {_TIME}"),
            P(
                "attributes",
                "array<string>",
                "Optional chosen attributes (flavour, size, ...) of each dish, in order.",
                None,
            ),
            P("note", "string", "Optional note for the store.", ""),
        ),
    ),
    ToolSpec(
        "delivery_distance_to_time",
        "delivery",
        "generic",
        "Estimate the rider's delivery time in minutes for a distance in metres.",
        ("The distance is a number of metres.",),
        ("Returns the estimated delivery time in minutes.",),
        (P("distance", "number", "The delivery distance in metres."),),
    ),
    ToolSpec(
        "delivery_product_search_recommand",
        "delivery",
        "read",
        "Search the delivery dishes best matching some keywords.",
        ("The keywords describe the dish, e.g. its name, flavour or store.",),
        ("Returns the dishes ranked from the best match.",),
        (P("keywords", "array<string>", _KEYWORDS),),
    ),
    ToolSpec(
        "delivery_store_search_recommand",
        "delivery",
        "read",
        "Search the delivery stores best matching some keywords.",
        ("The keywords describe the store, e.g. its cuisine or features.",),
        ("Returns the stores ranked from the best match.",),
        (P("keywords", "array<string>", _KEYWORDS),),
    ),
    ToolSpec(
        "get_delivery_order_detail",
        "delivery",
        "read",
        "Get the details of a delivery order.",
        ("The order id is not empty and names a delivery order.",),
        ("Returns the order's details including its dishes.",),
        (P("order_id", "string", _ORDER_ID),),
    ),
    ToolSpec(
        "get_delivery_order_status",
        "delivery",
        "read",
        "Get the status of a delivery order.",
        ("The order exists and is a delivery order.",),
        ("Returns the order's status.",),
        (P("order_id", "string", _ORDER_ID),),
    ),
    ToolSpec(
        "get_delivery_product_info",
        "delivery",
        "read",
        "Get the details of a delivery dish.",
        _lookup("dish"),
        ("Returns the dish's store, name, attributes, price and tags.",),
        (P("product_id", "string"),),
    ),
    ToolSpec(
        "get_delivery_store_info",
        "delivery",
        "read",
        "Get the details of a delivery store, including its menu.",
        _lookup("store"),
        ("Returns the store's details and every dish it sells.",),
        (P("store_id", "string", "The id of the store."),),
    ),
    ToolSpec(
        "modify_delivery_order",
        "delivery",
        "write",
        "Replace the note of a delivery order.",
        ("The order exists and is a delivery order.",),
        ("The order's note is replaced.",),
        (P("order_id", "string", _ORDER_ID), P("note", "string", "The new note.")),
    ),
    ToolSpec(
        "pay_delivery_order",
        "delivery",
        "write",
        "Pay a delivery order.",
        ("The order exists, is a delivery order and is unpaid.",),
        ("The order's status becomes paid.",),
        (P("order_id", "string", _ORDER_ID),),
    ),
    ToolSpec(
        "search_delivery_orders",
        "delivery",
        "read",
        "List the user's delivery orders having a given status.",
        ("The user id is the current user's.",),
        ("Returns the matching orders, or says there are none.",),
        (P("user_id", "string", _USER_ID), P("status", "string", _STATUS, "unpaid")),
    ),
)

_SHOP_ID = "The id of the shop."
_BOOK_ID = "The id of the table booking."
_RESERVATION_ID = "The id of the reservation."

INSTORE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "create_instore_product_order",
        "instore",
        "write",
        "Buy a package or voucher of a shop.",
        (
            "The user id is the current user's.",
            "The shop exists and sells the product.",
            "The quantity is greater than 0.",
        ),
        ("An unpaid order is created.", "Returns the order's details."),
        (
            P("user_id", "string", _USER_ID),
            P("shop_id", "string", _SHOP_ID),
            P("product_id", "string", "The id of the package or voucher."),
            P("quantity", "integer", "How many to buy.", 1),
        ),
    ),
    ToolSpec(
        "get_instore_books",
        "instore",
        "read",
        "List the user's table bookings.",
        ("The user id is the current user's.",),
        ("Returns the user's table bookings, or says there are none.",),
        (P("user_id", "string", _USER_ID),),
    ),
    ToolSpec(
        "get_instore_orders",
        "instore",
        "read",
        "List the user's in-store orders.",
        ("The user id is the current user's.",),
        ("Returns the user's in-store orders, or says there are none.",),
        (P("user_id", "string", _USER_ID),),
    ),
    ToolSpec(
        "get_instore_reservations",
        "instore",
        "read",
        "List the user's service reservations.",
        ("The user id is the current user's.",),
        ("Returns the user's reservations, or says there are none.",),
        (P("user_id", "string", _USER_ID),),
    ),
    ToolSpec(
        "instore_book",
        "instore",
        "write",
        "Book a table or seat at a shop that takes bookings.",
        (
            "The user id is the current user's.",
            "The shop exists and supports table booking.",
            "The number of customers is greater than 0.",
            "The time is in the format yyyy-mm-dd HH:MM:SS.",
        ),
        (
            "A booking is created; it is unpaid when the shop asks for a deposit, else paid.",
            "Returns the booking's details.",
        ),
        (
            P("user_id", "string", _USER_ID),
            P("shop_id", "string", _SHOP_ID),
            P("time", "string", f"The booked time, {_TIME}"),
            P("customer_count", "integer", "Number of customers.", 1),
        ),
    ),
    ToolSpec(
        "instore_cancel_book",
        "instore",
        "write",
        "Cancel a table booking.",
        ("The booking exists and is not already cancelled.",),
        ("The booking's status becomes cancelled.",),
        (P("book_id", "string", _BOOK_ID),),
    ),
    ToolSpec(
        "instore_cancel_order",
        "instore",
        "write",
        "Cancel an in-store order.",
        ("The order exists, is an in-store order and is not already cancelled.",),
        ("The order's status becomes cancelled.",),
        (P("order_id", "string", _ORDER_ID),),
    ),
    ToolSpec(
        "instore_cancel_reservation",
        "instore",
        "write",
        "Cancel a service reservation.",
        ("The reservation exists and is not already cancelled.",),
        ("The reservation's status becomes cancelled.",),
        (P("reservation_id", "string", _RESERVATION_ID),),
    ),
    ToolSpec(
        "instore_modify_reservation",
        "instore",
        "write",
        "Change the time and number of customers of a service reservation.",
        (
            "The reservation exists and is neither consumed nor cancelled.",
            "The time is in the format yyyy-mm-dd HH:MM:SS.",
            "The number of customers is at least 0.",
        ),
        ("The reservation's time and number of customers are replaced.",),
        (
            P("reservation_id", "string", _RESERVATION_ID),
            P("time", "string", f"The new time, {_TIME}"),
            P("customer_count", "integer", "The new number of customers.", 0),
        ),
    ),
    ToolSpec(
        "instore_product_search_recommend",
        "instore",
        "read",
        "Search the in-store packages and vouchers best matching some keywords.",
        ("The keywords describe the package, e.g. its service or features.",),
        ("Returns the packages ranked from the best match.",),
        (P("keywords", "array<string>", _KEYWORDS),),
    ),
    ToolSpec(
        "instore_reservation",
        "instore",
        "write",
        "Reserve a service time at a shop.",
        (
            "The user id is the current user's.",
            "The shop exists.",
            "The time is in the format yyyy-mm-dd HH:MM:SS.",
            "The number of customers is greater than 0.",
        ),
        ("A reservation is created.", "Returns the reservation's details."),
        (
            P("user_id", "string", _USER_ID),
            P("shop_id", "string", _SHOP_ID),
            P("time", "string", f"The reserved time, {_TIME}"),
            P("customer_count", "integer", "Number of customers.", 1),
        ),
    ),
    ToolSpec(
        "instore_shop_search_recommend",
        "instore",
        "read",
        "Search the shops best matching some keywords; useful when the need is still vague.",
        ("The keywords describe the shop, e.g. its kind or features.",),
        ("Returns the shops ranked from the best match.",),
        (P("keywords", "array<string>", _KEYWORDS),),
    ),
    ToolSpec(
        "pay_instore_book",
        "instore",
        "write",
        "Pay the deposit of a table booking.",
        ("The booking exists and is unpaid.",),
        ("The booking's status becomes paid.",),
        (P("book_id", "string", _BOOK_ID),),
    ),
    ToolSpec(
        "pay_instore_order",
        "instore",
        "write",
        "Pay an in-store order.",
        ("The order exists, is an in-store order and is unpaid.",),
        ("The order's status becomes paid.",),
        (P("order_id", "string", _ORDER_ID),),
    ),
    ToolSpec(
        "search_instore_book",
        "instore",
        "read",
        "Get one of the user's table bookings, or all of them when no id is given.",
        ("The user id is the current user's.",),
        ("Returns the booking(s) found.",),
        (P("user_id", "string", _USER_ID), P("book_id", "string", _BOOK_ID, None)),
    ),
    ToolSpec(
        "search_instore_reservation",
        "instore",
        "read",
        "Get one of the user's reservations, or all of them when no id is given.",
        ("The user id is the current user's.",),
        ("Returns the reservation(s) found.",),
        (
            P("user_id", "string", _USER_ID),
            P("reservation_id", "string", _RESERVATION_ID, None),
        ),
    ),
)


def _cancel(kind: str) -> ToolSpec:
    return ToolSpec(
        f"cancel_{kind}_order",
        "ota",
        "write",
        f"Cancel a {kind} order; a paid order is refunded.",
        (
            "The user id is the current user's.",
            f"The order exists, is a {kind} order and is not already cancelled.",
        ),
        ("The order's status becomes cancelled.", "Returns the refunded amount."),
        (P("order_id", "string", _ORDER_ID), P("user_id", "string", _USER_ID)),
    )


def _pay(kind: str) -> ToolSpec:
    return ToolSpec(
        f"pay_{kind}_order",
        "ota",
        "write",
        f"Pay a {kind} order.",
        ("The order exists and is unpaid.",),
        ("The order's status becomes paid.",),
        (P("order_id", "string", _ORDER_ID),),
    )


def _order_detail(kind: str) -> ToolSpec:
    return ToolSpec(
        f"get_{kind}_order_detail",
        "ota",
        "read",
        f"Get the details of a {kind} order.",
        (f"The order exists and is a {kind} order.",),
        ("Returns the order's details including its products.",),
        (P("order_id", "string", _ORDER_ID),),
    )


def _search_orders(kind: str) -> ToolSpec:
    return ToolSpec(
        f"search_{kind}_order",
        "ota",
        "read",
        f"List the user's {kind} orders, optionally for one date and status.",
        ("The user id is the current user's.", "A given date is in the format yyyy-mm-dd."),
        ("Returns the matching orders.",),
        (
            P("user_id", "string", _USER_ID),
            P("date", "string", "Optional date of the booked product, yyyy-mm-dd.", None),
            P("status", "string", _STATUS, "paid"),
        ),
    )


def _dated_create(kind: str, item: str, item_param: str) -> ToolSpec:
    return ToolSpec(
        f"create_{kind}_order",
        "ota",
        "write",
        f"Buy {item}s of a {kind} for a date.",
        (
            "The user id is the current user's.",
            f"The {kind} sells this {item} on that date with enough stock.",
            "The quantity is greater than 0.",
        ),
        ("An unpaid order is created.", "Returns the order's details."),
        (
            P(f"{kind}_id", "string", f"The id of the {kind}."),
            P(item_param, "string", f"The id of the {item} product."),
            P("user_id", "string", _USER_ID),
            P("date", "string", _DATE),
            P("quantity", "integer", f"How many {item}s to buy."),
        ),
    )


def _info(kind: str, contents: str) -> ToolSpec:
    return ToolSpec(
        f"get_ota_{kind}_info",
        "ota",
        "read",
        f"Get the details of a {kind}, including its {contents}.",
        _lookup(kind),
        (f"Returns the {kind}'s details and its {contents}.",),
        (P(f"{kind}_id", "string", f"The id of the {kind}."),),
    )


def _modify(kind: str) -> ToolSpec:
    return ToolSpec(
        f"modify_{kind}_order",
        "ota",
        "write",
        f"Move a paid {kind} ticket order to another date, keeping the seat type.",
        (
            "The user id is the current user's and owns the order.",
            f"The order is a paid {kind} order with a single ticket line.",
            "The new date is in the format yyyy-mm-dd and has enough seats of that type.",
        ),
        (
            "The order moves to the new date and price.",
            "A higher price makes the order unpaid; a lower one is refunded.",
        ),
        (
            P("order_id", "string", _ORDER_ID),
            P("user_id", "string", _USER_ID),
            P("new_date", "string", "The new departure date, yyyy-mm-dd."),
        ),
    )


_CITY = "The city to search in."

OTA_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "attractions_search_recommend",
        "ota",
        "read",
        "Search the attractions of a city best matching some keywords.",
        ("The city name is given.",),
        ("Returns the city's attractions ranked from the best match.",),
        (P("city_name", "string", _CITY), P("key_words", "array<string>", _KEYWORDS)),
    ),
    _cancel("attraction"),
    _cancel("flight"),
    _cancel("hotel"),
    _cancel("train"),
    _dated_create("attraction", "ticket", "ticket_id"),
    _dated_create("flight", "seat", "seat_id"),
    ToolSpec(
        "create_hotel_order",
        "ota",
        "write",
        "Book one room product of a hotel.",
        ("The user id is the current user's.", "The room is available."),
        ("An unpaid order for one room is created.", "Returns the order's details."),
        (
            P("hotel_id", "string", "The id of the hotel."),
            P("room_id", "string"),
            P("user_id", "string", _USER_ID),
        ),
    ),
    _dated_create("train", "seat", "seat_id"),
    ToolSpec(
        "flight_search_recommend",
        "ota",
        "read",
        "Search the flights from one city to another.",
        ("Departure and destination cities are given.",),
        ("Returns the matching flights.",),
        (
            P("departure", "string", "The departure city."),
            P("destination", "string", "The destination city."),
        ),
    ),
    _order_detail("attraction"),
    _order_detail("flight"),
    _order_detail("hotel"),
    _info("attraction", "ticket products"),
    _info("flight", "seat products per date"),
    _info("hotel", "room products"),
    _info("train", "seat products per date"),
    _order_detail("train"),
    ToolSpec(
        "hotel_search_recommand",
        "ota",
        "read",
        "Search the hotels of a city, ranked against optional keywords.",
        ("The city name is given.",),
        ("Returns the city's hotels ranked from the best match.",),
        (
            P("city_name", "string", _CITY),
            P("key_words", "array<string>", "Optional keywords describing the hotel.", None),
        ),
    ),
    _modify("flight"),
    _modify("train"),
    _pay("attraction"),
    _pay("flight"),
    _pay("hotel"),
    _pay("train"),
    _search_orders("attraction"),
    _search_orders("flight"),
    _search_orders("hotel"),
    _search_orders("train"),
    ToolSpec(
        "train_ticket_search",
        "ota",
        "read",
        "Search the trains from one city to another that sell seats on a date.",
        ("Departure and destination cities are given.", "The date is in the format yyyy-mm-dd."),
        ("Returns one line per matching train and seat product.",),
        (
            P("departure", "string", "The departure city."),
            P("destination", "string", "The destination city."),
            P("date", "string", "The travel date, yyyy-mm-dd."),
        ),
    ),
)

ALL_TOOLS: tuple[ToolSpec, ...] = GENERAL_TOOLS + DELIVERY_TOOLS + INSTORE_TOOLS + OTA_TOOLS
TOOLS_BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in ALL_TOOLS}


def tools_for(scenario: str) -> list[ToolSpec]:
    """The scenario's tools in the order the agent gets them: general tools first,
    then each domain's tools in domain order."""
    domains = SCENARIO_DOMAINS[scenario]
    return [*GENERAL_TOOLS, *(t for d in domains for t in ALL_TOOLS if t.domain == d)]


def tool_schemas(scenario: str) -> list[ToolSchema]:
    return [tool.openai_schema() for tool in tools_for(scenario)]
