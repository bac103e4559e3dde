"""Run flags declared on RunConfig's fields: defaults, conversions, one edit per setting."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field

import pytest

from harness.cli import build_parser
from harness.commands.run import run_config
from harness.config.flags import FLAG, add_flags, config_values, flag, flagged_fields
from harness.config.run_config import SERVER_KINDS, RunConfig, ServeConfig
from harness.serving.specs import SPECS


def parsed(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["run", "--suite", "smoke", *argv])


def test_no_flags_give_the_config_defaults():
    """Every flagged field's command-line default is the field's default."""
    config = run_config(parsed())
    assert config == RunConfig(suite="smoke")
    assert config.serve == ServeConfig()


def test_every_run_setting_but_the_composite_ones_has_a_flag():
    composite = {"serve", "strategy_options"}  # built from flags of their own
    unflagged = {f.name for f in dataclasses.fields(RunConfig) if FLAG not in f.metadata}
    assert unflagged == composite
    assert {f.name for f in dataclasses.fields(ServeConfig) if FLAG not in f.metadata} == {
        "quiet"  # from --quiet, shared with the run
    }


def test_flags_become_field_values_with_their_conversions(tmp_path):
    config = run_config(
        parsed(
            "--no-cache", "--quiet", "--no-preflight", "--local-server", "no",
            "--ids", "a,b", "--trials", "3", "--out", str(tmp_path / "r"),
            "--serve", "llamacpp", "--lora", "x=/p", "--serve-arg=--ctx=1",
            "--progress-every", "5",
        )
    )  # fmt: skip
    assert (config.cache, config.progress, config.preflight) == (False, False, False)
    assert config.local_server is False and config.ids == ("a", "b") and config.trials == 3
    assert config.out == tmp_path / "r" and config.progress_interval == 5.0
    assert config.serve.serve == "llamacpp" and config.serve.quiet
    assert config.serve.lora == ("x=/p",) and config.serve.serve_arg == ("--ctx=1",)


def test_the_server_kinds_are_the_specs():
    assert SERVER_KINDS == tuple(sorted(SPECS))


@dataclass(frozen=True)
class WithANewSetting:
    """A config with one more setting: the field and its flag are the whole edit."""

    warmup: int = field(default=2, metadata=flag("--warmup", "warm-up calls", kind=int))
    dry: bool = field(
        default=True, metadata=flag("--wet", action="store_true", convert=lambda w: not w)
    )
    plain: str = "not a flag"


def test_a_new_setting_is_one_field_with_its_flag():
    parser = argparse.ArgumentParser()
    add_flags(parser, WithANewSetting)
    assert [spec.name for _, spec in flagged_fields(WithANewSetting)] == ["--warmup", "--wet"]
    assert WithANewSetting(**config_values(parser.parse_args([]), WithANewSetting)) == (
        WithANewSetting()
    )
    given = config_values(parser.parse_args(["--warmup", "7", "--wet"]), WithANewSetting)
    assert WithANewSetting(**given) == WithANewSetting(warmup=7, dry=False)


@pytest.mark.parametrize("argv", [["--trials", "0"], ["--concurrency", "-1"]])
def test_a_bad_value_is_still_the_config_check(argv, capsys):
    from harness.cli import main

    assert main(["run", "--suite", "smoke", "--model", "oracle", *argv]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
