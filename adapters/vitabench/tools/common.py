"""What every VitaBench tool kit shares: the refusal signal and small checks.

The benchmark distinguishes two kinds of failure, and the agent sees the difference:

* a refusal (a failed precondition such as a wrong user id) comes back as the bare
  message, as an ordinary result;
* any other failure (an unknown id, a value of the wrong type) comes back as
  ``"Error: " + message`` and is flagged as an error.

Tools raise ``Refusal`` for the first kind and ``LookupFailure`` (or let Python's
own exceptions through) for the second; the environment turns both into results.
"""

from __future__ import annotations

import math
from datetime import datetime

from ..database import VitaDatabase

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
DATE_FORMAT = "%Y-%m-%d"
EARTH_RADIUS_M = 6371000


class Refusal(Exception):  # noqa: N818 - a refusal is a normal answer, not an error
    """A failed precondition: the message is returned to the agent as is."""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class LookupFailure(Exception):  # noqa: N818
    """A failed lookup: shown to the agent as ``Error: <message>``."""


def refuse_unless(condition: object, message: str) -> None:
    if not condition:
        raise Refusal(message)


def check_user(db: VitaDatabase, user_id: object) -> None:
    """The user check of every write tool (and of the user-scoped reads)."""
    refuse_unless(user_id, "User ID cannot be empty")
    refuse_unless(user_id == db.user_id, "User ID does not match")


def parses_as(text: object, fmt: str) -> bool:
    """Whether ``text`` is a string in the given strptime format."""
    if not isinstance(text, str):
        return False  # strptime raises TypeError
    try:
        datetime.strptime(text, fmt)
    except (TypeError, ValueError):
        return False
    return True


def haversine_m(lng1: float, lat1: float, lng2: float, lat2: float) -> float:
    """Great-circle distance in whole metres (as a float), 0.0 for identical points."""
    if lng1 == lng2 and lat1 == lat2:
        return 0.0
    lng1, lat1, lng2, lat2 = map(math.radians, (lng1, lat1, lng2, lat2))
    half_chord = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    )
    return float(round(2 * EARTH_RADIUS_M * math.asin(math.sqrt(half_chord))))
