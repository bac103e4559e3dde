"""Checks of command-line values made before any work starts.

Each raises ConfigError with one line naming the flag and what it needs, so a
bad command never gets as far as loading a benchmark or creating a folder.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from harness.errors import ConfigError

# More trials than this is a typo, and would allocate the work list up front.
MAX_TRIALS = 10_000
MAX_CONCURRENCY = 100_000
URL_SCHEMES = ("http", "https")
# Bootstrap resamples: fewer than 2 give no interval; more than this never finishes.
MAX_N_BOOT = 1_000_000


def n_boot(value: int) -> None:
    if not 2 <= value <= MAX_N_BOOT:
        raise ConfigError(f"--n-boot must be from 2 to {MAX_N_BOOT:,} (got {value})")


def positive(flag: str, value: float | None) -> None:
    """``value`` is a finite number > 0 (None: not given)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise ConfigError(f"{flag} must be a positive number (got {value})")


def not_negative(flag: str, value: float | None) -> None:
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise ConfigError(f"{flag} must be a number >= 0 (got {value})")


def at_most(flag: str, value: float | None, limit: float) -> None:
    if value is not None and value > limit:
        raise ConfigError(f"{flag} is at most {limit:,} (got {value:,})")


def in_unit_interval(flag: str, value: float | None) -> None:
    """0 < value <= 1 (a top-p)."""
    if value is not None and not (math.isfinite(value) and 0 < value <= 1):
        raise ConfigError(f"{flag} must be in (0, 1] (got {value})")


def check_url(url: str, flag: str = "--api-base") -> None:
    """An http(s) URL with a host and a valid port."""
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError when out of range or not a number
    except ValueError as exc:
        raise ConfigError(f"{flag} '{url}' is not a valid URL ({exc})") from None
    if parts.scheme not in URL_SCHEMES:
        raise ConfigError(f"{flag} '{url}' must start with http:// or https://")
    if not parts.hostname:
        raise ConfigError(f"{flag} '{url}' names no host")
    if port == 0:
        raise ConfigError(f"{flag} '{url}': port 0 is not a port a server listens on")
    if any(ch.isspace() for ch in url):
        raise ConfigError(f"{flag} '{url}' contains white space")


def writable_folder(path: Path, flag: str) -> None:
    """``path`` is a folder, or can be made one: it is not a file, and its
    nearest existing ancestor is a folder we can write in. Nothing is created."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{flag} {path} is a file, not a folder")
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ConfigError(f"{flag} {path}: {probe} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"{flag} {path} is not writable ({probe.absolute()}: {reason})") from None


def writable_file(path: Path, flag: str) -> None:
    """``path`` can be written as a file: not a folder, in a writable folder."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{flag} {path} is a folder; give a file name")
    writable_folder(path.parent, flag)


def read_yaml(path: Path, what: str) -> object:
    """A YAML file parsed; ConfigError, one line, if it cannot be read or parsed
    (missing, a folder, not UTF-8 text, malformed YAML). ``what`` names the
    file in the message (``--model-config x.yaml``)."""
    import yaml

    from harness.errors import yaml_problem

    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{what}: not a text file (YAML must be UTF-8)") from None
    except OSError as exc:
        raise ConfigError(f"{what}: cannot read ({exc.strerror or type(exc).__name__})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what}: not valid YAML ({yaml_problem(exc)})") from None
    except RecursionError:
        raise ConfigError(f"{what}: not valid YAML (nested too deep)") from None
