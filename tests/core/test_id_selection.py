"""``--ids``: plain ids looked up in every entry, benchmark-qualified ids in their own."""

from __future__ import annotations

import pytest

from harness.config.suites import load_suite
from harness.errors import ConfigError
from harness.run.id_selection import parse_ids
from harness.run.suite_samples import load_suite_samples


def picked(toy_suite, ids):
    plan = load_suite_samples(load_suite(str(toy_suite)), ids=ids)
    return sorted(f"{s.subset}/{s.id}" for s in plan.samples)


def test_qualified_ids_pick_samples_of_several_entries(toy_suite):
    assert picked(toy_suite, ["toy/easy:easy-1", "toy/hard:hard-2"]) == [
        "easy/easy-1",
        "hard/hard-2",
    ]


def test_plain_ids_are_looked_up_in_every_entry_as_before(toy_suite):
    assert picked(toy_suite, ["easy-3"]) == ["easy/easy-3"]
    assert picked(toy_suite, ["easy-0", "toy/hard:hard-1"]) == ["easy/easy-0", "hard/hard-1"]


def test_a_qualified_id_of_a_subset_the_suite_does_not_run_is_refused(toy_suite):
    with pytest.raises(ConfigError, match="the suite has no toy entry with subset keyed"):
        load_suite_samples(load_suite(str(toy_suite)), ids=["toy/keyed:keyed-0"])


def test_ids_holding_slashes_and_colons_stay_whole():
    subsets = {"tau3": ["retail", "telecom", "telecom:small", "banking_knowledge"]}
    selection = parse_ids(
        [
            "tau3/banking_knowledge:task_093",
            "tau3/telecom:small:[mms]a|b[PERSONA:None]",
            "tau3/telecom:[x]/y",
            "other/retail:1",
            "[service_issue]a|b[PERSONA:None]",
        ],
        subsets.get,
    )
    assert selection.qualified == {
        ("tau3", "banking_knowledge"): ["task_093"],
        ("tau3", "telecom:small"): ["[mms]a|b[PERSONA:None]"],
        ("tau3", "telecom"): ["[x]/y"],
    }
    assert selection.plain == ("other/retail:1", "[service_issue]a|b[PERSONA:None]")
