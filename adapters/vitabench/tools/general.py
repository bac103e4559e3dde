"""The 8 general tools every VitaBench scenario exposes.

Tool methods are called with the model's JSON arguments as keyword arguments, so
the method and parameter names are the tool and parameter names the agent sees,
and a wrong or missing argument name gives Python's own ``TypeError`` text (with
this class's name in it), which is what the benchmark shows the agent.
"""

from __future__ import annotations

from datetime import datetime

import holidays

from ..database import Location, VitaDatabase
from . import templates
from .common import DATE_FORMAT, LookupFailure, haversine_m, parses_as, refuse_unless
from .festivals import festival_table
from .search import extract, ratio

# Geocoding and weather thresholds of the benchmark.
GEOCODE_MIN_SCORE = 30
GEOCODE_MIN_RATIO = 20
WEATHER_MIN_SCORE = 50
FESTIVAL_MIN_SCORE = 80

# Holiday names come in the run's language (never from the machine's locale).
HOLIDAY_LANGUAGE = {"zh": "zh_CN", "en": "en_US"}


class ToolKitBase:
    """General tools: geography, weather, calendar and the user's own records."""

    def __init__(self, db: VitaDatabase, language: str = "zh"):
        self.db = db
        self.language = language

    # -- shared helpers (not tools) ----------------------------------------------------

    def geocode(self, address: str) -> Location:
        """The known location best matching ``address``, or a LookupFailure."""
        # Best match first; equal scores keep index order, so the earliest address wins.
        ranked = extract(address, list(self.db.addresses))
        if ranked:
            best, score = ranked[0]
            if score >= GEOCODE_MIN_SCORE and ratio(address, best) >= GEOCODE_MIN_RATIO:
                return self.db.addresses[best]
        raise LookupFailure(f"Longitude and latitude not found for address {address}")

    # -- tools -------------------------------------------------------------------------

    def longitude_latitude_to_distance(
        self, longitude1: float, latitude1: float, longitude2: float, latitude2: float
    ) -> float:
        return haversine_m(longitude1, latitude1, longitude2, latitude2)

    def weather(self, address: str, date_start: str, date_end: str) -> str:
        refuse_unless(
            parses_as(date_start, DATE_FORMAT),
            f"Invalid date_start format. Expected yyyy-mm-dd, got: {date_start}",
        )
        refuse_unless(
            parses_as(date_end, DATE_FORMAT),
            f"Invalid date_end format. Expected yyyy-mm-dd, got: {date_end}",
        )
        cities = {w.city: w.city for w in self.db.weather}
        ranked = extract(address, list(cities))
        best_city, score = ranked[0]  # an empty weather list fails here, as in the benchmark
        if score < WEATHER_MIN_SCORE:
            raise LookupFailure(f"Weather information not found for {address}")
        start = datetime.strptime(date_start, DATE_FORMAT)
        end = datetime.strptime(date_end, DATE_FORMAT)
        records = [
            w
            for w in self.db.weather
            if w.city == best_city and start <= datetime.strptime(w.datetime, DATE_FORMAT) <= end
        ]
        if not records:
            return (
                f"No weather information found for {best_city} between {date_start} and {date_end}"
            )
        records.sort(key=lambda w: w.datetime)
        return "\n".join(templates.weather_text(w) for w in records)

    def address_to_longitude_latitude(self, address: str) -> list[float]:
        location = self.geocode(address)
        return [location.longitude, location.latitude]

    def get_date_holiday_info(self, date: str) -> str:
        refuse_unless(
            parses_as(date, DATE_FORMAT),
            f"Date format error, should be yyyy-mm-dd, actual: {date}",
        )
        day = datetime.strptime(date, DATE_FORMAT).date()
        calendar = holidays.China(years=day.year, language=HOLIDAY_LANGUAGE[self.language])
        name = calendar.get(day)
        if name is None:
            return f"Date {date} is not a holiday"
        return name

    def get_holiday_date(self, year: str, holiday_name: str) -> str:
        table = festival_table(self.language)
        if year not in table:
            return f"Holiday data for year {year} not found"
        names = table[year]
        ranked = extract(holiday_name, list(names))
        if ranked and ranked[0][1] >= FESTIVAL_MIN_SCORE:
            return names[ranked[0][0]]
        return f"Holiday named '{holiday_name}' not found in year {year}"

    def get_user_historical_behaviors(self) -> str:
        return str(self.db.user_historical_behaviors)

    def get_user_all_orders(self) -> str:
        if self.db.orders is None:
            return "User currently has no order information"
        return "\n".join(templates.order_long_text(o) for o in self.db.orders.values())

    def get_nearby(self, longitude: float, latitude: float, range: float) -> str:  # noqa: A002
        def within(location: Location) -> bool:
            distance = haversine_m(longitude, latitude, location.longitude, location.latitude)
            return distance <= range

        lines: list[str] = []
        lines += [
            templates.store_short_text(s) for s in self.db.stores.values() if within(s.location)
        ]
        lines += [
            templates.shop_short_text(s) for s in self.db.shops.values() if within(s.location)
        ]
        lines += [
            templates.hotel_short_text(h) for h in self.db.hotels.values() if within(h.location)
        ]
        lines += [
            templates.attraction_short_text(a)
            for a in self.db.attractions.values()
            if within(a.location)
        ]
        for transport in (*self.db.flights.values(), *self.db.trains.values()):
            if within(transport.departure_location) or within(transport.arrival_location):
                lines.append(templates.transport_short_text(transport))
        if not lines:
            return "No search results found"
        return "\n".join(lines)
