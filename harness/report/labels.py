"""How runs are named and coloured in figures: one labels file, the same in every figure.

A labels file is YAML, run folder -> label and colour::

    results/envace-8b__plain: {label: EnvACE-8B, colour: "#0072B2"}
    qwen3-8b__plain: Qwen3-8B          # a label only; the colour is the default
    "ref:envace/Qwen3-8B": {label: Qwen3-8B (published), colour: grey}

A key matches a run by its folder as given, its folder's name, or its run id, and
a published row by ``ref:<table>/<model>``. A run the file does not name keeps
its own name. Default colours go by the run's place in the sorted list of all
runs drawn (never by figure), from a palette that colour-blind readers can tell
apart, skipping colours the file assigns, so a run has one colour everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError

# Okabe & Ito's colour-blind-safe palette (without black, which text and axes use),
# then Tableau colours unlike any of those, for more runs than that.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#7f7f7f",
    "#bcbd22",
    "#2ca02c",
    "#17becf",
)
REFERENCE_COLOUR = "#555555"


@dataclass(frozen=True)
class LabelSpec:
    """One entry of a labels file: either field may be left to the default."""

    label: str | None = None
    colour: str | None = None


@dataclass(frozen=True)
class RunStyle:
    label: str
    colour: str


def _colour(value: object, where: str) -> str:
    from matplotlib.colors import is_color_like

    if not isinstance(value, str) or not is_color_like(value):
        raise ConfigError(f"{where}: {value!r} is not a colour (e.g. '#0072B2' or 'tab:blue')")
    return value


def parse_labels(data: object, where: str = "labels file") -> dict[str, LabelSpec]:
    """The entries of a labels file's content (a mapping, see the module docstring)."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of run folder -> label / colour")
    specs = {}
    for key, value in data.items():
        entry = f"{where} entry {key!r}"
        if isinstance(value, str):
            specs[str(key)] = LabelSpec(label=value)
            continue
        if not isinstance(value, dict):
            # YAML reads bare Null, yes, 1 ... as non-text: say how to keep them text.
            raise ConfigError(
                f"{entry}: expected a label or {{label: ..., colour: ...}}, got {value!r} "
                "(quote a label such as 'Null', 'yes' or '1')"
            )
        unknown = set(value) - {"label", "colour", "color"}
        if unknown:
            raise ConfigError(f"{entry}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
        label = value.get("label")
        if label is not None and not isinstance(label, str):
            raise ConfigError(f"{entry}: label must be text")
        colour = value.get("colour", value.get("color"))
        specs[str(key)] = LabelSpec(
            label=label, colour=None if colour is None else _colour(colour, entry)
        )
    return specs


def load_labels(path: Path | None) -> dict[str, LabelSpec]:
    if path is None:
        return {}
    from harness.config.validate import read_yaml

    return parse_labels(read_yaml(Path(path), f"labels file {path}"), f"labels file {path}")


def _normalise(key: str) -> str:
    return key.rstrip("/")


def lookup(specs: dict[str, LabelSpec], names: Iterable[str]) -> LabelSpec:
    """The first entry that matches one of a run's names (folder as given, folder name,
    run id), or an empty entry."""
    table = {_normalise(k): v for k, v in specs.items()}
    for name in names:
        spec = table.get(_normalise(str(name)))
        if spec is not None:
            return spec
    return LabelSpec()


def assign_styles(
    runs: dict[str, list[str]], specs: dict[str, LabelSpec], references: Iterable[str] = ()
) -> dict[str, RunStyle]:
    """Style per run (keyed by its first name, e.g. the run id): ``runs`` maps it to
    every name it may be listed under. Published rows (``references``, ``ref:...`` keys)
    default to grey: they are baselines, not contenders."""
    chosen = {key: lookup(specs, [key, *names]) for key, names in runs.items()}
    taken = {spec.colour for spec in chosen.values() if spec.colour}
    free = [c for c in PALETTE if c not in taken] or list(PALETTE)
    styles = {}
    for i, key in enumerate(sorted(runs)):
        spec = chosen[key]
        styles[key] = RunStyle(spec.label or key, spec.colour or free[i % len(free)])
    for key in references:
        spec = lookup(specs, [key])
        styles[key] = RunStyle(spec.label or key, spec.colour or REFERENCE_COLOUR)
    return styles
