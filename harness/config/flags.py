"""Command-line flags declared on the config fields they set.

A field of ``RunConfig`` (or ``ServeConfig``) that the command line sets carries
its flag in its metadata: ``field(default=..., metadata=flag("--trials", ...))``.
``add_flags`` turns a config class's fields into argparse arguments (default:
the field's own) and ``config_values`` reads them back as the class's keyword
arguments, so that a new setting is one field with its flag, not an argument, a
copy into the config and a default kept in step by hand.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

FLAG = "flag"  # the metadata key
FIELD_DEFAULT: object = object()  # cli_default when the command line takes the field's


@dataclass(frozen=True)
class Flag:
    """How one config field is given on the command line.

    ``kind`` converts the text (argparse's ``type``); ``action`` is argparse's
    (``store_true``, ``append``); ``convert`` turns the parsed value into the
    field's value (``--no-cache`` given -> ``cache=False``); ``cli_default`` is
    the command line's default when it is not the field's (a word standing for
    the field's None, say)."""

    name: str
    help: str | None = None
    kind: Callable[[str], object] | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    action: str | None = None
    required: bool = False
    convert: Callable[[Any], object] | None = None  # of what argparse parsed
    cli_default: object = FIELD_DEFAULT

    @property
    def dest(self) -> str:
        """The argparse attribute: the flag's own name (``--no-cache`` -> ``no_cache``)."""
        return self.name.lstrip("-").replace("-", "_")


def flag(name: str, help: str | None = None, **settings: Any) -> dict[str, Flag]:  # noqa: A002
    """Field metadata naming the field's flag."""
    return {FLAG: Flag(name, help, **settings)}


def flagged_fields(config_class: type) -> list[tuple[dataclasses.Field[object], Flag]]:
    """The fields of ``config_class`` that have a flag, in their order."""
    found: list[tuple[dataclasses.Field[object], Flag]] = []
    for item in dataclasses.fields(config_class):
        spec = item.metadata.get(FLAG)
        if isinstance(spec, Flag):
            found.append((item, spec))
    return found


def _field_default(item: dataclasses.Field[object]) -> object:
    if item.default is not dataclasses.MISSING:
        return item.default
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return None


def add_flags(parser: argparse._ActionsContainer, config_class: type) -> None:
    """One argparse argument per flagged field of ``config_class`` (``parser`` may
    be an argument group)."""
    for item, spec in flagged_fields(config_class):
        options: dict[str, Any] = {"dest": spec.dest, "help": spec.help}
        if spec.action is not None:
            options["action"] = spec.action
        if spec.kind is not None:
            options["type"] = spec.kind
        if spec.choices is not None:
            options["choices"] = list(spec.choices)
        if spec.metavar is not None:
            options["metavar"] = spec.metavar
        if spec.required:
            options["required"] = True
        if spec.action in ("store_true", "store_false"):
            pass  # argparse's own default (False / True)
        elif spec.action == "append":
            options["default"] = []
        elif spec.cli_default is not FIELD_DEFAULT:
            options["default"] = spec.cli_default
        else:
            options["default"] = _field_default(item)
        parser.add_argument(spec.name, **options)


def config_values(args: argparse.Namespace, config_class: type) -> dict[str, Any]:
    """The flagged fields' values as ``config_class`` takes them."""
    values: dict[str, Any] = {}
    for item, spec in flagged_fields(config_class):
        value = getattr(args, spec.dest)
        values[item.name] = spec.convert(value) if spec.convert is not None else value
    return values
