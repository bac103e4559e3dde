"""Where each benchmark's local data lives (``--data-dir``).

``--data-dir`` may be given several times, each one either

- ``PATH``: a root holding one folder per benchmark, named like its adapter
  (``PATH/<benchmark>``, the layout of a shared data folder); a benchmark without its
  own folder there is given ``PATH`` itself (one benchmark's folder, as before);
- ``NAME=PATH``: that benchmark's own folder, which wins over a root.

A suite of several benchmarks thus takes one root, and a single benchmark's
folder still works as it did.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.boundary.json_value import JsonValue
from harness.errors import ConfigError


@dataclass
class DataDirs:
    root: Path | None = None
    per_benchmark: dict[str, Path] = field(default_factory=dict)

    @classmethod
    def parse(cls, values: list[str] | None, known: list[str] | None = None) -> DataDirs:
        """From the ``--data-dir`` values; ``known`` benchmark names are checked."""
        dirs = cls()
        for value in values or []:
            name, sep, path = str(value).partition("=")
            if sep and name and "/" not in name and not Path(value).exists():
                if known is not None and name not in known:
                    raise ConfigError(
                        f"--data-dir {value}: unknown benchmark '{name}' "
                        f"(known: {', '.join(known)})"
                    )
                if not path:
                    raise ConfigError(f"--data-dir {value}: no path after '='")
                dirs.per_benchmark[name] = Path(path).expanduser()
                continue
            if dirs.root is not None:
                raise ConfigError("--data-dir: give one root folder; name the others NAME=PATH")
            dirs.root = Path(value).expanduser()
        return dirs

    @classmethod
    def of(cls, value: DataDirs | os.PathLike[str] | Mapping[str, object] | JsonValue) -> DataDirs:
        """From what callers hold: a DataDirs, a path, a manifest entry (as read
        from JSON), or None."""
        if isinstance(value, DataDirs):
            return value
        if value is None or value == "":
            return cls()
        if isinstance(value, Mapping):
            root = value.get("root")
            return cls(
                root=_path(root) if root else None,
                per_benchmark={k: _path(v) for k, v in value.items() if k != "root" and v},
            )
        return cls(root=_path(value))

    def for_benchmark(self, name: str) -> Path | None:
        if name in self.per_benchmark:
            return self.per_benchmark[name]
        if self.root is None:
            return None
        own = self.root / name
        return own if own.is_dir() else self.root

    def absolute(self) -> DataDirs:
        return DataDirs(
            root=self.root.resolve() if self.root else None,
            per_benchmark={k: v.resolve() for k, v in self.per_benchmark.items()},
        )

    def to_manifest(self) -> str | dict[str, str] | None:
        """A plain path (one root, as older manifests hold), a mapping, or None."""
        if not self.per_benchmark:
            return str(self.root) if self.root else None
        entry = {name: str(path) for name, path in sorted(self.per_benchmark.items())}
        if self.root:
            entry["root"] = str(self.root)
        return entry

    def to_args(self) -> list[str]:
        """Back to ``--data-dir`` values."""
        values = [str(self.root)] if self.root else []
        return values + [f"{k}={v}" for k, v in sorted(self.per_benchmark.items())]


def _path(value: object) -> Path:
    """A data folder given as text or a path; ConfigError for anything else."""
    if isinstance(value, str | os.PathLike):
        return Path(value)
    raise ConfigError(f"a data folder is a path, not {value!r}")
