"""One self-contained HTML report over runs: leaderboard, comparisons, plots, sample viewer.

The file needs no network: CSS and JavaScript (package data files in ``assets/``)
are inlined, plots are base64 PNG, and a Content-Security-Policy forbids loading
anything else.

Model output is untrusted text. Tables are built here with every cell escaped.
Samples travel as JSON inside ``<script type="application/json">`` blocks (never
executed), with ``<``, ``>``, ``&``, U+2028 and U+2029 written as JSON escapes so
that no text can close the block; the viewer parses a sample's block only when it
is opened and builds the page with ``textContent``, never with ``innerHTML``. The
policy also allows only the report's own script (by nonce), so even an escaping
mistake could not run an injected script or event handler.

Credentials that a record may echo (keys in error text, environment secrets) are
masked before anything is written.

Large runs stay usable: the list holds only a compact index and is paginated;
long strings in a sample are cut at ``max_chars``, long lists and objects at
MAX_ITEMS_SHOWN entries and deep nesting at MAX_DEPTH_SHOWN levels (each marked as
truncated), and a sample whose JSON is still over MAX_SAMPLE_CHARS is cut harder,
so that one hostile record cannot bloat the file. Every sample is standard JSON
(non-finite numbers and invalid text are written as text), so every one opens.
"""

from __future__ import annotations

import base64
import html
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import TypedDict
from urllib.parse import quote

from harness.boundary.atomic import write_atomic
from harness.boundary.sanitise import dumps_safe
from harness.errors import ConfigError
from harness.models.redact import masker
from harness.report.compare import COLUMNS as COMPARE_COLUMNS
from harness.report.compare import condition_warnings, row_cells, scope_partial
from harness.report.detail import sample_detail
from harness.report.leaderboard import (
    RunResult,
    Table,
    build_tables,
    format_cell,
    load_board,
    reference_notes,
)
from harness.report.sample_list import (
    INDEX_COLUMNS,
    Names,
    SampleRow,
    sample_order,
    sample_row,
)
from harness.report.samples import PackedSamples, compress_text, pack_samples
from harness.results import stats
from harness.results.coverage import LEGEND
from harness.results.headlines import benchmark_label
from harness.results.reference import ReferenceTable
from harness.store.inputs import read_inputs, task_key
from harness.store.run_store import RunStore

DEFAULT_MAX_CHARS = 20_000
MAX_ITEMS_SHOWN = 200
MAX_DEPTH_SHOWN = 40
MAX_SAMPLE_CHARS = 2_000_000
PAGE_SIZE = 50
MAX_FLIPS_SHOWN = 50
MAX_BASELINES = 6  # up to this many runs, the page offers each as the baseline
ENTRY = INDEX_COLUMNS.index("entry")


@dataclass
class ReportOptions:
    reference: str | list[str] | None = None
    n_boot: int = stats.N_BOOT
    seed: int = stats.SEED
    max_chars: int = DEFAULT_MAX_CHARS  # 0: keep every string whole
    plots: bool = True
    title: str = "harness report"
    baseline: str | None = None  # the run others are compared against (default: the first)


@dataclass
class ReportSummary:
    path: Path
    samples: int
    size_bytes: int


# --- escaping -------------------------------------------------------------------------------


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def truncate_strings(
    value: object,
    max_chars: int,
    max_items: int = MAX_ITEMS_SHOWN,
    max_depth: int = MAX_DEPTH_SHOWN,
    start_depth: int = 0,
) -> object:
    """A copy of ``value`` with every string longer than ``max_chars``, every list
    and object with more than ``max_items`` entries and nesting deeper than
    ``max_depth`` (``value`` itself sitting at ``start_depth``) cut and marked.
    ``max_chars`` 0 keeps everything whole."""
    if max_chars <= 0:
        return value

    def cut(item: object, depth: int) -> object:
        if isinstance(item, str):
            if len(item) <= max_chars:
                return item
            return item[:max_chars] + f" … [truncated: {len(item) - max_chars} more characters]"
        if isinstance(item, (list, dict)) and depth >= max_depth:
            return f"[truncated: nested more than {max_depth} deep]"
        if isinstance(item, list):
            kept = [cut(v, depth + 1) for v in item[:max_items]]
            if len(item) > max_items:
                kept.append(f"[truncated: {len(item) - max_items} more items]")
            return kept
        if isinstance(item, dict):
            shown: dict[object, object] = {}
            for index, (key, v) in enumerate(item.items()):
                if index == max_items:
                    shown["…"] = f"[truncated: {len(item) - max_items} more keys]"
                    break
                shown[cut(key, depth + 1) if isinstance(key, str) else key] = cut(v, depth + 1)
            return shown
        return item

    return cut(value, start_depth)


# --- samples --------------------------------------------------------------------------------


def cut_to_size(detail: Mapping[str, object], max_chars: int) -> object:
    """A (masked) detail cut harder and harder, and at last to a stub, until its JSON
    is within MAX_SAMPLE_CHARS: for the rare sample still too large once cut at
    ``max_chars``."""
    chars, items, depth = max_chars, MAX_ITEMS_SHOWN, MAX_DEPTH_SHOWN
    while chars > 100:
        chars, items, depth = chars // 10, max(5, items // 4), max(8, depth // 2)
        cut = truncate_strings(detail, chars, items, depth)
        if len(dumps_safe(cut, default=str)) <= MAX_SAMPLE_CHARS:
            return cut
    stub = {name: detail.get(name) for name in ("status", "latency_s", "seed")}
    stub.update(trajectory={}, note="sample too large to show")
    return truncate_strings(stub, 1000)


def pack_details(details: Sequence[Mapping[str, object]], max_chars: int) -> PackedSamples:
    """The details packed, each distinct value masked and then cut once. A key
    echoed in output must not be shown: masked as data, before any JSON text exists
    (a pattern over JSON text can break its escapes), and before any cut (a cut
    secret would no longer be recognised)."""
    masking = masker()  # the known secrets gathered once for every value

    def prepare(value: object, depth: int) -> object:
        return truncate_strings(masking.mask(value), max_chars, start_depth=depth)

    def seal(detail: Mapping[str, object]) -> object:
        return cut_to_size(masking.mask(detail), max_chars)

    if max_chars <= 0:  # everything whole, no bound
        return pack_samples(details, prepare)
    return pack_samples(details, prepare, MAX_SAMPLE_CHARS, seal)


class SampleIndex(TypedDict):
    """The sample list as the page reads it (rows by INDEX_COLUMNS positions)."""

    columns: list[str]
    runs: list[str]
    benchmarks: list[str]
    subsets: list[str]
    error_kinds: list[str]
    rows: list[SampleRow]
    chunks: list[int]
    page_size: int


@dataclass
class SampleData:
    index: SampleIndex  # compact; compressed into one block, inflated on load
    packed: PackedSamples  # the details, shared and compressed in chunks

    @property
    def count(self) -> int:
        return len(self.index["rows"])


def collect_samples(results: list[RunResult], max_chars: int) -> SampleData:
    names = Names()
    rows: list[SampleRow] = []
    details: list[Mapping[str, object]] = []
    for result in results:
        if result.run_dir is None:
            continue
        names.position("runs", result.name)
        records = RunStore(result.run_dir).load_records()
        inputs = read_inputs(result.run_dir)
        for record in sorted(records.values(), key=sample_order):
            rows.append(sample_row(record, result.name, names, entry=-1))
            details.append(sample_detail(record, inputs.get(task_key(record.key))))
    packed = pack_details(details, max_chars)
    for row, entry in zip(rows, packed.roots, strict=True):
        row[ENTRY] = entry
    index: SampleIndex = {
        "columns": list(INDEX_COLUMNS),
        "runs": names.runs,
        "benchmarks": names.benchmarks,
        "subsets": names.subsets,
        "error_kinds": names.error_kinds,
        "rows": rows,
        "chunks": packed.chunk_starts,
        "page_size": PAGE_SIZE,
    }
    return SampleData(index, packed)


# --- HTML pieces -------------------------------------------------------------------------------


def table_html(table: Table) -> str:
    head = "".join(f"<th>{_esc(c.header)}</th>" for c in table.columns)
    body = []
    for row in table.rows:
        cells = []
        for column in table.columns:
            css = ' class="num"' if column.kind != "text" else ""
            cells.append(f"<td{css}>{_esc(format_cell(row.get(column.key), column.kind))}</td>")
        ref = ' class="ref"' if str(row.get("run", "")).startswith("ref:") else ""
        body.append(f"<tr{ref}>{''.join(cells)}</tr>")
    notes = "".join(f"<li>{_esc(n)}</li>" for n in table.notes)
    return (
        f'<h3 id="table-{_esc(table.key)}">{_esc(table.title)}</h3>'
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
    )


def sample_link(run: str, key: str, beside: str | None = None) -> str:
    """The viewer's address of a sample (a task key opens its first trial), shown
    beside the same task in run ``beside``."""
    target = "#sample=" + quote(f"{run}/{key}", safe="")
    return target + ("&with=" + quote(beside, safe="") if beside else "")


def flips_html(a: RunResult, b: RunResult, label: str, benchmark: str, keys: list[str]) -> str:
    links = ", ".join(
        f'<a class="flip" href="{_esc(sample_link(a.name, key, b.name))}">{_esc(key)}</a>'
        for key in keys[:MAX_FLIPS_SHOWN]
    )
    more = len(keys) - min(len(keys), MAX_FLIPS_SHOWN)
    return (
        f"<li>{_esc(benchmark)} — {_esc(label)} ({len(keys)}): {links or '-'}"
        f"{_esc(f' … and {more} more' if more else '')}</li>"
    )


def share_a_benchmark(a: RunResult, b: RunResult) -> bool:
    return bool(set(a.benchmarks) & set(b.benchmarks))


def comparison_html(a: RunResult, b: RunResult, n_boot: int, seed: int) -> str:
    """B against A on their shared tasks; what partial numbers cover is said once per
    baseline (``coverage_html``), not under every comparison."""
    comparisons = stats.compare_runs(a.tasks, b.tasks, n_boot=n_boot, seed=seed)
    parts = [f"<h3>B = {_esc(b.name)} against A = {_esc(a.name)}</h3>"]
    if not comparisons:
        return parts[0] + "<p>No shared tasks.</p>"
    header = "<tr>" + "".join(f"<th>{_esc(name)}</th>" for name in COMPARE_COLUMNS) + "</tr>"
    rows, warnings, flips = [], [], []
    for comparison in comparisons:
        for item in [comparison.headline, *comparison.subsets]:
            rows.append(
                "<tr>"
                + "".join(
                    f"<td>{_esc(v)}</td>"
                    for v in (
                        item.label,
                        item.metric,
                        *row_cells(item, scope_partial(a, b, item.label)),
                    )
                )
                + "</tr>"
            )
            warnings += [f"{item.label}: {w}" for w in item.warnings]
        warnings += condition_warnings(a, b, {comparison.benchmark})
        head = comparison.headline
        flips.append(flips_html(a, b, "A passed, B failed", comparison.benchmark, head.a_only))
        flips.append(flips_html(a, b, "B passed, A failed", comparison.benchmark, head.b_only))
    parts.append(
        f'<div class="scroll"><table><thead>{header}</thead><tbody>{"".join(rows)}</tbody>'
        "</table></div>"
    )
    if warnings:
        parts.append(
            '<ul class="warnings">'
            + "".join(f"<li>{_esc(w)}</li>" for w in dict.fromkeys(warnings))
            + "</ul>"
        )
    parts.append(
        '<p class="notes">Each flipped task opens A and B side by side.</p>'
        '<ul class="flips">' + "".join(flips) + "</ul>"
    )
    return "".join(parts)


def coverage_html(runs: list[RunResult]) -> str:
    """The partial mark explained once, then each run's partial benchmarks once."""
    lines = [
        f"{run.name} {benchmark_label(bench)}: {entry.coverage.describe()}"
        for run in runs
        for bench, entry in run.benchmarks.items()
        if entry.coverage is not None and entry.partial
    ]
    if not lines:
        return ""
    items = "".join(f"<li>{_esc(line)}</li>" for line in [LEGEND, *lines])
    return f'<ul class="warnings coverage">{items}</ul>'


def baseline_index(runs: list[RunResult], name: str | None) -> int:
    if name is None:
        return 0
    names = [r.name for r in runs]
    if name not in names:
        raise ConfigError(f"--baseline {name!r} is none of the runs ({', '.join(names)})")
    return names.index(name)


def comparisons_html(runs: list[RunResult], options: ReportOptions) -> str:
    """Every other run against the baseline; with up to MAX_BASELINES runs, the
    comparisons against each run too, one shown at a time (the page's baseline choice)."""
    chosen = baseline_index(runs, options.baseline)
    bases = range(len(runs)) if len(runs) <= MAX_BASELINES else [chosen]
    blocks, choices = [], []
    for i in bases:
        base = runs[i]
        # A run of other benchmarks has nothing to pair with: one line, not a section.
        others = [r for r in runs if r is not base and share_a_benchmark(base, r)]
        apart = [r.name for r in runs if r is not base and r not in others]
        inner = "".join(comparison_html(base, r, options.n_boot, options.seed) for r in others)
        inner += coverage_html([base, *others])
        if apart:
            inner += (
                f'<p class="notes">Not compared with {_esc(base.name)} (no benchmark in '
                f"common): {_esc(', '.join(apart))}</p>"
            )
        hidden = "" if i == chosen else " hidden"
        blocks.append(f'<div class="baseline" data-baseline="{i}"{hidden}>{inner}</div>')
        selected = " selected" if i == chosen else ""
        choices.append(f'<option value="{i}"{selected}>{_esc(base.name)}</option>')
    chooser = (
        '<div class="baseline-choice"><label>baseline (A) <select id="baseline">'
        + "".join(choices)
        + "</select></label></div>"
    )
    return (
        chooser + "<p>Δ = B − A on shared tasks; 95% paired bootstrap CI; McNemar exact test on "
        "tasks that passed in only one run; MDE = (z0.975 + z0.80) × SE(Δ), the smallest "
        "difference found significant 80% of the time.</p>" + "".join(blocks)
    )


def plots_html(results: list[RunResult]) -> str:
    from harness.report.plots import build_plots, png_bytes

    figures = []
    for plot in build_plots(results):
        data = base64.b64encode(png_bytes(plot)).decode("ascii")
        figures.append(
            f'<figure><img alt="{_esc(plot.title)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_esc(plot.title)}</figcaption></figure>"
        )
    return "".join(figures) or "<p>No plottable data.</p>"


def runs_html(results: list[RunResult]) -> str:
    items = []
    for r in results:
        if r.is_reference:
            continue
        items.append(
            f"<li><b>{_esc(r.name)}</b>: model {_esc(r.model)}, strategy {_esc(r.strategy)}, "
            f"env feedback {_esc(r.env_feedback)}, user {_esc(r.user_model)}, "
            f"judge {_esc(r.judge_model)}"
            + (f", step {_esc(r.step)}" if r.step is not None else "")
            + (f", weights {_esc(r.fingerprint)}" if r.fingerprint else "")
            + f" — {_esc(r.run_dir)}</li>"
        )
    return "<ul>" + "".join(items) + "</ul>"


DATA_TYPE = "text/x-deflate-base64"  # not a script type: the browser never runs the blocks
ASSETS = "assets"  # package data beside this module: the page's CSS and script


def asset_text(name: str) -> str:
    """One of the report's own files (``harness/report/assets/NAME``), shipped in the wheel."""
    return (
        resources.files("harness.report")
        .joinpath(ASSETS)
        .joinpath(name)
        .read_text(encoding="utf-8")
    )


def page_script() -> str:
    """The page's script: where its samples come from, then the viewer (one script, so
    that one nonce allows it)."""
    return asset_text("data_source.js") + asset_text("sample.js") + "\n" + asset_text("viewer.js")


def viewer_html() -> str:
    """The sample list's filters, list, pager and detail pane (the report's and
    `harness view`'s)."""
    return (
        '<div class="filters">'
        '<label>run <select id="f-run"><option value="">all</option></select></label>'
        '<label>benchmark <select id="f-bench"><option value="">all</option></select></label>'
        '<label>subset <select id="f-subset"><option value="">all</option></select></label>'
        '<label>outcome <select id="f-outcome"><option value="">all</option>'
        '<option value="pass">passed</option><option value="fail">failed</option>'
        '<option value="error">error</option></select></label>'
        '<label>error kind <select id="f-error"><option value="">all</option></select></label>'
        '<label>search <input id="f-text" type="search" placeholder="key or error kind"></label>'
        '<span id="count"></span></div>'
        '<div class="viewer"><div><div id="list"></div><div id="pager">'
        '<button id="prev" type="button">◀</button><span id="page"></span>'
        '<button id="next" type="button">▶</button></div></div>'
        '<div id="detail"></div></div>'
    )


def distinct_names(results: list[RunResult]) -> list[RunResult]:
    """The runs with names made distinct ("name (2)" for a second run of that name:
    two folders of one run), so that the viewer and its links tell them apart."""
    seen: dict[str, int] = {}
    distinct = []
    for result in results:
        count = seen[result.name] = seen.get(result.name, 0) + 1
        distinct.append(result if count == 1 else replace(result, name=f"{result.name} ({count})"))
    return distinct


def render_report(
    results: list[RunResult],
    references: list[ReferenceTable],
    options: ReportOptions,
) -> tuple[str, int]:
    """The report's HTML text and the number of samples it holds."""
    results = distinct_names(results)
    runs = [r for r in results if not r.is_reference]
    baseline_index(runs, options.baseline)  # a bad --baseline fails before any work
    samples = collect_samples(runs, options.max_chars)
    index_json = dumps_safe(samples.index, separators=(",", ":"), default=str)
    nonce = secrets.token_urlsafe(16)
    policy = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'nonce-{nonce}'; base-uri 'none'; form-action 'none'"
    )
    generated = datetime.now(timezone.utc).isoformat(timespec="seconds")
    tables = "".join(table_html(t) for t in build_tables(results))
    footer = reference_notes(references)
    if footer:
        tables += '<ul class="notes">' + "".join(f"<li>{_esc(n)}</li>" for n in footer) + "</ul>"
    sections = [
        f'<section id="runs"><h2>Runs</h2>{runs_html(results)}</section>',
        f'<section id="leaderboard"><h2>Leaderboard</h2>{tables}</section>',
    ]
    if len(runs) >= 2:
        sections.append(
            '<section id="comparison"><h2>Paired comparisons</h2>'
            f"{comparisons_html(runs, options)}</section>"
        )
    if options.plots:
        sections.append(f'<section id="plots"><h2>Plots</h2>{plots_html(results)}</section>')
    sections.append(f'<section id="samples"><h2>Samples</h2>{viewer_html()}</section>')
    body = "".join(sections)
    names = ["runs", "leaderboard", "comparison", "plots", "samples"]
    nav = "".join(f'<a href="#{n}">{n}</a>' for n in names if f'<section id="{n}">' in body)
    # Base64 blocks: no record text can hold markup, whatever it contains.
    data_blocks = [
        f'<script type="{DATA_TYPE}" id="sample-index">{compress_text(index_json)}</script>'
    ]
    data_blocks += [
        f'<script type="{DATA_TYPE}" id="c{i}">{chunk}</script>'
        for i, chunk in enumerate(samples.packed.chunks)
    ]
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_esc(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(options.title)}</title><style>{asset_text('report.css')}</style></head><body>"
        f"<header><h1>{_esc(options.title)}</h1>"
        f"<div>generated {_esc(generated)} · {len(runs)} run(s) · "
        f"{samples.count} sample record(s)</div>"
        f"<nav>{nav}</nav></header>"
        + body
        + "\n".join(data_blocks)
        + f'<script nonce="{nonce}">{page_script()}</script></body></html>\n'
    )
    return page, samples.count


def build_report(
    run_dirs: list[Path], out: Path, options: ReportOptions | None = None
) -> ReportSummary:
    options = options or ReportOptions()
    results, references = load_board(run_dirs, options.reference, options.n_boot, options.seed)
    text, count = render_report(results, references, options)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, text)
    return ReportSummary(out, count, out.stat().st_size)
