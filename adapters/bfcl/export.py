"""Stored records -> BFCL's own result files, for the official evaluator.

Layout: ``<out>/result/<model>/<group>/BFCL_v4_<category>_result.json``, one JSON
object ``{"id", "result"}`` per line, sorted by entry index; ``<out>`` can serve
as ``BFCL_PROJECT_ROOT`` for ``bfcl evaluate``. The ``result`` of an entry is
what the official handlers store:
- single-turn, FC mode: ``[{name: arguments}, ...]`` with each arguments string
  exactly as the model sent it, when the reply has tool calls, else the reply
  text; prompt mode: the reply text;
- multi-turn: one list per user turn, one item per model reply in that turn
  (the FC form above, or the text in prompt mode);
- memory and web search: ``[[replies of the question turn]]``;
- a record that errored: ``"Error during inference: <message>"`` (as officially;
  note the official evaluator counts such an irrelevance entry as correct).

The model folder name must be a key of the official model registry whose
decoding matches the run (FC: names "a.b" sent as "a_b"; prompt mode: BFCL's
Python-list text); it must not contain "_" (the evaluator reads "_" as "/").
Only one trial is exported (BFCL files hold one result per entry). The mode of a
record is the one it was scored in (else its load option), never guessed from
its replies.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

from harness.boundary.atomic import open_atomic
from harness.boundary.json_value import JsonMapping, JsonObject, JsonValue
from harness.errors import ConfigError
from harness.store.records import OK
from harness.types import Trajectory

from .categories import Kind, is_category, kind_of, result_folder
from .decode import Result
from .multi_turn import turn_replies
from .official import FC_REGISTRY_NAME, PROMPT_REGISTRY_NAME
from .single_turn import first_result

VERSION_PREFIX = "BFCL_v4"

# An entry's result: one step's (single-turn), or each turn's steps.
ExportedResult = Result | list[list[Result]]


class _Row(TypedDict):
    id: str
    result: ExportedResult


def _object(value: JsonValue) -> JsonObject:
    """A record's object field (TypeError when it is something else)."""
    if not isinstance(value, dict):
        raise TypeError(f"{type(value).__name__} where an object belongs")
    return value


def _text(value: JsonValue) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{type(value).__name__} where text belongs")
    return value


def entry_result(record: JsonMapping) -> ExportedResult:
    """The official ``result`` value of one record."""
    if record.get("status") != OK or not record.get("trajectory"):
        error = _object(record.get("error") or {}).get("message") or record.get("status")
        return f"Error during inference: {error}"
    trajectory = Trajectory.from_dict(_object(record["trajectory"]))
    prompt_mode = is_prompt_record(record)
    kind = kind_of(_text(record["subset"]))
    if kind in (Kind.AST, Kind.IRRELEVANCE, Kind.RELEVANCE):
        return first_result(trajectory, prompt_mode)
    turns = [[reply.result(prompt_mode) for reply in turn] for turn in turn_replies(trajectory)]
    if kind is Kind.MULTI_TURN:
        return turns
    # Memory and web search: only the question (the last turn) is scored.
    return [turns[-1]] if turns else "Error during inference: no question turn"


def _exported_result(record: JsonMapping) -> ExportedResult:
    """``entry_result``, or one line naming the record whose conversation does
    not read back (a hand-edited record: more replies than turns, say)."""
    try:
        return entry_result(record)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, StopIteration) as exc:
        raise ConfigError(
            f"record {record['key']!r} cannot be exported ({type(exc).__name__}: "
            f"{str(exc)[:200]}); the run folder is damaged"
        ) from None


def is_prompt_record(record: JsonMapping) -> bool:
    """Prompt mode as scoring decided it, else from the load option."""
    details = _object(_object(record.get("score") or {}).get("details") or {})
    if "prompt_mode" in details:
        return bool(details["prompt_mode"])
    return _object(record.get("metadata") or {}).get("mode") == "prompt"


def _index_key(entry_id: str) -> tuple[int, str]:
    index = entry_id.rsplit("_", 1)[-1].split("-")[0]
    return (int(index) if index.isdigit() else 0, entry_id)


def default_model_name(records: Sequence[JsonMapping]) -> str:
    modes = {is_prompt_record(r) for r in records if r.get("status") == OK}
    if len(modes) > 1:
        raise ConfigError("records mix FC and prompt mode; export them separately")
    return PROMPT_REGISTRY_NAME if modes == {True} else FC_REGISTRY_NAME


def export_bfcl(
    records: Sequence[JsonMapping],
    out_dir: Path,
    model_name: str | None = None,
    trial: int = 0,
) -> list[Path]:
    """Write BFCL result files for the BFCL records of one trial; returns the files."""
    chosen = [
        r for r in records if r.get("benchmark", "bfcl") == "bfcl" and r.get("trial", 0) == trial
    ]
    name = model_name or default_model_name(chosen)
    if "_" in name:
        raise ConfigError(
            f"model name '{name}' contains '_' (the official evaluator reads it as '/')"
        )
    folder_name = name.replace("/", "_")
    subsets = []
    for record in chosen:  # before anything is written; a subset names a folder, too
        subset = record["subset"]
        if not isinstance(subset, str) or not is_category(subset):
            raise ConfigError(
                f"record {record['key']!r} has subset {record['subset']!r}, which is not a "
                "BFCL category; the run folder is damaged"
            )
        subsets.append(subset)

    by_category: dict[str, list[_Row]] = defaultdict(list)
    for subset, record in zip(subsets, chosen, strict=True):
        by_category[subset].append(
            {"id": _text(record["sample_id"]), "result": _exported_result(record)}
        )

    written = []
    for category, rows in sorted(by_category.items()):
        folder = Path(out_dir) / "result" / folder_name / result_folder(category)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{VERSION_PREFIX}_{category}_result.json"
        rows.sort(key=lambda row: _index_key(row["id"]))
        with open_atomic(path) as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        written.append(path)
    return written
