"""Published numbers to show beside a user's runs (``--with-reference NAME``).

Each reference table is a YAML file under ``results/reference/`` (or inside the
installed package, under ``harness/reference_data/``). A file says where its
numbers come from and under which settings (user simulator, judge, metric
definitions), because published numbers are only comparable under the same
conditions. Values are written in percent, as published, and loaded as fractions
like every other metric in the harness.

File layout::

    name: paper
    title: ...
    source: ...
    settings: {user_model: ..., judge_model: ..., metrics: {...}}
    versions: {bench_a: {package: 1.0.1}}  # optional: what the rows were made with
    notes: [...]
    rows:
      - model: Qwen3-8B
        strategy: plain            # optional, default "plain"
        note: ...                  # optional
        scores: {bench_a: {overall: 44.04}, bench_b: {mean: 30.0}}  # by adapter name
        overall: 28.48             # optional published composite
        extra: {name: value}       # optional numbers that fit no benchmark column
        versions: {bench_a: {package: 0.1.3}}  # optional, overrides the table's

``versions`` name, per benchmark, the versions a row was made with under the keys a
run records them (its adapter's ``versions()``, e.g. ``{BENCH: {PACKAGE: VERSION}}``);
a row made with another version than the runs beside it is marked
(``harness.results.conditions``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import ConfigError

SUFFIX = ".yaml"


@dataclass
class ReferenceRow:
    model: str
    strategy: str
    scores: dict[str, dict[str, float]]  # benchmark -> metric -> fraction
    overall: float | None = None  # the published composite, as a fraction
    extra: dict[str, float] = field(default_factory=dict)
    note: str = ""
    versions: dict[str, dict[str, str]] = field(default_factory=dict)  # benchmark -> key -> version


@dataclass
class ReferenceTable:
    name: str
    title: str
    source: str
    settings: dict[str, object]
    notes: list[str]
    rows: list[ReferenceRow]
    path: Path


def reference_dirs() -> list[Path]:
    """Where reference files live: the installed package, then the source checkout."""
    package = Path(__file__).resolve().parents[1]
    dirs = [package / "reference_data"]
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file():
        dirs.append(checkout / "results" / "reference")
    return [d for d in dirs if d.is_dir()]


def available() -> list[str]:
    names = {p.stem for d in reference_dirs() for p in d.glob(f"*{SUFFIX}")}
    return sorted(names)


def _find(name: str) -> Path:
    candidate = Path(name)
    if candidate.suffix in (SUFFIX, ".yml") and candidate.is_file():
        return candidate
    for folder in reference_dirs():
        path = folder / f"{name}{SUFFIX}"
        if path.is_file():
            return path
    known = ", ".join(available()) or "none found"
    raise ConfigError(f"unknown reference '{name}' (available: {known})")


def _fraction(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}: expected a number in percent, got {value!r}")
    return float(value) / 100.0


def _versions(value: object, where: str) -> dict[str, dict[str, str]]:
    """benchmark -> key -> version, from a file's optional ``versions``."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise ConfigError(f"{where}: 'versions' maps a benchmark to {{key: version}}")
    return {str(b): {str(k): str(v) for k, v in keys.items()} for b, keys in value.items()}


def _row(data: object, where: str, versions: dict[str, dict[str, str]]) -> ReferenceRow:
    if not isinstance(data, dict) or "model" not in data:
        raise ConfigError(f"{where}: each row needs a 'model'")
    scores = {
        str(bench): {
            str(metric): _fraction(value, f"{where} {bench}.{metric}")
            for metric, value in (metrics or {}).items()
        }
        for bench, metrics in (data.get("scores") or {}).items()
    }
    overall = data.get("overall")
    return ReferenceRow(
        model=str(data["model"]),
        strategy=str(data.get("strategy") or "plain"),
        scores=scores,
        overall=None if overall is None else _fraction(overall, f"{where} overall"),
        extra={
            str(k): _fraction(v, f"{where} extra.{k}") for k, v in (data.get("extra") or {}).items()
        },
        note=str(data.get("note") or ""),
        versions={**versions, **_versions(data.get("versions"), where)},
    )


def load_reference(name: str) -> ReferenceTable:
    """A reference table by name (a file under ``results/reference/``) or by path."""
    from harness.config.validate import read_yaml

    path = _find(name)
    data = read_yaml(path, f"reference file {path}")
    if not isinstance(data, dict) or not data.get("rows") or not data.get("source"):
        raise ConfigError(f"{path}: a reference file needs 'source' and 'rows'")
    return ReferenceTable(
        name=str(data.get("name") or path.stem),
        title=str(data.get("title") or path.stem),
        source=str(data["source"]),
        settings=dict(data.get("settings") or {}),
        notes=[str(n) for n in data.get("notes") or []],
        rows=[
            _row(row, f"{path.name} row {i + 1}", _versions(data.get("versions"), path.name))
            for i, row in enumerate(data["rows"])
        ],
        path=path,
    )


def load_references(names: str | list[str] | None) -> list[ReferenceTable]:
    """Reference tables from a comma-separated string or a list of names."""
    if not names:
        return []
    if isinstance(names, str):
        names = [names]
    wanted = [part.strip() for item in names for part in item.split(",") if part.strip()]
    return [load_reference(name) for name in wanted]
