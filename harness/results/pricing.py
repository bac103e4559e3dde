"""What a run cost in money, where that can be known.

- **USD** for calls to API models, priced with litellm's cost map (the copy bundled
  with the installed litellm when ``LITELLM_LOCAL_MODEL_COST_MAP=True``, as the
  harness sets; its version is recorded). Tokens are priced at the model's base
  per-token input and output prices, summed per role over the run: long-context
  tiers and provider cache discounts are not applied. Replies replayed from the
  response cache are priced like the call they replay (the cost of the evaluation,
  not of one invocation).
- **GPU-seconds** for a checkpoint the run served itself (``--serve``): the
  server's wall time, start to stop, times the GPUs it held. A CPU-only server
  (llama.cpp, a custom command) says so instead.
- **Rehearsal ratio**: what the rehearsals cost beside the committed episodes, in
  USD when every call of both phases is priced, else in tokens.

A price that cannot be known is None with the reason, never 0. Built-in models
(oracle, null, scripted users) call no API and cost nothing; a model behind an
``--api-base`` is not an API with a price list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from harness.boundary.json_value import JsonObject
from harness.models.settings import is_builtin

if TYPE_CHECKING:
    from harness.store.manifest import Manifest

ROLES = ("actor", "rehearser", "critic", "user", "judge")
PHASES = ("rehearsal", "committed")
SCRIPTED_USERS = ("scripted", None, "", "-")


@dataclass(frozen=True)
class RoleModel:
    """Which model played a role, and whether calls to it have an API price."""

    name: str | None
    served: bool = False  # behind an --api-base or --serve endpoint


@dataclass
class MoneyCost:
    """A run's cost where it can be known; each None comes with its reason."""

    usd: float | None = None
    usd_note: str = ""  # why usd is None, or what it leaves out
    gpu_seconds: float | None = None
    gpu_note: str = ""
    server_seconds: float | None = None
    cpu_only: bool = False  # the run's server used no GPU
    rehearsal_ratio: float | None = None  # rehearsal cost / committed-episode cost
    rehearsal_basis: str = ""  # "USD" or "tokens"
    rehearsal_note: str = ""
    price_source: str = ""  # "litellm <version> cost map"
    usd_by_role: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def litellm_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("litellm")
    except PackageNotFoundError:
        return None


# The cost map litellm ships inside its package (the copy it reads itself with
# LITELLM_LOCAL_MODEL_COST_MAP=True). Read as a file: importing litellm costs
# seconds of CPU, which every leaderboard of an API model's run would pay.
COST_MAP_FILE = "model_prices_and_context_window_backup.json"


@lru_cache(maxsize=1)
def _cost_map() -> JsonObject:
    import importlib.util
    import json
    from pathlib import Path

    spec = importlib.util.find_spec("litellm")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        try:
            data = json.loads((Path(folder) / COST_MAP_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return {}


def _price(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


@lru_cache(maxsize=256)
def token_prices(model: str) -> tuple[float, float] | None:
    """(USD per input token, USD per output token) of ``model`` in litellm's map, or
    None when the map has no price for it. Looked up by the name as given, then
    without its provider prefix (``openai/gpt-4o`` is the map's ``gpt-4o``)."""
    table = _cost_map()
    names = [model]
    if "/" in model:
        names.append(model.split("/", 1)[1])
    for name in names:
        info = table.get(name)
        if not isinstance(info, dict):
            continue
        prompt = _price(info.get("input_cost_per_token"))
        completion = _price(info.get("output_cost_per_token"))
        if prompt is not None and completion is not None:
            return prompt, completion
    return None


def role_models(settings: dict[str, Any], manifest: Manifest) -> dict[str, RoleModel]:
    """The model of each role, from the run's settings (scores.json) or manifest."""
    model = settings.get("model", manifest.model) or {}
    if not isinstance(model, dict):
        model = {"name": model}
    actor = RoleModel(model.get("name"), served=bool(model.get("api_base") or manifest.server))
    strategy = settings.get("strategy", manifest.strategy) or {}
    options = (strategy.get("settings") or {}) if isinstance(strategy, dict) else {}

    def helper(name_key: str, base_key: str) -> RoleModel:
        name = options.get(name_key)
        if not name:
            return actor  # the model under test plays it
        return RoleModel(name, served=bool(options.get(base_key)))

    return {
        "actor": actor,
        "rehearser": helper("rehearser_model", "rehearser_api_base"),
        "critic": helper("critic_model", "critic_api_base"),
        "user": RoleModel(settings.get("user_model", manifest.user_model)),
        "judge": RoleModel(settings.get("judge_model", manifest.judge_model)),
    }


def _no_api(model: RoleModel) -> str:
    """Why calls of ``model`` have no API price ('' when they have one to look up)."""
    if model.name in SCRIPTED_USERS or (model.name and is_builtin(model.name)):
        return "built-in"
    if model.served:
        return "served"
    return ""


def _count(value: object) -> int:
    """A token or call count as scores.json holds it (``int()`` of it)."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"not a count: {value!r}")


def _object(value: object) -> Mapping[str, object]:
    """An object of scores.json, {} for a missing (or malformed) one."""
    return value if isinstance(value, dict) else {}


def price_usage(
    usage: Mapping[str, Mapping[str, object]], models: dict[str, RoleModel]
) -> tuple[float | None, str, dict[str, float]]:
    """USD of per-role usage: (total, note, by role). The total is None when a role
    that called an API model has no known price or reported no tokens."""
    by_role: dict[str, float] = {}
    unknown: list[str] = []
    left_out: list[str] = []
    for role, counts in sorted(usage.items()):
        calls = _count(counts.get("calls", 0))
        prompt = _count(counts.get("prompt_tokens", 0))
        completion = _count(counts.get("completion_tokens", 0))
        if not (calls or prompt or completion):
            continue
        model = models.get(role, RoleModel(None))
        why = _no_api(model)
        if why == "served":
            left_out.append(f"{role} ({model.name}, served: in GPU-s)")
            continue
        if why == "built-in":
            by_role[role] = 0.0
            continue
        if model.name is None:
            unknown.append(f"{role}: model not recorded")
            continue
        prices = token_prices(model.name)
        if prices is None:
            unknown.append(f"{role}: no price for {model.name} in the litellm cost map")
        elif calls and not (prompt or completion):
            unknown.append(f"{role}: {model.name} reported no tokens")
        else:
            by_role[role] = prompt * prices[0] + completion * prices[1]
    if unknown:
        return None, "; ".join(unknown), by_role
    priced = [r for r in by_role if not _no_api(models.get(r, RoleModel(None)))]
    if not priced:
        reason = "no API-priced calls" + (f" ({'; '.join(left_out)})" if left_out else "")
        return None, reason, by_role
    note = f"leaves out {'; '.join(left_out)}" if left_out else ""
    return sum(by_role.values()), note, by_role


def server_time(manifest: Manifest) -> tuple[float | None, float | None, bool, str]:
    """(server seconds, GPU-seconds, CPU only, note) of the servers the run started."""
    spans = manifest.server_spans
    if not manifest.server:
        model = manifest.model or {}
        if isinstance(model, dict) and model.get("api_base"):
            return None, None, False, "server not started by the run (--api-base): GPUs unknown"
        return None, None, False, "no served checkpoint"
    if not isinstance(spans, list) or not spans:
        return None, None, False, "server time not recorded for this run"
    seconds = sum(float(s.get("seconds") or 0.0) for s in spans)
    gpu_seconds = sum(float(s.get("seconds") or 0.0) * int(s.get("gpus") or 0) for s in spans)
    if all(int(s.get("gpus") or 0) == 0 for s in spans):
        return seconds, None, True, f"CPU-only server ({seconds:.0f} s wall time)"
    return seconds, gpu_seconds, False, ""


def _tokens(phase: Mapping[str, object]) -> int:
    return sum(
        int(v.get("prompt_tokens", 0)) + int(v.get("completion_tokens", 0))
        for role, v in phase.items()
        if role in ROLES and isinstance(v, dict)
    )


def _phase_usage(phase: Mapping[str, object]) -> dict[str, dict[str, object]]:
    return {role: v for role, v in phase.items() if role in ROLES and isinstance(v, dict)}


def rehearsal_ratio(
    costs: Mapping[str, object], models: dict[str, RoleModel]
) -> tuple[float | None, str, str]:
    """(rehearsal cost / committed-episode cost, basis, note) from scores.json's
    ``costs`` (the strategies' per-phase ledger summed over records)."""
    total = _object(costs.get("sum"))
    rehearsal, committed = _object(total.get("rehearsal")), _object(total.get("committed"))
    if not any(_count(v.get("calls", 0)) for v in _phase_usage(rehearsal).values()):
        return None, "", "no rehearsal"
    (rehearsal_usd, rehearsal_gap, _), (committed_usd, committed_gap, _) = (
        price_usage(_phase_usage(phase), models) for phase in (rehearsal, committed)
    )
    # In USD only when both phases are fully priced (nothing served or unknown).
    if rehearsal_usd is not None and committed_usd and not (rehearsal_gap or committed_gap):
        return rehearsal_usd / committed_usd, "USD", ""
    committed_tokens = _tokens(committed)
    if committed_tokens == 0:
        return None, "", "the committed episodes reported no tokens"
    return _tokens(rehearsal) / committed_tokens, "tokens", ""


def run_money(scores: dict[str, Any], manifest: Manifest) -> MoneyCost:
    """Everything above for one run folder's scores.json and manifest."""
    models = role_models(scores.get("settings") or {}, manifest)
    usd, usd_note, by_role = price_usage(scores.get("usage") or {}, models)
    seconds, gpu_seconds, cpu_only, gpu_note = server_time(manifest)
    ratio, basis, ratio_note = rehearsal_ratio(scores.get("costs") or {}, models)
    version = litellm_version()
    return MoneyCost(
        usd=usd,
        usd_note=usd_note,
        gpu_seconds=gpu_seconds,
        gpu_note=gpu_note,
        server_seconds=seconds,
        cpu_only=cpu_only,
        rehearsal_ratio=ratio,
        rehearsal_basis=basis,
        rehearsal_note=ratio_note,
        price_source=f"litellm {version} cost map" if version else "",
        usd_by_role=by_role,
    )
