"""Strategy specs and options: what is accepted, what is refused, what is recorded."""

from __future__ import annotations

import pytest

from harness.config.suites import load_suite
from harness.errors import ConfigError
from harness.strategies.plain import PlainStrategy
from harness.strategies.registry import build_strategy
from harness.strategies.rehearsal import RehearsalStrategy
from harness.strategies.self_consistency import SelfConsistencyStrategy
from harness.strategies.settings import StrategySettings, parse_settings


def test_plain_is_one_class_whatever_builds_it():
    # What the command line builds and what a test constructs directly are the
    # same class with the same (published benchmark) settings and record.
    built, direct = build_strategy("plain"), PlainStrategy()
    assert type(built) is type(direct) is PlainStrategy
    assert built.settings == direct.settings == StrategySettings()
    assert built.describe() == direct.describe() == {"name": "plain"}
    assert built.rehearser is None and direct.rehearser is None


def test_specs_build_the_right_strategies():
    assert isinstance(build_strategy("plain"), PlainStrategy)
    parallel = build_strategy("rehearsal-parallel:2")
    assert isinstance(parallel, RehearsalStrategy) and (parallel.mode, parallel.n) == (
        "parallel",
        2,
    )
    sequential = build_strategy(" rehearsal-sequential:3 ")
    assert (sequential.mode, sequential.n) == ("sequential", 3)
    voting = build_strategy("self-consistency:5")
    assert isinstance(voting, SelfConsistencyStrategy) and voting.k == 5


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("magic", "unknown strategy"),
        ("plain:2", "unknown strategy"),
        ("rehearsal-parallel", "unknown strategy"),
        ("rehearsal-parallel:two", "whole number"),
        ("rehearsal-sequential:0", "at least 1"),
        ("self-consistency:-1", "at least 1"),
        ("self-consistency", "unknown strategy"),
    ],
)
def test_bad_specs_are_config_errors(spec, message):
    with pytest.raises(ConfigError, match=message):
        build_strategy(spec)


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("plain", {"colour": "red"}, "unknown strategy option"),
        ("plain", {"memory_chars": "100"}, "do not apply to 'plain'"),
        ("plain", {"temperature": "0.5"}, "do not apply to 'plain'"),
        ("plain", {"rehearser_model": "base"}, "do not apply to 'plain'"),
        ("self-consistency:3", {"critic_model": "x"}, "do not apply"),
        ("rehearsal-parallel:2", {"temperature": "0"}, "must be > 0"),
        ("rehearsal-parallel:2", {"temperature": "hot"}, "must be a number"),
        ("rehearsal-parallel:2", {"temperature": "inf"}, "must be a finite number"),
        ("self-consistency:3", {"temperature": float("inf")}, "must be a finite number"),
        ("self-consistency:3", {"temperature": float("nan")}, "must be a finite number"),
        ("rehearsal-parallel:2", {"memory_chars": "1.5"}, "must be an integer"),
        ("rehearsal-parallel:2", {"memory_chars": "0"}, "must be positive"),
        ("rehearsal-parallel:2", {"measure_world_model": "maybe"}, "true or false"),
        ("rehearsal-parallel:2", {"env_feedback": "loud"}, "must be one of"),
        ("rehearsal-parallel:2", {"rehearsal_user": "nobody"}, "must be one of"),
        ("rehearsal-parallel:2", {"memory_position": "last"}, "must be one of"),
        ("rehearsal-parallel:2", {"rehearser_model": "base"}, "no model factory"),
    ],
)
def test_bad_options_are_config_errors(spec, options, message):
    with pytest.raises(ConfigError, match=message):
        build_strategy(spec, options)


def test_options_from_the_command_line_and_from_yaml_parse_alike():
    strings = parse_settings(
        {"memory_chars": "800", "measure_world_model": "yes", "temperature": "0.6"}
    )
    typed = parse_settings({"memory_chars": 800, "measure_world_model": True, "temperature": 0.6})
    assert strings == typed
    assert strings.memory_chars == 800 and strings.measure_world_model is True
    assert parse_settings({"rehearser_model": "self", "critic_model": "none"}) == StrategySettings()


def test_plain_without_options_records_exactly_what_it_always_did():
    assert build_strategy("plain").describe() == {"name": "plain"}
    augmented = build_strategy("plain", {"env_feedback": "augmented"}).describe()
    assert augmented == {"name": "plain", "env_feedback": "augmented"}


def test_rehearsal_describe_records_every_setting_and_the_prompt_version():
    built = []
    strategy = build_strategy(
        "rehearsal-sequential:2",
        {"rehearser_model": "base-8b", "critic_model": "critic-x", "memory_chars": "900"},
        lambda name, base: built.append(name) or object(),
    )
    assert built == ["base-8b", "critic-x"]
    info = strategy.describe()
    assert info["name"] == "rehearsal-sequential:2"
    assert info["settings"]["memory_chars"] == 900
    assert info["settings"]["critic_model"] == "critic-x"
    assert info["prompt_version"].startswith("tts-prompts-")
    assert info["env_feedback"] == "standard"
    assert info == strategy.describe()  # deterministic: it is part of the run's identity


def test_the_rehearsal_table_suite_covers_tau2_and_bfcl_multi_turn():
    suite = load_suite("envace-tts")
    entries = {entry.benchmark: entry.subsets for entry in suite.entries}
    assert entries == {
        "tau2": ["airline", "retail", "telecom"],
        "bfcl": [
            "multi_turn_base",
            "multi_turn_miss_func",
            "multi_turn_miss_param",
            "multi_turn_long_context",
        ],
    }
    text = open(suite.source, encoding="utf-8").read()
    for spec in ("plain", "rehearsal-parallel:2", "rehearsal-sequential:2"):
        build_strategy(spec)  # every strategy the commands name exists
        assert f"--strategy {spec}" in text
    assert text.count("rehearser_model=$B") == 2
