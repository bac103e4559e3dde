"""The reproducibility appendix of a paper, read from the runs' manifests (Markdown, LaTeX).

For every run: the model and the weights' fingerprint, sampling and seeds (trial t
uses seed + t), trials, the strategy and its settings, the user-simulator and judge
models, the benchmark package and data versions and prompt sources (the manifest's
``versions``, whose keys are ``<benchmark>.<what>``), the suite and its file's
hash, and the deviations in force: departures from the benchmark as published that
this run's settings make (non-standard feedback, a stand-in user or judge, tools in
the prompt, non-default options, numbers over less than the official set, subsets
not run), and each adapter's documented departures from the official code.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.report.leaderboard import RunResult, latex_escape
from harness.results.headlines import benchmark_label, sort_benchmarks
from harness.store.manifest import Manifest

if TYPE_CHECKING:
    from harness.task.contract import Adapter

HARNESS_KEYS = ("harness", "harness_git", "python", "litellm", "platform")
STAND_IN_USERS = ("scripted",)
STAND_IN_JUDGES = ("stub",)


@dataclass
class RunAppendix:
    label: str
    run: str
    items: list[tuple[str, str]]  # (what, value), in print order
    benchmarks: dict[str, list[tuple[str, str]]]  # benchmark label -> its versions and notes
    deviations: list[str] = field(default_factory=list)


def _text(value: object) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return " ".join(str(value).split())


def _model(manifest: Manifest) -> str:
    return _text((manifest.model or {}).get("name"))


def _sampling(manifest: Manifest) -> str:
    sampling = manifest.sampling or {}
    parts = [
        f"{key} {_text(sampling.get(key))}"
        for key in ("temperature", "top_p", "max_tokens")
        if key in sampling
    ]
    extra = sampling.get("extra")
    if extra:
        parts.append(f"extra {_text(extra)}")
    return ", ".join(parts) or "-"


def _seeds(manifest: Manifest) -> str:
    sampling = manifest.sampling or {}
    seed = sampling.get("seed", manifest.seed)
    trials = manifest.trials or 1
    if not isinstance(seed, int):
        return f"{_text(seed)} (trials: {trials})"
    if trials == 1:
        return f"{seed} (one trial)"
    return f"{seed} .. {seed + trials - 1} (trial t uses seed + t; {trials} trials)"


def _strategy(manifest: Manifest) -> str:
    strategy = manifest.strategy or {}
    if not isinstance(strategy, dict):
        return _text(strategy)
    text = _text(strategy.get("label") or strategy.get("name"))
    if strategy.get("prompt_version"):
        text += f"; prompts {strategy['prompt_version']}"
    settings = strategy.get("settings")
    if isinstance(settings, dict) and settings:
        text += "; settings " + _text(settings)
    return text


def _adapter(benchmark: str) -> Adapter | None:
    from harness.task.registry import find_adapter

    try:
        return find_adapter(benchmark)
    except Exception:  # an appendix must not fail on a broken adapter
        return None


def documented_deviations(benchmark: str) -> str:
    """The adapter's own list of departures from the official code (DEVIATIONS.md
    beside its module), as a path relative to the adapters folder, or ''."""
    adapter = _adapter(benchmark)
    if adapter is None:
        return ""
    folder = Path(inspect.getfile(type(adapter))).parent
    path = folder / "DEVIATIONS.md"
    return f"adapters/{folder.name}/DEVIATIONS.md" if path.is_file() else ""


def _benchmark_versions(manifest: Manifest, benchmark: str) -> list[tuple[str, str]]:
    versions = manifest.versions or {}
    prefix = f"{benchmark}."
    return [
        (k[len(prefix) :], _text(v)) for k, v in sorted(versions.items()) if k.startswith(prefix)
    ]


def _suite_options(manifest: Manifest) -> dict[str, dict[str, object]]:
    suite = manifest.suite or {}
    out: dict[str, dict[str, object]] = {}
    for entry in suite.get("entries") or [] if isinstance(suite, dict) else []:
        if isinstance(entry, dict) and entry.get("options"):
            out.setdefault(str(entry.get("benchmark")), {}).update(entry["options"])
    return out


def deviations(result: RunResult, manifest: Manifest) -> list[str]:
    """What departs from the benchmarks as published under this run's settings."""
    out = []
    if not str(result.env_feedback).startswith("standard"):
        out.append(f"environment feedback: {result.env_feedback}")
    model = manifest.model or {}
    if model.get("prompt_mode"):
        out.append("tools in the prompt, calls parsed from text (prompt mode)")
    if model.get("tool_choice") not in (None, "auto"):
        out.append(f"tool_choice sent: {model['tool_choice']}")
    if model.get("argument_max_length"):
        out.append(
            f"tools offered with string parameters bounded to {model['argument_max_length']} "
            "characters (--argument-max-length)"
        )
    options = _suite_options(manifest)
    for bench in sort_benchmarks(result.benchmarks):
        adapter = _adapter(bench)
        label = benchmark_label(bench)
        if adapter is not None and adapter.needs_user_model and result.user_model in STAND_IN_USERS:
            out.append(f"{label}: user simulator '{result.user_model}' (not an LLM user simulator)")
        if adapter is not None and adapter.needs_judge_model:
            own = adapter.default_judge_model
            if result.judge_model in STAND_IN_JUDGES:
                out.append(f"{label}: judge '{result.judge_model}' (an offline stand-in)")
            elif own and result.judge_model != own:
                out.append(f"{label}: judge {result.judge_model} (the benchmark's own: {own})")
        if options.get(bench):
            out.append(f"{label}: options {_text(options[bench])}")
        entry = result.benchmarks[bench]
        if entry.coverage is not None and entry.coverage.partial:
            out.append(f"{label}: partial, {entry.coverage.describe()}")
        elif entry.not_run:  # (a partial number's coverage already names them)
            out.append(f"{label}: not run: {', '.join(sorted(entry.not_run))}")
    return out


def run_appendix(result: RunResult, label: str) -> RunAppendix:
    from harness.store.run_store import RunStore

    manifest = RunStore(result.run_dir).load_manifest() if result.run_dir else Manifest()
    versions = manifest.versions or {}
    suite = manifest.suite or {}
    items = [
        ("run folder", _text(result.run_dir.name if result.run_dir else result.name)),
        ("model", _model(manifest)),
        ("weights fingerprint", _text(result.fingerprint)),
        ("sampling", _sampling(manifest)),
        ("seeds", _seeds(manifest)),
        ("strategy", _strategy(manifest)),
        ("environment feedback", _text(result.env_feedback)),
        ("user simulator", _text(result.user_model)),
        ("judge", _text(result.judge_model)),
        ("suite", f"{_text(suite.get('name'))} (sha256 {_text(suite.get('sha256'))[:12]})"),
        ("harness", f"{_text(versions.get('harness'))} (git {_text(versions.get('harness_git'))})"),
        ("python / litellm", f"{_text(versions.get('python'))} / {_text(versions.get('litellm'))}"),
    ]
    benchmarks = {}
    for bench in sort_benchmarks(result.benchmarks):
        rows = _benchmark_versions(manifest, bench)
        documented = documented_deviations(bench)
        if documented:
            rows.append(("documented departures from the official code", documented))
        rows += [("note", _text(n)) for n in result.benchmarks[bench].notes]
        benchmarks[benchmark_label(bench)] = rows
    return RunAppendix(label, result.name, items, benchmarks, deviations(result, manifest))


def build_appendix(results: list[RunResult], labels: dict[str, str]) -> list[RunAppendix]:
    return [run_appendix(r, labels.get(r.name, r.name)) for r in results if not r.is_reference]


def render_markdown(appendix: list[RunAppendix]) -> str:
    lines = ["# Reproducibility", ""]
    for run in appendix:
        lines += [f"## {run.label}", ""]
        lines += [f"- **{what}**: {value}" for what, value in run.items]
        for bench, rows in run.benchmarks.items():
            lines += ["", f"**{bench}**", ""]
            lines += [f"- {what}: {value}" for what, value in rows] or ["- no versions recorded"]
        lines += ["", "**Deviations in force**", ""]
        lines += [f"- {d}" for d in run.deviations] or ["- none beyond the documented ones"]
        lines.append("")
    return "\n".join(lines)


def render_latex(appendix: list[RunAppendix]) -> str:
    lines = ["% Generated by harness paper.", "\\section*{Reproducibility}", ""]
    for run in appendix:
        lines += [f"\\subsection*{{{latex_escape(run.label)}}}", "\\begin{description}"]
        lines += [
            f"  \\item[{latex_escape(what)}] {latex_escape(value)}" for what, value in run.items
        ]
        for bench, rows in run.benchmarks.items():
            body = "; ".join(f"{what}: {value}" for what, value in rows) or "no versions recorded"
            lines.append(f"  \\item[{latex_escape(bench)}] {latex_escape(body)}")
        lines.append("\\end{description}")
        lines.append("Deviations in force:")
        if run.deviations:
            lines.append("\\begin{itemize}")
            lines += [f"  \\item {latex_escape(d)}" for d in run.deviations]
            lines.append("\\end{itemize}")
        else:
            lines.append("none beyond the documented ones.")
        lines.append("")
    return "\n".join(lines)
