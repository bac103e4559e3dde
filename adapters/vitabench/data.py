"""VitaBench task records: where the task files are, and what a task holds.

The official data is the Hugging Face dataset ``meituan-longcat/VitaBench``, laid
out as ``<set>/tasks.json`` (Chinese) and ``<set>/tasks_en.json`` (English), where
``<set>`` is ``delivery``, ``instore``, ``ota`` or ``cross_domain``. A local folder
with that layout, or with the official repository's ``data/vita/domains/<set>/``
layout, works too.

The raw JSON files are fetched with ``huggingface_hub`` rather than through
``datasets.load_dataset`` (which the project does not depend on): every task carries its
own database with task-specific keys, and turning the records into Arrow tables
would merge those schemas (adding null fields, changing number types), which
would change the databases the agent sees.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.boundary.json_value import JsonObject, JsonValue, list_field, object_field
from harness.config.hub import HubUnreachableError
from harness.errors import ConfigError
from harness.errors import DataNotFoundError as HarnessDataNotFoundError

from .database import as_objects

HF_DATASET = "meituan-longcat/VitaBench"
# Tasks in each task set of the released benchmark (the official set of Avg).
TASKS_PER_SET = 100
SCENARIOS = ("delivery", "instore", "ota", "cross")
# The benchmark's folder name of each scenario's task set.
SCENARIO_FOLDERS = {
    "delivery": "delivery",
    "instore": "instore",
    "ota": "ota",
    "cross": "cross_domain",
}
TASK_FILES = {"zh": "tasks.json", "en": "tasks_en.json"}
DEFAULT_LANGUAGE = "zh"  # the benchmark's default (--language chinese)
_LANGUAGE_NAMES = {"zh": "zh", "chinese": "zh", "en": "en", "english": "en"}

Downloader = Callable[[str], Path]


class DataNotFoundError(HarnessDataNotFoundError):
    """The task file is neither in the given folder nor obtainable from the Hub."""


def normalise_language(value: object) -> str:
    """``en``/``english`` -> ``en``; ``zh``/``chinese``/None -> ``zh``."""
    if value is None:
        return DEFAULT_LANGUAGE
    language = _LANGUAGE_NAMES.get(str(value).strip().lower())
    if language is None:
        raise ConfigError(f"unknown VitaBench language {value!r}; use 'zh' or 'en'")
    return language


def relative_task_path(scenario: str, language: str) -> str:
    """The task file's path inside the dataset, e.g. ``cross_domain/tasks_en.json``."""
    return f"{SCENARIO_FOLDERS[scenario]}/{TASK_FILES[language]}"


def local_candidates(root: Path, scenario: str, language: str) -> list[Path]:
    relative = relative_task_path(scenario, language)
    return [root / relative, root / "data" / "vita" / "domains" / relative]


def download_from_hub(relative: str) -> Path:
    """Fetch one file of the dataset (or take it from the local Hub cache)."""
    from huggingface_hub import hf_hub_download  # lazy: only when no folder is given

    from harness.config.hub import fetch_from_hub

    return Path(
        fetch_from_hub(
            lambda cached_only: hf_hub_download(
                repo_id=HF_DATASET,
                repo_type="dataset",
                filename=relative,
                local_files_only=cached_only,
            )
        )
    )


def how_to_get_data() -> str:
    return (
        f"To get the data, download the dataset once with "
        f"`hf download {HF_DATASET} --repo-type dataset --local-dir <folder>` "
        f"and pass that folder as the data directory (data_dir / options data_dir), "
        f"or run with access to the Hugging Face Hub."
    )


def locate_task_file(
    scenario: str, language: str, data_dir: Path | None, downloader: Downloader
) -> Path:
    """The task file of one scenario and language, or DataNotFoundError saying
    where it looked and how to get the data."""
    if scenario not in SCENARIOS:
        raise ConfigError(f"unknown VitaBench scenario {scenario!r}; choose from {SCENARIOS}")
    if data_dir is not None:
        candidates = local_candidates(Path(data_dir), scenario, language)
        for path in candidates:
            if path.is_file():
                return path
        looked = ", ".join(str(path) for path in candidates)
        raise DataNotFoundError(
            f"VitaBench {scenario} tasks ({language}) not found; looked for {looked}. "
            + how_to_get_data()
        )
    relative = relative_task_path(scenario, language)
    try:
        return downloader(relative)
    except HubUnreachableError:  # one line, the same for every subset
        raise
    except Exception as exc:  # offline, missing cache, hub errors: one clear message
        raise DataNotFoundError(
            f"VitaBench {scenario} tasks ({language}) not found: no data directory was given, "
            f"and the Hugging Face dataset {HF_DATASET} file {relative} could not be "
            f"fetched or found in the local Hub cache ({type(exc).__name__}: {exc}). "
            + how_to_get_data()
        ) from exc


def read_task_file(path: Path) -> list[JsonObject]:
    with open(path, encoding="utf-8") as handle:
        records = json.load(handle)
    if not isinstance(records, list) or not all(
        isinstance(record, dict) and "id" in record for record in records
    ):
        raise ConfigError(f"{path} is not a VitaBench task file (a JSON list of tasks with ids)")
    return records


@dataclass(frozen=True)
class VitaTask:
    """One task record with the scenario and language it runs in."""

    record: JsonObject
    scenario: str
    language: str

    @property
    def task_id(self) -> str:
        return str(self.record["id"])

    @property
    def instructions(self) -> str:
        return str(self.record.get("instructions") or "")

    @property
    def user_profile(self) -> JsonObject:
        scenario = self.record.get("user_scenario") or {}
        profile = scenario.get("user_profile") if isinstance(scenario, dict) else None
        return profile if isinstance(profile, dict) else {}

    @property
    def persona(self) -> str:
        # The simulator reads the profile as the Python literal of the dict.
        return str(self.user_profile)

    @property
    def user_id(self) -> str:
        environment = object_field(self.record.get("environment"))
        profile = self.user_profile
        return str(
            environment.get("user_id") or profile.get("user_id") or profile.get("user id") or ""
        )

    @property
    def time(self) -> str:
        return str(object_field(self.record.get("environment")).get("time") or "")

    @property
    def rubrics(self) -> list[str]:
        """State rubrics of every expected state, then the overall rubrics,
        de-duplicated keeping the first occurrence."""
        criteria = object_field(self.record.get("evaluation_criteria"))
        texts: list[JsonValue] = []
        for state in as_objects(criteria.get("expected_states")):
            texts.extend(list_field(state.get("state_rubrics")))
        texts.extend(list_field(criteria.get("overall_rubrics")))
        return list(dict.fromkeys(str(text) for text in texts))

    @property
    def required_orders(self) -> list[JsonObject]:
        """The required orders, bookings and reservations. Every expected state of
        the released data lists the same ones; the union keeps the first copy."""
        criteria = object_field(self.record.get("evaluation_criteria"))
        seen: dict[str, JsonObject] = {}
        for state in as_objects(criteria.get("expected_states")):
            for order in list_field(state.get("required_orders")):
                if isinstance(order, dict):
                    seen.setdefault(json.dumps(order, sort_keys=True, ensure_ascii=False), order)
        return list(seen.values())

    @property
    def initial_records(self) -> dict[str, JsonObject]:
        """Orders, bookings and reservations present before the episode, by id.

        Each is listed under its dict key and under its own id field: in one
        released task (in-store ``10826054``) the two differ."""
        environment = object_field(self.record.get("environment"))
        records: dict[str, JsonObject] = {}
        for collection, id_field in (
            ("orders", "order_id"),
            ("books", "book_id"),
            ("reservations", "reservation_id"),
        ):
            for key, value in object_field(environment.get(collection)).items():
                if isinstance(value, dict):
                    records[str(key)] = value
                    if value.get(id_field):
                        records[str(value[id_field])] = value
        return records
