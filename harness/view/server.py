"""The viewer's HTTP server: the page and three JSON endpoints, on 127.0.0.1 only.

Routes (GET only; anything else is 404 or 405):

- ``/``: the page (harness/view/page.py), a fresh script nonce each time;
- ``/api/index``: every sample row and the run list (harness/view/runs.py);
- ``/api/rows?since=VERSION``: the rows added or replaced since VERSION, which the
  page polls to follow a run still being written;
- ``/api/sample?run=NAME&key=KEY``: one sample's detail, as the report shows it
  (secrets masked, long strings cut at ``max_chars``).

No path is ever joined to a folder: runs are named by the viewer's own list, so no
request can reach a file outside the records. The server answers only requests
whose Host is 127.0.0.1 or localhost at its port, so that a web page elsewhere
cannot read the records through a name that resolves to this machine.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from harness.boundary.sanitise import dumps_safe
from harness.models.redact import masker
from harness.report.detail import sample_detail
from harness.report.html import MAX_SAMPLE_CHARS, cut_to_size, truncate_strings
from harness.store.inputs import SampleInput
from harness.store.records import Record
from harness.view.page import page_policy, viewer_page
from harness.view.runs import RunFolders

HOST = "127.0.0.1"


def shown_detail(record: Record, sample_input: SampleInput | None, max_chars: int) -> object:
    """The detail with held secrets masked (before any cut, as the report does), its
    long strings cut, and cut harder when still over the report's bound."""
    detail = masker().mask(sample_detail(record, sample_input))
    shown = truncate_strings(detail, max_chars)
    if max_chars > 0 and len(dumps_safe(shown, default=str)) > MAX_SAMPLE_CHARS:
        shown = cut_to_size(detail, max_chars)
    return shown


@dataclass
class Response:
    status: int
    content_type: str
    body: bytes
    policy: str | None = None


def json_response(data: object, status: int = HTTPStatus.OK) -> Response:
    body = dumps_safe(data, separators=(",", ":"), default=str).encode("utf-8")
    return Response(status, "application/json", body)


def text_response(status: int, text: str) -> Response:
    return Response(status, "text/plain; charset=utf-8", (text + "\n").encode("utf-8"))


class ViewerApp:
    """What each request gets, apart from HTTP itself (tests call it directly too)."""

    def __init__(self, folders: list[Path], max_chars: int = 20_000, title: str = "harness view"):
        self.runs = RunFolders(folders)
        self.max_chars = max_chars
        self.title = title

    def page(self, nonce: str) -> str:
        return viewer_page(nonce, self.title, len(self.runs.runs))

    def handle(self, target: str) -> Response:
        parts = urlsplit(target)
        query = parse_qs(parts.query)
        if parts.path == "/":
            nonce = secrets.token_urlsafe(16)
            body = self.page(nonce).encode("utf-8")
            return Response(HTTPStatus.OK, "text/html; charset=utf-8", body, page_policy(nonce))
        if parts.path == "/api/index":
            return json_response(self.runs.index())
        if parts.path == "/api/rows":
            since = (query.get("since") or [""])[0]
            if not since.isdigit():
                return text_response(HTTPStatus.BAD_REQUEST, "since must be a whole number")
            return json_response(self.runs.changes(int(since)))
        if parts.path == "/api/sample":
            run = (query.get("run") or [""])[0]
            key = (query.get("key") or [""])[0]
            record = self.runs.record(run, key)
            if record is None:
                return text_response(HTTPStatus.NOT_FOUND, "no such sample")
            sample_input = self.runs.sample_input(run, key)
            return json_response(shown_detail(record, sample_input, self.max_chars))
        return text_response(HTTPStatus.NOT_FOUND, "not found")


def make_handler(app: ViewerApp, port: int) -> type[BaseHTTPRequestHandler]:
    allowed_hosts = {f"{HOST}:{port}", f"localhost:{port}"}

    class Handler(BaseHTTPRequestHandler):
        server_version = "harness-view"
        sys_version = ""

        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            if self.headers.get("Host", "") not in allowed_hosts:
                self.send(text_response(HTTPStatus.FORBIDDEN, "this viewer answers only locally"))
                return
            try:
                response = app.handle(self.path)
            except Exception as exc:  # one bad request must not stop the viewer
                # The type only: an exception's text may quote a record.
                message = f"the viewer could not answer: {type(exc).__name__}"
                response = text_response(HTTPStatus.INTERNAL_SERVER_ERROR, message)
            self.send(response)

        def send(self, response: Response) -> None:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Content-Security-Policy", response.policy or "default-src 'none'")
            self.end_headers()
            self.wfile.write(response.body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            """Quiet: the page polls every few seconds."""

    return Handler


def make_server(app: ViewerApp, port: int = 0) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 at ``port`` (0: a free one); ``server_port`` says which."""
    server = ThreadingHTTPServer((HOST, port), BaseHTTPRequestHandler)
    server.RequestHandlerClass = make_handler(app, server.server_port)
    server.daemon_threads = True
    return server


def url_of(server: ThreadingHTTPServer) -> str:
    return f"http://{HOST}:{server.server_port}/"
