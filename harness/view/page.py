"""The viewer's page: the report's sample list and script, with its data from the server.

The page is the report's own (``harness.report.html``: filters, list, detail pane,
stylesheet and script); only its data source differs (``data-source="server"``:
data_source.js fetches the JSON endpoints of harness/view/server.py instead of
reading embedded blocks) and it adds a run list and a live status line.
"""

from __future__ import annotations

import html

from harness.report.html import asset_text, page_script, viewer_html


def page_policy(nonce: str) -> str:
    """Only the page's own script (by nonce) runs, and it talks only to its own server."""
    return (
        "default-src 'none'; connect-src 'self'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'nonce-{nonce}'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )


def viewer_page(nonce: str, title: str, runs: int) -> str:
    escaped = html.escape(title, quote=True)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escaped}</title><style>{asset_text('report.css')}</style></head>"
        '<body data-source="server">'
        f"<header><h1>{escaped}</h1>"
        f'<div>{runs} run(s) · <span id="live">connecting…</span></div>'
        '<nav><a href="#runs">runs</a><a href="#samples">samples</a>'
        '<span class="keys">j / k: next / previous sample</span></nav></header>'
        '<section id="runs"><h2>Runs</h2><div id="run-list"></div></section>'
        f'<section id="samples"><h2>Samples</h2>{viewer_html()}</section>'
        f'<script nonce="{nonce}">{page_script()}</script></body></html>\n'
    )
