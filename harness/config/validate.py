"""Checks of command-line values made before any work starts.

Each raises ConfigError with one line naming the flag and what it needs, so a
bad command never gets as far as loading a benchmark or creating a folder.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from harness.errors import ConfigError

# More trials than this is a typo, and would allocate the work list up front.
MAX_TRIALS = 10_000
MAX_CONCURRENCY = 100_000
URL_SCHEMES = ("http", "https")
# The longest file or folder name (in bytes) of Linux and macOS file systems.
NAME_MAX = 255
# Bootstrap resamples: fewer than 2 give no interval; more than this never finishes.
MAX_N_BOOT = 1_000_000


def number_argument(text: str) -> float:
    """A command-line number (every ``type=float`` flag, through harness.cli's
    parser): finite and >= 0. Each such flag is a duration, a temperature, a
    probability or a GPU count, none of which nan, inf or a negative value means;
    a flag's own range (> 0, at most 1) is checked where the flag is used."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0 (got {text})")
    return value


def text_argument(text: str) -> str:
    """A command-line text value (every flag without a type): not empty. An empty
    value is an unset shell variable (``--user-model "$USER_MODEL"``), which
    would otherwise silently mean the default."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty value")
    return text


def path_argument(text: str) -> Path:
    """A command-line path (every ``type=Path`` flag): not empty, which ``Path``
    would read as the working folder."""
    return Path(text_argument(text))


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
    for part in path.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise ConfigError(
                f"{flag} {path}: the name {part[:40]}... is {len(os.fsencode(part))} bytes, "
                f"more than the {NAME_MAX} a file system takes (give a shorter --out)"
            )
    if path.is_symlink() and not path.exists():
        raise ConfigError(
            f"{flag} {path} is a symbolic link to {os.readlink(path)}, which does not exist"
        )
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
    (missing, a folder, not UTF-8 text, malformed YAML, aliases that expand it
    past MAX_ALIAS_NODES). ``what`` names the file in the message
    (``--model-config x.yaml``)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{what}: not a text file (YAML must be UTF-8)") from None
    except OSError as exc:
        raise ConfigError(f"{what}: cannot read ({exc.strerror or type(exc).__name__})") from None
    return parse_yaml(text, what)


# Nodes that aliases may add to a document beyond those written in it. A YAML
# alias repeats a node by reference: nine levels of nine aliases each are 500
# bytes of text but 387 million nodes to anything that walks the data as a tree
# (dataclasses.asdict, JSON, the secret masker). Real configs repeat a few
# blocks of defaults: hundreds of nodes.
MAX_ALIAS_NODES = 10_000


def parse_yaml(text: str, what: str) -> object:
    """YAML text parsed with the safe loader; every YAML the command line reads
    comes through here. ConfigError, one line, when it is malformed, nested too
    deep, or its aliases expand it by more than MAX_ALIAS_NODES nodes (checked
    on the composed node graph, before any Python object is built)."""
    import yaml

    from harness.errors import yaml_problem

    loader = None
    try:
        # Building the loader reads the text: a control character fails here.
        loader = yaml.SafeLoader(text)
        node = loader.get_single_node()
        if node is None:
            return None
        written, expanded = _node_counts(node, what)
        if expanded - written > MAX_ALIAS_NODES:
            raise ConfigError(
                f"{what}: YAML aliases expand {written:,} nodes to {expanded:,} "
                f"(at most {MAX_ALIAS_NODES:,} more are allowed)"
            )
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what}: not valid YAML ({yaml_problem(exc)})") from None
    except RecursionError:
        raise ConfigError(f"{what}: not valid YAML (nested too deep)") from None
    finally:
        if loader is not None:
            loader.dispose()


def _node_counts(root: object, what: str) -> tuple[int, int]:
    """(distinct nodes in the graph, nodes of the tree with every alias expanded).

    Each node's expanded size is computed once (aliases share node objects), so
    this takes time linear in the text however large the expansion; a node that
    contains itself (``&a [*a]``) is refused: it expands without end."""
    import yaml

    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: object) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise ConfigError(f"{what}: a YAML alias refers to a node that contains it")
        open_nodes.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(key_node) + size(value) for key_node, value in node.value)
        open_nodes.discard(key)
        sizes[key] = total
        return total

    expanded = size(root)
    return len(sizes), expanded
