"""Finding and reading the FinMCP-Bench items.

Where the data comes from, in this order:
1. a local path (``options["data_dir"]``, else the ``data_dir`` argument). It may be
   the official layout (``test/benchmark_{all,single_tool,multi_tool,multi_turn}.json``),
   a folder holding those files directly, a folder holding other item files (such
   as the sample files ``demo_infer.json`` / ``benchmark_single_tool_part.json``),
   a parent folder with a ``finmcp`` sub-folder, or one JSON file;
2. else the Hugging Face dataset ``DianJin/FinMCP-Bench`` (raw JSON files through
   ``huggingface_hub``, not ``datasets``: the items do not fit one Arrow
   schema because ``tool_list`` is a list of groups in some items and a flat list
   in others).

Subsets: a subset whose official file is present is read from that file. Any
other subset is derived from each item's ``task`` field ("single step" ->
single_tool, "multi step" -> multi_tool, "multi turn" -> multi_turn) over the
pool of all items: ``benchmark_all.json`` when present, else every item file in
the folder, with items whose gold ``messages`` are identical kept once (the copy
with an ``id`` field, else the first in file-name order). ``all`` is the pool.

Sample ids: the item's ``id`` field when present, else ``h`` + the first 16 hex
digits of the SHA-256 of the item's canonical JSON, so ids never depend on an
item's position in a file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, TypeGuard

from harness.boundary.json_value import JsonValue
from harness.config.hub import HubUnreachableError
from harness.errors import ConfigError, DataNotFoundError
from harness.types import Message

HF_DATASET = "DianJin/FinMCP-Bench"
ALL = "all"
# Items per subset of the published benchmark (613 in benchmark_all.json).
OFFICIAL_SIZES = {"single_tool": 145, "multi_tool": 249, "multi_turn": 219}
SUBSET_FILES = {
    "single_tool": "benchmark_single_tool.json",
    "multi_tool": "benchmark_multi_tool.json",
    "multi_turn": "benchmark_multi_turn.json",
    ALL: "benchmark_all.json",
}
TASK_SUBSETS = {
    "single step": "single_tool",
    "multi step": "multi_tool",
    "multi turn": "multi_turn",
}


class _ItemMessages(TypedDict):
    messages: list[Message]  # the gold trajectory, OpenAI chat messages


class Item(_ItemMessages, total=False):
    """One benchmark item as its file has it: the fields read here (others are
    kept and count in the item's canonical JSON)."""

    id: JsonValue
    task: JsonValue
    scenery: JsonValue
    diff_level: JsonValue
    error: JsonValue
    tool_list: JsonValue


def _is_messages(value: JsonValue) -> TypeGuard[list[Message]]:
    return isinstance(value, list) and all(isinstance(message, dict) for message in value)


def _is_items(data: list[JsonValue]) -> TypeGuard[list[Item]]:
    return all(isinstance(item, dict) and _is_messages(item.get("messages")) for item in data)


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def item_id(item: Item) -> str:
    """The stable id of one item (see module docstring)."""
    if item.get("id") is not None and str(item["id"]).strip():
        return str(item["id"]).strip()
    digest = hashlib.sha256(canonical_json(item).encode("utf-8")).hexdigest()
    return "h" + digest[:16]


def subset_of_task(item: Item) -> str | None:
    return TASK_SUBSETS.get(str(item.get("task", "")).strip().lower())


@dataclass
class DataSource:
    """The items of every subset, and where they were read from."""

    location: str
    subsets: dict[str, list[Item]]
    files: dict[str, str] = field(default_factory=dict)  # file name -> sha256 prefix

    @property
    def pool(self) -> list[Item]:
        """Every item; tool schemas are reconstructed from these."""
        return self.subsets[ALL]


def _parse_json_or_lines(text: str) -> JsonValue:
    """A JSON document, or a list of the objects of a JSON Lines file (None if neither)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError:
        return None


def _read_items(path: Path) -> list[Item] | None:
    """The items of one file (JSON list or JSON Lines), or None when it holds none."""
    try:
        data = _parse_json_or_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, RecursionError):
        return None
    if isinstance(data, dict):  # tolerate {"data": [...]} wrappers
        data = next((v for v in data.values() if isinstance(v, list)), None)
    if not isinstance(data, list) or not data:
        return None
    if not _is_items(data):
        return None
    return data


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _dedupe(items: list[Item]) -> list[Item]:
    """Items with identical gold ``messages`` kept once, at the first one's place; a
    copy that has an ``id`` field is preferred to one without."""
    kept: dict[str, int] = {}
    unique: list[Item] = []
    for item in items:
        key = canonical_json(item["messages"])
        if key not in kept:
            kept[key] = len(unique)
            unique.append(item)
        elif unique[kept[key]].get("id") is None and item.get("id") is not None:
            unique[kept[key]] = item
    return unique


def _item_files(folder: Path) -> list[Path]:
    return sorted([*folder.glob("*.json"), *folder.glob("*.jsonl")])


def _data_folder(path: Path) -> Path:
    """The folder that holds the item files under a given path."""
    for candidate in (path / "test", path / "finmcp" / "test", path / "finmcp"):
        if candidate.is_dir() and _item_files(candidate):
            return candidate
    return path


def read_local(path: Path) -> DataSource:
    """Read every subset from a local file or folder (see module docstring)."""
    if path.is_file():
        items = _read_items(path)
        if items is None:
            raise ConfigError(f"FinMCP-Bench: {path} is not a JSON list of benchmark items")
        return _derive_subsets(str(path), _dedupe(items), {}, {path.name: _file_digest(path)})
    folder = _data_folder(path)
    files: dict[str, str] = {}
    official: dict[str, list[Item]] = {}
    others: list[Item] = []
    for file in _item_files(folder):
        items = _read_items(file)
        if items is None:
            continue
        files[file.name] = _file_digest(file)
        subset = next((s for s, name in SUBSET_FILES.items() if Path(name).stem == file.stem), None)
        if subset is not None:
            official[subset] = items
        else:
            others.extend(items)
    if not files:
        raise FileNotFoundError(f"no FinMCP-Bench item files in {folder}")
    if ALL in official:
        pool = official[ALL]
    else:
        pool = _dedupe([item for items in official.values() for item in items] + others)
    return _derive_subsets(str(folder), pool, official, files)


def _derive_subsets(
    location: str, pool: list[Item], official: dict[str, list[Item]], files: dict[str, str]
) -> DataSource:
    subsets: dict[str, list[Item]] = {ALL: pool}
    for subset in TASK_SUBSETS.values():
        if subset in official:
            subsets[subset] = official[subset]
        else:
            subsets[subset] = [item for item in pool if subset_of_task(item) == subset]
    return DataSource(location=location, subsets=subsets, files=files)


def download_from_hub() -> Path:
    """The local folder of the dataset's ``test/*.json`` (downloaded or from the cache)."""
    from huggingface_hub import snapshot_download  # lazy: only when no folder is given

    from harness.config.hub import fetch_from_hub

    folder = fetch_from_hub(
        lambda cached_only: snapshot_download(
            HF_DATASET,
            repo_type="dataset",
            allow_patterns=["test/*.json"],
            local_files_only=cached_only,
        )
    )
    return Path(folder)


def missing_data_message(local: Path | None, local_problem: str, hub_problem: str) -> str:
    looked = f"in {local} ({local_problem}) and " if local is not None else ""
    return (
        f"FinMCP-Bench data not found: looked {looked}on the Hugging Face Hub "
        f"(dataset {HF_DATASET}: {hub_problem}). Download the dataset "
        f"(huggingface-cli download {HF_DATASET} --repo-type dataset --local-dir DIR) "
        "and pass DIR as the data folder (--data-dir, or data_dir in the suite's options); "
        "DIR/test/benchmark_*.json or the JSON files directly in DIR both work."
    )


def load_source(local: Path | None) -> DataSource:
    """Items from the local path when it holds them, else from the Hugging Face Hub."""
    local_problem = ""
    if local is not None:
        if not local.exists():
            local_problem = "it does not exist"
        else:
            try:
                return read_local(local)
            except FileNotFoundError as exc:
                local_problem = str(exc)
    try:
        return read_local(download_from_hub())
    except HubUnreachableError:  # one line, the same for every subset
        raise
    except Exception as exc:  # offline, gated, renamed: one clear message instead
        hub_problem = f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
        raise DataNotFoundError(missing_data_message(local, local_problem, hub_problem)) from exc
