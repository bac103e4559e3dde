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
  copies of the whole database). A table's text is the pristine table's text with
  the other rows' entries spliced in, and the sha256 resumes from a state kept for
  the pristine text at the last checkpoint before the first byte that differs
  (an airline hash: ~4 ms -> ~1.4 ms). A state hashed before (the gold replay's,
  which every passing episode ends in) is known by its changed rows' text and
  not hashed again.

What reads a dict below Python (``json.dumps``, pydantic's ``model_dump``) sees the
rows as stored, pristine or copied: the values the environment holds. The ways a
dict hands out its values without calling its methods (``dict(t)``, ``{**t}``,
``t | u``) go through ``__iter__`` when a subclass defines it, and so through
``__getitem__``.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import itertools
import json
import operator
import pickle
import threading
from _collections_abc import dict_items, dict_values
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from pydantic import BaseModel

# A table smaller than this is copied whole with its database (telecom's are).
MIN_SHARED_ROWS = 50


def canonical_json(value: object) -> str:
    """tau2's text for a dumped value (``get_dict_hash``): sorted keys, ``str`` for the rest."""
    return json.dumps(value, sort_keys=True, default=str)


class HashCheckpoints:
    """sha256 states of a pristine database's hash text every ``STEP`` bytes, so
    that the hash of a text that starts as the pristine one does resumes from the
    last state before the first difference (the same digest, with less hashing);
    and the digests of the last ``MAX_KNOWN`` states hashed, by what makes their
    text differ from the pristine one (``DatabaseChanges``): an episode that ends
    where the gold actions end (every passing one) ends in the state whose hash
    the gold replay already worked out, so its text is neither assembled nor hashed."""

    STEP = 64 * 1024
    MAX_KNOWN = 2048

    def __init__(self) -> None:
        self.text = b""
        self.states: list[hashlib._Hash] = [hashlib.sha256()]
        self._known: dict[DatabaseChanges, str] = {}
        self._lock = threading.Lock()  # tool workers and scoring threads hash at once

    def fill(self, text: bytes) -> None:
        running = hashlib.sha256()
        states = [running.copy()]
        for end in range(self.STEP, len(text) + 1, self.STEP):
            running.update(text[end - self.STEP : end])
            states.append(running.copy())
        self.text, self.states = text, states

    def hexdigest(self, text: bytes) -> str:
        """``hashlib.sha256(text).hexdigest()``."""
        step, reached = self.STEP, 0
        while reached + 1 < len(self.states):
            start = reached * step
            if text[start : start + step] != self.text[start : start + step]:
                break
            reached += 1
        running = self.states[reached].copy()
        running.update(memoryview(text)[reached * step :])
        return running.hexdigest()

    def digest_of(self, changes: DatabaseChanges, text: Callable[[], str]) -> str:
        """The hash of the text ``changes`` make, ``text()`` hashed only when
        these changes were not hashed before."""
        known = self._known.get(changes)
        if known is not None:
            return known
        digest = self.hexdigest(text().encode())
        with self._lock:
            self._known[changes] = digest
            if len(self._known) > self.MAX_KNOWN:
                del self._known[next(iter(self._known))]  # the oldest
        return digest


@dataclass(frozen=True)
class PristineTable:
    """One table's pristine rows, each row's pickle (its private copies come from
    it; made the first time the row is copied) and its entry in tau2's hash text
    (``"key": {...}``), in key order; with the table's whole text and where each
    entry sits in it."""

    rows: Mapping[str, object]
    pickles: dict[str, bytes]  # filled as rows are first copied (``pickle_of``)
    entries: Mapping[str, str]
    order: tuple[str, ...]  # the keys, sorted
    text: str  # the entries in order, joined by ", " (no braces)
    spans: Mapping[str, tuple[int, int]]  # key -> (start, end) of its entry in text
    keys: list[str]  # the keys in the rows' own order, with
    values: list[object]  # the rows in that order
    checkpoints: HashCheckpoints  # of the database the table belongs to

    @classmethod
    def build(
        cls,
        rows: Mapping[str, object],
        entries: Mapping[str, str],
        checkpoints: HashCheckpoints,
    ) -> PristineTable:
        order = tuple(sorted(rows))
        spans: dict[str, tuple[int, int]] = {}
        start = 0
        for key in order:
            spans[key] = (start, start + len(entries[key]))
            start += len(entries[key]) + 2  # the ", " after it
        text = ", ".join(entries[key] for key in order)
        keys, values = list(rows), list(rows.values())
        return cls(rows, {}, entries, order, text, spans, keys, values, checkpoints)

    def pickle_of(self, key: str) -> bytes:
        """The pristine row's pickle, made when first asked for: an episode copies
        a few of an airline table's ~2,800 rows, and pickling them all took ~0.1 s
        of the domain's first environment. A pristine row never changes, so the
        pickle is the same whenever it is made (two threads may both make it)."""
        found = self.pickles.get(key)
        if found is None:
            found = self.pickles[key] = pickle.dumps(self.rows[key], pickle.HIGHEST_PROTOCOL)
        return found


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
        own = pickle.loads(self.pristine.pickle_of(key))
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
        pristine = self.pristine
        if len(self) == len(pristine.keys) and list(dict.keys(self)) == pristine.keys:
            # The same keys in the same order (the usual case): compared pairwise in C.
            differs = map(operator.is_not, dict.values(self), pristine.values)
            return list(itertools.compress(pristine.keys, differs))
        return [key for key, row in dict.items(self) if row is not pristine.rows.get(key)]


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


def _pristine_table(
    rows: dict[str, object], dumped: Mapping[str, object], checkpoints: HashCheckpoints
) -> PristineTable:
    """``dumped``: the table as the database's whole ``model_dump`` gives it (the
    check in ``share`` compares the text built from it with tau2's own)."""
    return PristineTable.build(
        rows=rows,
        entries={key: hash_entry(key, dumped[key]) for key in rows},
        checkpoints=checkpoints,
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
    checkpoints = HashCheckpoints()
    pristine = PristineDatabase(
        database=database,
        tables={
            name: _pristine_table(rows, dumped[name], checkpoints) for name, rows in tables.items()
        },
        others=pickle.dumps(others, pickle.HIGHEST_PROTOCOL),
    )
    text = canonical_json(dumped)
    if database_text(pristine.new_copy()) != text:
        return None
    checkpoints.fill(text.encode())
    return pristine


@dataclass(frozen=True)
class TableChanges:
    """What makes a shared table's hash text differ from its pristine one."""

    fresh: tuple[tuple[str, str], ...]  # (key, entry) of each row not as pristine, by key
    deleted: tuple[str, ...]  # the pristine keys no longer in the table, sorted


# Per field, in tau2's (sorted) order: its name and its table's changes, or (a field
# that is not a shared table) its text.
DatabaseChanges = tuple[tuple[str, "TableChanges | str"], ...]


def _table_changes(database: BaseModel, name: str, table: SharedRows) -> TableChanges:
    pristine = table.pristine
    changed = table.changed_keys()
    fresh: list[tuple[str, str]] = []
    if changed:
        dumped = database.model_dump(include={name: set(changed)})[name]
        for key in sorted(changed):
            entry = hash_entry(key, dumped[key])
            if entry != pristine.entries.get(key):  # a row read (copied) but unchanged is not
                fresh.append((key, entry))
    added = sum(1 for key in changed if key not in pristine.rows)
    deleted: tuple[str, ...] = ()
    if len(table) - added != len(pristine.rows):
        deleted = tuple(sorted(set(pristine.rows).difference(table)))
    return TableChanges(tuple(fresh), deleted)


def _database_changes(database: BaseModel, tables: Mapping[str, SharedRows]) -> DatabaseChanges:
    plain = database.model_dump(include=set(database.__dict__) - set(tables))
    return tuple(
        (
            name,
            _table_changes(database, name, tables[name])
            if name in tables
            else canonical_json(plain[name]),
        )
        for name in sorted(set(plain) | set(tables))
    )


def _table_text(pristine: PristineTable, changes: TableChanges) -> str:
    fresh = dict(changes.fresh)
    if not changes.deleted:
        added = [key for key in fresh if key not in pristine.rows]
        return "{" + _spliced(pristine, fresh, added) + "}"
    order = sorted(set(pristine.rows).difference(changes.deleted).union(fresh))
    return "{" + ", ".join([fresh.get(key) or pristine.entries[key] for key in order]) + "}"


def _text_of(changes: DatabaseChanges, tables: Mapping[str, SharedRows]) -> str:
    pieces = [
        f"{json.dumps(name)}: "
        + (_table_text(tables[name].pristine, part) if isinstance(part, TableChanges) else part)
        for name, part in changes
    ]
    return "{" + ", ".join(pieces) + "}"


def _spliced(pristine: PristineTable, fresh: Mapping[str, str], added: list[str]) -> str:
    """The pristine table's text with the entries in ``fresh`` put in: in place of
    a pristine key's entry, or (``added``) inserted where its key sorts."""
    text = pristine.text
    # (where in the text, 0 to insert there / 1 to replace the entry there, key)
    edits = [(pristine.spans[key][0], 1, key) for key in fresh if key in pristine.spans]
    for key in added:
        index = bisect.bisect_left(pristine.order, key)
        if index < len(pristine.order):
            edits.append((pristine.spans[pristine.order[index]][0], 0, key))
        else:
            edits.append((len(text), 0, key))
    edits.sort()
    pieces: list[str] = []
    cursor = 0
    for at, replaces, key in edits:
        pieces.append(text[cursor:at])
        if replaces:
            pieces.append(fresh[key])
            cursor = pristine.spans[key][1]
        elif at < len(text):
            pieces.append(fresh[key] + ", ")
            cursor = at
        else:  # after the last entry
            pieces.append(", " + fresh[key])
            cursor = at
    pieces.append(text[cursor:])
    return "".join(pieces)


def database_text(database: BaseModel) -> str:
    """``json.dumps(database.model_dump(), sort_keys=True, default=str)``, with each
    shared table's unchanged rows taken from their JSON computed once."""
    tables = _shared_tables(database)
    return _text_of(_database_changes(database, tables), tables)


def _shared_tables(database: object) -> dict[str, SharedRows]:
    """The database's shared tables by field name (none for what is not a model)."""
    if not isinstance(database, BaseModel):
        return {}
    return {
        name: value for name, value in database.__dict__.items() if isinstance(value, SharedRows)
    }


def database_hash(database: BaseModel) -> str:
    """tau2's hash of a database (``get_dict_hash(db.model_dump())``)."""
    tables = _shared_tables(database)
    if not tables:
        return hashlib.sha256(database_text(database).encode()).hexdigest()
    changes = _database_changes(database, tables)
    checkpoints = next(iter(tables.values())).pristine.checkpoints
    return checkpoints.digest_of(changes, lambda: _text_of(changes, tables))


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
