"""The cost cells of the summary (USD, GPU-seconds, rehearsal ratio) and where they come from."""

from __future__ import annotations

from harness.report.leaderboard.rows import RunResult
from harness.results.pricing import MoneyCost


def money_cells(money: MoneyCost | None) -> dict[str, object]:
    """The summary's cost cells: None ("-") where a cost cannot be known."""
    if money is None:
        return {}
    if money.cpu_only:
        gpu: str | float | None = "CPU-only"
    else:
        gpu = money.gpu_seconds
    ratio = None
    if money.rehearsal_ratio is not None:
        ratio = f"{money.rehearsal_ratio:.2f}× {money.rehearsal_basis}"
    return {"cost_usd": money.usd, "gpu_s": gpu, "rehearsal_ratio": ratio}


def _money_reasons(money: MoneyCost) -> list[str]:
    """Why a run's cost cells show "-" (or "CPU-only"), and what a known USD leaves out."""
    found = []
    if money.usd is None:
        found.append(f'cost (USD) "-": {money.usd_note}')
    elif money.usd_note:
        found.append(f"cost (USD) {money.usd_note}")
    if money.cpu_only:
        found.append(f'GPU-s "CPU-only": {money.gpu_note}')
    elif money.gpu_seconds is None:
        found.append(f'GPU-s "-": {money.gpu_note}')
    if money.rehearsal_ratio is None:
        found.append(f'rehearsal cost × "-": {money.rehearsal_note}')
    return found


def money_notes(results: list[RunResult]) -> list[str]:
    """Where each cost figure comes from, and each reason for a "-", said once."""
    moneys = [(r.name, r.cost.money) for r in results if r.cost and r.cost.money]
    if not moneys:
        return []
    sources = sorted({m.price_source for _, m in moneys if m.price_source})
    notes = [
        "cost (USD): API calls at base per-token prices from the "
        + (", ".join(sources) or "litellm cost map")
        + " (no long-context tiers or cache discounts; replies replayed from the response "
        "cache priced as the calls they replay). GPU-s: wall time of the server the run "
        "started (--serve) × its GPUs. rehearsal cost ×: rehearsals' cost over the "
        "committed episodes' (USD when every call is priced, else tokens)."
    ]
    reasons: dict[str, list[str]] = {}
    for name, money in moneys:
        for text in _money_reasons(money):
            reasons.setdefault(text, []).append(name)
    notes += [f"{text} ({', '.join(names)})" for text, names in reasons.items()]
    return notes
