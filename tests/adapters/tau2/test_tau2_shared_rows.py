"""Databases that share their pristine rows: private copies on read, tau2's hash."""

from __future__ import annotations

import copy
import hashlib
import pickle

import pytest
from pydantic import BaseModel
from tau3_support import checkout_or_skip

from harness.adapters.tau2 import domains, gold_cache
from harness.adapters.tau2.environment import Tau2Environment
from harness.adapters.tau2.shared_rows import (
    MIN_SHARED_ROWS,
    HashCheckpoints,
    SharedRows,
    canonical_json,
    database_hash,
    hash_entry,
    lending,
    share,
    shares_rows,
)
from harness.types import ToolCall


class Seat(BaseModel):
    available: int
    prices: dict[str, float]


class Flight(BaseModel):
    number: str
    dates: dict[str, Seat]
    tags: list[str] = []


class Database(BaseModel):
    flights: dict[str, Flight]
    few: dict[str, Flight]  # too small to share
    note: str = "airline"


def make_database(rows: int = MIN_SHARED_ROWS + 10) -> Database:
    flights = {
        f"F{i:03d}": Flight(
            number=f"F{i:03d}",
            dates={"2024-05-01": Seat(available=i, prices={"economy": 100.5 + i})},
        )
        for i in range(rows)
    }
    few = {"X": Flight(number="X", dates={})}
    return Database(flights=flights, few=few)


def tau2_hash(database: BaseModel) -> str:
    """tau2's get_dict_hash(db.model_dump())."""
    return hashlib.sha256(canonical_json(database.model_dump()).encode()).hexdigest()


@pytest.fixture
def pristine():
    shared = share(make_database())
    assert shared is not None
    return shared


def test_large_tables_are_shared_small_ones_copied(pristine):
    database = pristine.new_copy()
    assert isinstance(database.__dict__["flights"], SharedRows)
    assert type(database.__dict__["few"]) is dict
    assert database.__dict__["few"]["X"] is not pristine.database.few["X"]
    assert shares_rows(database) and not shares_rows(make_database())
    assert share(make_database(MIN_SHARED_ROWS - 1)) is None  # nothing large enough


def test_a_row_read_is_a_private_copy_and_the_pristine_row_never_changes(pristine):
    first, second = pristine.new_copy(), pristine.new_copy()
    row = first.flights["F001"]
    assert row is not pristine.database.flights["F001"]
    assert first.flights["F001"] is row  # kept: the next read gives the same copy
    row.dates["2024-05-01"].available -= 1
    row.tags.append("changed")
    assert pristine.database.flights["F001"].dates["2024-05-01"].available == 1
    assert second.flights["F001"].dates["2024-05-01"].available == 1
    assert first.flights.changed_keys() == ["F001"]
    assert second.flights.changed_keys() == ["F001"]  # read: copied, same content


def test_a_rows_pickle_is_made_when_it_is_first_copied(pristine):
    table = pristine.tables["flights"]
    assert table.pickles == {}  # none made while the pristine rows were prepared
    first, second = pristine.new_copy(), pristine.new_copy()
    row = first.flights["F001"]
    assert list(table.pickles) == ["F001"]
    made = table.pickles["F001"]
    again = second.flights["F001"]
    assert table.pickles["F001"] is made  # made once
    assert again is not row and again == row == pristine.database.flights["F001"]


@pytest.mark.parametrize(
    "read",
    [
        lambda t: list(t.values()),
        lambda t: [row for _, row in t.items()],
        lambda t: list(dict(t).values()),
        lambda t: list({**t}.values()),
        lambda t: list((t | {}).values()),
        lambda t: list(t.copy().values()),
        lambda t: [t.get(key) for key in t],
        lambda t: [t.setdefault(key) for key in list(t)],
    ],
    ids=["values", "items", "dict", "unpack", "or", "copy", "get", "setdefault"],
)
def test_every_way_of_reading_rows_hands_out_copies(pristine, read):
    table = pristine.new_copy().flights
    rows = read(table)
    assert len(rows) == len(pristine.database.flights)
    shared = {id(row) for row in pristine.database.flights.values()}
    assert not any(id(row) in shared for row in rows)


def test_popped_rows_are_copies_too(pristine):
    table = pristine.new_copy().flights
    assert table.pop("F002") is not pristine.database.flights["F002"]
    assert table.popitem()[1] is not pristine.database.flights[f"F{MIN_SHARED_ROWS + 9:03d}"]
    assert table.pop("missing", None) is None


def test_lending_hands_out_the_rows_as_they_are(pristine):
    database = pristine.new_copy()
    with lending([database, None]):
        rows = list(database.flights.values())
        assert rows[0] is pristine.database.flights["F000"]
    assert database.flights.changed_keys() == []
    assert database.flights["F000"] is not pristine.database.flights["F000"]  # lent no more


def test_pickled_and_deep_copied_tables_are_plain_dicts_of_copies(pristine):
    table = pristine.new_copy().flights
    for other in (pickle.loads(pickle.dumps(table)), copy.deepcopy(table)):
        assert type(other) is dict and other == dict(table)
        assert other["F000"] is not pristine.database.flights["F000"]


def test_the_hash_is_tau2s_after_changes_additions_and_deletions(pristine):
    database = pristine.new_copy()
    assert database_hash(database) == tau2_hash(pristine.database)
    database.flights["F003"].dates["2024-05-01"].prices["economy"] = 7.25
    database.flights["A000"] = Flight(number="A000", dates={})  # sorts first
    del database.flights["F010"]
    database.few["Y"] = Flight(number="Y", dates={}, tags=["é"])
    database.note = "changed"
    reference = Database.model_validate(database.model_dump())  # plain dicts
    assert not shares_rows(reference)
    assert database_hash(database) == tau2_hash(reference) != tau2_hash(pristine.database)
    assert tau2_hash(database) == tau2_hash(reference)  # what reads below Python sees


@pytest.mark.parametrize(
    "added",
    [["F0305"], ["Z999"], ["A000", "F0305", "Z999"], ["F0305", "F0306"], []],
    ids=["middle", "end", "everywhere", "two-together", "none"],
)
def test_added_and_changed_rows_are_spliced_into_tau2s_text(pristine, added):
    database = pristine.new_copy()
    database.flights["F030"].tags.append("changed")  # beside the insertion point
    database.flights["F000"]  # read (a private copy), not changed
    for key in added:
        database.flights[key] = Flight(number=key, dates={})
    reference = Database.model_validate(database.model_dump())
    assert database_hash(database) == tau2_hash(reference)


@pytest.mark.parametrize("change_at", [0, 1, 4095, 4096, 4097, 9000, 12287, 12288, 12289, None])
@pytest.mark.parametrize("length_change", [-5000, -1, 0, 1, 5000])
def test_a_hash_resumed_from_a_checkpoint_is_sha256_of_the_whole_text(change_at, length_change):
    checkpoints = HashCheckpoints()
    checkpoints.STEP = 4096  # an instance's own step: three checkpoints and a rest
    pristine_text = bytes(range(256)) * 50  # 12,800 bytes
    checkpoints.fill(pristine_text)
    text = bytearray(pristine_text)
    if change_at is not None:
        text[change_at] ^= 0xFF
    if length_change < 0:
        del text[length_change:]
    else:
        text += b"x" * length_change
    assert checkpoints.hexdigest(bytes(text)) == hashlib.sha256(bytes(text)).hexdigest()
    assert HashCheckpoints().hexdigest(bytes(text)) == hashlib.sha256(bytes(text)).hexdigest()


def test_a_state_hashed_before_is_not_hashed_again(pristine, monkeypatch):
    hashed: list[bytes] = []
    checkpoints = pristine.tables["flights"].checkpoints
    real = checkpoints.hexdigest
    monkeypatch.setattr(checkpoints, "hexdigest", lambda text: hashed.append(text) or real(text))

    def ended(seats: int, read_too: bool = False) -> BaseModel:
        """An environment's database after an episode that sold seats on F003."""
        database = pristine.new_copy()
        if read_too:
            database.flights["F007"]  # read (a private copy), left as it was
        database.flights["F003"].dates["2024-05-01"].available = seats
        return database

    first, again, read_more, other = ended(1), ended(1), ended(1, read_too=True), ended(2)
    expected = tau2_hash(Database.model_validate(first.model_dump()))
    assert database_hash(first) == expected and len(hashed) == 1
    # The same changes, in another environment (a row read but unchanged is no change).
    assert database_hash(again) == database_hash(read_more) == expected and len(hashed) == 1
    # Other changes of the same row are hashed: their own digest, not the kept one.
    assert database_hash(other) == tau2_hash(Database.model_validate(other.model_dump()))
    assert database_hash(other) != expected and len(hashed) == 2
    # A deleted row is a change too.
    del first.flights["F010"]
    assert database_hash(first) == tau2_hash(Database.model_validate(first.model_dump()))
    assert len(hashed) == 3


def test_the_states_kept_are_the_latest(pristine, monkeypatch):
    checkpoints = pristine.tables["flights"].checkpoints
    monkeypatch.setattr(checkpoints, "MAX_KNOWN", 2)
    databases = []
    for seats in range(3):
        database = pristine.new_copy()
        database.flights["F003"].dates["2024-05-01"].available = seats
        databases.append(database)
        database_hash(database)
    hashed: list[bytes] = []
    real = checkpoints.hexdigest
    monkeypatch.setattr(checkpoints, "hexdigest", lambda text: hashed.append(text) or real(text))
    database_hash(databases[2])
    database_hash(databases[1])
    assert not hashed  # the two latest are known
    database_hash(databases[0])  # the oldest was let go: hashed again
    assert len(hashed) == 1


class Extra(BaseModel, extra="allow"):
    flights: dict[str, Flight]


def test_state_beside_the_fields_keeps_whole_copies():
    database = Extra(flights=make_database().flights, kept="x")
    assert share(database) is None


# --- tau2's own databases --------------------------------------------------------------


def tau2_domain(name: str, task_set: str = "tau2"):
    from harness.task.registry import get_adapter

    if task_set == "tau2":
        return get_adapter("tau2"), get_adapter("tau2").domain(name)
    adapter = get_adapter("tau3")
    return adapter, adapter.domain(name, data_dir=checkout_or_skip())


def pristine_unchanged(domain) -> bool:
    """Every pristine row still dumps to the JSON computed when it was shared."""
    shared = domains.shared_database(domain)
    for name, table in shared.tables.items():
        dumped = shared.database.model_dump(include={name})[name]
        if any(hash_entry(key, dumped[key]) != table.entries[key] for key in table.rows):
            return False
    return True


def gold_calls(task) -> list[tuple[str, ToolCall]]:
    return [
        (action.requestor, ToolCall(id=str(n), name=action.name, arguments=action.arguments))
        for n, action in enumerate(task.evaluation_criteria.actions or [])
    ]


def check_gold_run(domain, task) -> Tau2Environment:
    """The task's gold calls on an environment sharing rows and on a whole copy:
    the same results, and the same hashes by both ways of hashing."""
    env = Tau2Environment(domain, task)
    whole = domains.initialized_environment(domain, task, share_rows=False)
    assert not shares_rows(whole.tools.db)
    tool_call = domain.package.module("data_model.message").ToolCall
    for requestor, call in gold_calls(task):
        result = env.run(call, requestor)
        reply = whole.get_response(
            tool_call(id=call.id, name=call.name, arguments=call.arguments, requestor=requestor)
        )
        assert (result.content, result.is_error) == (reply.content or "", reply.error), call.name
    expected = (whole.get_db_hash(), whole.get_user_db_hash())
    assert gold_cache.environment_hashes(env.env) == expected, task.id
    assert (env.env.get_db_hash(), env.env.get_user_db_hash()) == expected, task.id
    return env


@pytest.mark.parametrize("name", ["airline", "retail"])
def test_tau2_domains_share_rows_and_telecom_is_copied_whole(name):
    _, domain = tau2_domain(name)
    assert domains.shared_database(domain) is not None
    env = domains.new_environment(domain)
    assert shares_rows(env.tools.db)
    assert not shares_rows(domains.new_environment(domain, share_rows=False).tools.db)
    assert domains.shared_database(tau2_domain("telecom")[1]) is None


def test_read_only_tools_copy_nothing_and_a_write_copies_what_it_touches():
    adapter, domain = tau2_domain("airline")
    task = adapter.task_of(adapter.load("airline", ids=["8"])[0])
    env = check_gold_run(domain, task)  # reads, a search over every flight, a booking
    db = env.env.tools.db
    changed = {name: t.changed_keys() for name, t in db if isinstance(t, SharedRows)}
    assert 0 < sum(map(len, changed.values())) <= 5, changed
    env = Tau2Environment(domain, task)
    search = ToolCall(
        id="s",
        name="search_direct_flight",
        arguments={"origin": "ORD", "destination": "PHL", "date": "2024-05-26"},
    )
    assert "HAT271" in env.run(search, "assistant").content
    assert all(not t.changed_keys() for _, t in env.env.tools.db if isinstance(t, SharedRows))
    assert pristine_unchanged(domain)


@pytest.mark.slow
@pytest.mark.parametrize(
    "task_set,name",
    [("tau2", "airline"), ("tau2", "retail"), ("tau3", "airline"), ("tau3", "retail")],
)
def test_every_tasks_gold_run_hashes_as_on_a_whole_copy(task_set, name):
    adapter, domain = tau2_domain(name, task_set)
    options = {"data_dir": checkout_or_skip()} if task_set == "tau3" else {}
    for sample in adapter.load(name, **options):
        check_gold_run(domain, adapter.task_of(sample))
    assert pristine_unchanged(domain)
