"""The fingerprint of the weights a run evaluates.

Comparing checkpoints of one training run is the main use of the harness, and
every step is usually served under one name and port: neither the model name
nor the URL says which weights answered. The fingerprint does, and goes into
the manifest (shown by leaderboard, compare and report) and into the response
cache key, so that new weights never get old weights' replies.

- ``--serve``: a hash over the checkpoint's files (and LoRA adapters'): each
  file's relative name, size and a SHA-256 of its first and last MiB. Cheap
  (2 MiB read per file) and it changes with every retrain, since a retrain
  rewrites the weight files' headers and tails.
- ``--api-base``: what the server says about itself (server_info.py: model ids,
  ``root``, ``created``; llama.cpp's ``/props``).
- an API model: its name (providers version their model names).

``--model-revision`` is added to any of these.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harness.boundary.json_value import JsonList, JsonMapping, JsonObject, JsonValue

if TYPE_CHECKING:
    from harness.models.server_info import ServerInfo

MIB = 1 << 20


class ServedCheckpoint(Protocol):
    """A checkpoint a run serves (serving's ServerSpec): its path and its adapters."""

    @property
    def checkpoint(self) -> str: ...

    @property
    def loras(self) -> Mapping[str, str]: ...


def _digest(material: object) -> str:
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def file_ends_sha256(path: Path, size: int) -> str:
    """SHA-256 of the first and last MiB of a file (all of it when small)."""
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        if size <= 2 * MIB:
            sha.update(handle.read())
        else:
            sha.update(handle.read(MIB))
            handle.seek(size - MIB)
            sha.update(handle.read(MIB))
    return sha.hexdigest()


def _checkpoint_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
    )


def files_description(checkpoint: str) -> JsonObject:
    """Names, sizes and end hashes of a local checkpoint's files; a hub id as it is."""
    root = Path(checkpoint).expanduser()
    if not root.exists():
        return {"hub_id": checkpoint}
    files: JsonList = []
    for path in _checkpoint_files(root):
        size = path.stat().st_size
        name = path.name if root.is_file() else str(path.relative_to(root))
        files.append({"name": name, "size": size, "ends_sha256": file_ends_sha256(path, size)})
    return {"files": files}


def make_fingerprint(source: str, described: JsonMapping, revision: str | None) -> JsonObject:
    """The manifest's ``fingerprint`` entry: a short ``id`` and what it was made of."""
    material: JsonObject = {"source": source, **described}
    if revision:
        material["revision"] = revision
    return {"id": f"{source}:{_digest(material)}", **material}


def served_fingerprint(
    checkpoint: str, loras: Mapping[str, str], revision: str | None = None
) -> JsonObject:
    """The fingerprint of a checkpoint this run serves (``--serve``)."""
    description = files_description(checkpoint)
    described: JsonObject = {"checkpoint": description}
    if loras:
        described["loras"] = {name: files_description(path) for name, path in sorted(loras.items())}
    fingerprint = make_fingerprint("files", described, revision)
    # The per-file list is long for a sharded checkpoint; the manifest keeps its size.
    files = description.get("files")
    if isinstance(files, list):  # a local checkpoint's (a hub id has none)
        fingerprint["checkpoint"] = {"files": len(files), "bytes": _total_size(files)}
    fingerprint.pop("loras", None)
    return fingerprint


def endpoint_fingerprint(
    api_bases: list[str],
    served: str,
    revision: str | None = None,
    api_key: str | None = None,
    now: float | None = None,
) -> tuple[JsonObject, list[ServerInfo]]:
    """The fingerprint of the weights behind ``--api-base`` (every replica asked),
    and the ServerInfo of each replica (for checks that need them)."""
    from harness.models.server_info import probe_server, self_description

    now = time.time() if now is None else now
    infos = [probe_server(url, api_key) for url in api_bases]
    described: JsonList = sorted(
        (self_description(info, served, now) for info in infos), key=lambda d: json.dumps(d)
    )
    # The URL is not part of it: the same weights on another port are the same model.
    fingerprint = make_fingerprint("server", {"served": served, "servers": described}, revision)
    if not all(info.reachable for info in infos):
        fingerprint["unverified"] = True  # a server did not answer: it said nothing
    return fingerprint, infos


def name_fingerprint(model: str, revision: str | None = None) -> JsonObject:
    """An API model or a built-in one: its name is all there is."""
    return make_fingerprint("name", {"model": model}, revision)


def object_fingerprint(client: object, name: str, revision: str | None = None) -> dict[str, Any]:
    """A client object the caller passed in: its class and name, and the revision
    the caller gives (as with an API model, only the caller knows the weights)."""
    kind = type(client)
    return make_fingerprint(
        "object", {"client": f"{kind.__module__}.{kind.__qualname__}", "model": name}, revision
    )


def run_fingerprint(
    model: str,
    api_base: str | None,
    spec: ServedCheckpoint | None = None,
    revision: str | None = None,
    builtin: bool = False,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The fingerprint of what a run evaluates; ConfigError when ``api_base``
    lists its models and ``model`` is not among them. A server that does not
    answer within the probe's few seconds is not waited for: ``say`` gets one
    line, and the run goes on unchecked.

    ``spec`` is the ServerSpec of a server the run starts (``--serve``).
    """
    if spec is not None:
        return served_fingerprint(spec.checkpoint, spec.loras, revision)
    if builtin or not api_base:
        return name_fingerprint(model, revision)
    from harness.models.openai_http import served_name
    from harness.models.server_info import check_model_served, unchecked_line

    served = served_name(model)
    urls = [url.strip().rstrip("/") for url in api_base.split(",")]
    fingerprint, infos = endpoint_fingerprint(urls, served, revision)
    for info in infos:
        check_model_served(served, info)
        line = unchecked_line(served, info)
        if line is not None and say is not None:
            say(line)
    return fingerprint


def _total_size(files: JsonList) -> int:
    """The bytes of the files ``files_description`` lists."""
    sizes = (entry.get("size") if isinstance(entry, dict) else None for entry in files)
    return sum(size for size in sizes if isinstance(size, int))


def _object(value: JsonValue | None) -> JsonMapping:
    return value if isinstance(value, dict) else {}


def check_same_weights(old: JsonMapping, new: JsonMapping, run_dir: object) -> None:
    """Refuse to resume a run folder with other weights than its records came from."""
    from harness.errors import ConfigError

    before, after = _object(old.get("fingerprint")), _object(new.get("fingerprint"))
    if before.get("unverified") or after.get("unverified"):
        return
    if before.get("id") and after.get("id") and before["id"] != after["id"]:
        raise ConfigError(
            f"{run_dir} holds answers of other weights (fingerprint {before['id']}, "
            f"now {after['id']}); "
            "use another --out folder"
        )
