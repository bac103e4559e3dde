"""Environments that share one pristine copy of a domain database, row by row.

An airline database is ~66,000 Python objects (2,800 rows): unpickling a private
copy for every environment took ~100 ms, and hashing it at the end of an episode
~180 ms, against a few rows an episode ever reads or changes. So a large table
(a ``dict`` of row models, ``flights``, ``orders``, ...) of an environment's
database is a ``SharedRows``: a dict that starts holding the process's pristine
row objects, the same for every environment, and hands out a private copy of a row
(unpickled from that row's own pickle) the first time Python code reads it,
keeping the copy in its place. A tool that changes a row therefore changes its own
environment's copy, never the pristine one.

Two things rest on that:

- While the environment runs a tool tau2 declares leaves the databases as they are
  (``domains.unchanging_tools``; the same declaration the episode's final state
  already relies on), the tables lend their rows as they are: a search over every
  flight copies nothing.
- The database hash tau2 computes (sha256 of ``json.dumps(db.model_dump(),
  sort_keys=True, default=str)``) is assembled from each pristine row's JSON text,
  computed once, and the JSON of the rows that are not the pristine object (copied,
  added or replaced): the same text, so the same hash (checked against tau2's own
  when the pristine rows are built; a domain whose check fails keeps private
  copies of the whole database).

What reads a dict below Python (``json.dumps``, pydantic's ``model_dump``) sees the
rows as stored, pristine or copied: the values the environment holds. The ways a
dict hands out its values without calling its methods (``dict(t)``, ``{**t}``,
``t | u``) go through ``__iter__`` when a subclass defines it, and so through
``__getitem__``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import pickle
from _collections_abc import dict_items, dict_values
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from pydantic import BaseModel

# A table smaller than this is copied whole with its database (telecom's are).
MIN_SHARED_ROWS = 50


def canonical_json(value: object) -> str:
    """tau2's text for a dumped value (``get_dict_hash``): sorted keys, ``str`` for the rest."""
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class PristineTable:
    """One table's pristine rows, each row's pickle (its private copies come from
    it) and its entry in tau2's hash text (``"key": {...}``), in key order."""

    rows: Mapping[str, object]
    pickles: Mapping[str, bytes]
    entries: Mapping[str, str]
    order: tuple[str, ...]  # the keys, sorted


class SharedRows(dict[str, object]):
    """One table of one environment's database: see the module docstring."""

    __slots__ = ("pristine", "lending")

    def __init__(self, pristine: PristineTable) -> None:
        super().__init__(pristine.rows)
        self.pristine = pristine
        self.lending = False

    def _own(self, key: str, row: object) -> object:
        """``row`` stored at ``key``, replaced by a private copy when it is pristine."""
        if self.lending or row is not self.pristine.rows.get(key):
            return row
        own = pickle.loads(self.pristine.pickles[key])
        dict.__setitem__(self, key, own)
        return own

    def _own_all(self) -> None:
        if not self.lending:
            for key, row in list(dict.items(self)):
                self._own(key, row)

    def __getitem__(self, key: str) -> object:
        return self._own(key, dict.__getitem__(self, key))

    def __iter__(self) -> Iterator[str]:
        return dict.__iter__(self)

    def get(self, key: str, default: object = None) -> object:
        return self[key] if key in self else default

    def values(self) -> dict_values[str, object]:
        self._own_all()
        return dict.values(self)

    def items(self) -> dict_items[str, object]:
        self._own_all()
        return dict.items(self)

    def pop(self, key: str, *default: object) -> object:
        if key in self:
            self[key]
        return dict.pop(self, key, *default)

    def popitem(self) -> tuple[str, object]:
        if self:
            self[next(reversed(dict.keys(self)))]
        return dict.popitem(self)

    def setdefault(self, key: str, default: object = None) -> object:
        if key in self:
            return self[key]
        dict.__setitem__(self, key, default)
        return default

    def copy(self) -> dict[str, object]:
        self._own_all()
        return dict(dict.items(self))

    def __reduce__(self) -> tuple[type[dict[str, object]], tuple[dict[str, object]]]:
        # Pickled or deep-copied as a plain dict of the rows as stored: both copy them.
        return dict, (dict(dict.items(self)),)

    def changed_keys(self) -> list[str]:
        """The keys whose row is not the pristine object (copied, added or replaced)."""
        pristine = self.pristine.rows
        return [key for key, row in dict.items(self) if row is not pristine.get(key)]


@dataclass(frozen=True)
class PristineDatabase:
    """A domain database's pristine object and its large tables' pristine rows."""

    database: BaseModel
    tables: Mapping[str, PristineTable]  # field name -> table
    others: bytes  # the other fields' values, pickled together

    def new_copy(self) -> BaseModel:
        """A database for one environment: shared tables, its own copy of the rest."""
        database = self.database.model_copy()  # a shallow copy: its own field dict
        values: dict[str, object] = pickle.loads(self.others)
        values.update({name: SharedRows(table) for name, table in self.tables.items()})
        database.__dict__.update(values)
        return database


def _large_tables(database: BaseModel) -> dict[str, dict[str, object]]:
    tables: dict[str, dict[str, object]] = {}
    for name, value in database.__dict__.items():
        if (
            type(value) is dict
            and len(value) >= MIN_SHARED_ROWS
            and all(type(key) is str for key in value)
            and all(isinstance(row, BaseModel) for row in value.values())
        ):
            tables[name] = value
    return tables


def _pristine_table(database: BaseModel, name: str, rows: dict[str, object]) -> PristineTable:
    dumped = database.model_dump(include={name})[name]
    return PristineTable(
        rows=rows,
        pickles={key: pickle.dumps(row, pickle.HIGHEST_PROTOCOL) for key, row in rows.items()},
        entries={key: hash_entry(key, dumped[key]) for key in rows},
        order=tuple(sorted(rows)),
    )


def hash_entry(key: str, dumped: object) -> str:
    return f"{json.dumps(key)}: {canonical_json(dumped)}"


def share(database: BaseModel) -> PristineDatabase | None:
    """The database's rows prepared for sharing, or None where that would not be
    exact: no large table, state pydantic keeps beside the fields, or a hash
    assembled from rows that differs from tau2's."""
    tables = _large_tables(database)
    if not tables or database.__pydantic_extra__ or database.__pydantic_private__:
        return None
    dumped = database.model_dump()
    if not set(dumped) <= set(database.__dict__):
        return None
    others = {name: value for name, value in database.__dict__.items() if name not in tables}
    pristine = PristineDatabase(
        database=database,
        tables={name: _pristine_table(database, name, rows) for name, rows in tables.items()},
        others=pickle.dumps(others, pickle.HIGHEST_PROTOCOL),
    )
    if database_text(pristine.new_copy()) != canonical_json(dumped):
        return None
    return pristine


def _table_text(database: BaseModel, name: str, table: SharedRows) -> str:
    changed = table.changed_keys()
    fresh = {}
    if changed:
        dumped = database.model_dump(include={name: set(changed)})[name]
        fresh = {key: hash_entry(key, dumped[key]) for key in changed}
    pristine = table.pristine
    keys = dict.keys(table)
    order = pristine.order if keys == pristine.rows.keys() else sorted(keys)
    return "{" + ", ".join([fresh.get(key) or pristine.entries[key] for key in order]) + "}"


def database_text(database: BaseModel) -> str:
    """``json.dumps(database.model_dump(), sort_keys=True, default=str)``, with each
    shared table's unchanged rows taken from their JSON computed once."""
    tables = _shared_tables(database)
    plain = database.model_dump(include=set(database.__dict__) - set(tables))
    pieces = [
        f"{json.dumps(name)}: "
        + (
            _table_text(database, name, tables[name])
            if name in tables
            else canonical_json(plain[name])
        )
        for name in sorted(set(plain) | set(tables))
    ]
    return "{" + ", ".join(pieces) + "}"


def _shared_tables(database: object) -> dict[str, SharedRows]:
    """The database's shared tables by field name (none for what is not a model)."""
    if not isinstance(database, BaseModel):
        return {}
    return {
        name: value for name, value in database.__dict__.items() if isinstance(value, SharedRows)
    }


def database_hash(database: BaseModel) -> str:
    """tau2's hash of a database (``get_dict_hash(db.model_dump())``)."""
    return hashlib.sha256(database_text(database).encode()).hexdigest()


def shares_rows(database: object) -> bool:
    return bool(_shared_tables(database))


@contextlib.contextmanager
def lending(databases: Iterable[object]) -> Iterator[None]:
    """The shared tables of these databases lend their rows as they are (a tool
    tau2 declares changes nothing is running)."""
    tables = [table for database in databases for table in _shared_tables(database).values()]
    for table in tables:
        table.lending = True
    try:
        yield
    finally:
        for table in tables:
            table.lending = False
