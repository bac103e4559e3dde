"""What went wrong with a sample, in a few words and with its likely cause.

A run's errors are recorded one per sample with the exception's text
(``Record.error``); a reader wants the kind (connection refused, no reply in
time, HTTP 500 ...) once, with what probably caused it, and a count.
``classify`` turns one record's error into an ``ErrorKind``; ``ErrorTally``
counts them over a run, in the order they were first seen.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from harness.models.redact import redact_url
from harness.store.records import SCORE_ERROR

# A request URL as the direct client writes it into its error messages.
_URL = re.compile(r"\bat (https?://\S+?)[:,]?(?:\s|$)")
_CONNECTION_REFUSED = re.compile(
    r"Cannot connect to host|Connect call failed|Connection refused|ConnectionRefused", re.I
)
_CONNECTION_LOST = re.compile(
    r"ServerDisconnected|Server disconnected|Connection reset|ConnectionReset|"
    r"RemoteProtocolError|ClientPayloadError|Connection error",
    re.I,
)
_NO_REPLY = re.compile(r"no reply within ([\d.]+) s")
_HTTP = re.compile(r"\bHTTP (\d{3})\b")
MESSAGE_CHARS = 160


@dataclass(frozen=True)
class ErrorKind:
    kind: str  # what groups errors: "connection refused", "HTTP 500", "KeyError"
    cause: str  # one line: the kind, where, and what probably caused it


def first_line(text: str, limit: int = MESSAGE_CHARS) -> str:
    line = " ".join(str(text).strip().splitlines()[:1]).strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _where(message: str, api_base: str | None) -> str:
    """The URL the error names, else the model's endpoint, else ''."""
    found = _URL.search(message)
    if found:
        return redact_url(found.group(1))
    return redact_url(api_base.split(",")[0].strip()) if api_base else ""


def _at(where: str) -> str:
    return f" at {where}" if where else ""


def _http_kind(status: int, where: str) -> ErrorKind:
    kind = f"HTTP {status}"
    if status == 404:
        path = urlsplit(where).path.rstrip("/") if where else ""
        if where and not path.endswith("/v1") and "/v1/" not in path:
            return ErrorKind(kind, f"HTTP 404{_at(where)} — does --api-base need /v1?")
        return ErrorKind(kind, f"HTTP 404{_at(where)} — is the model name right?")
    if status in (401, 403):
        return ErrorKind(kind, f"HTTP {status}{_at(where)} — is the API key set and valid?")
    if status == 429:
        return ErrorKind(kind, f"rate limited{_at(where)} — lower --concurrency?")
    if status >= 500:
        return ErrorKind(kind, f"server error (HTTP {status}){_at(where)} — see the server's log")
    return ErrorKind(kind, f"request refused (HTTP {status}){_at(where)}")


def classify(error: Mapping[str, object] | str | None, api_base: str | None = None) -> ErrorKind:
    """The kind of one record's ``error`` ({type, message}, or a bare text);
    ``api_base``: the model's endpoint, named when the message does not say where."""
    fields: Mapping[str, object] = (
        error if isinstance(error, dict) else {"message": error} if error else {}
    )
    kind_of = str(fields.get("type") or "error")
    message = str(fields.get("message") or "")
    where = _where(message, api_base)
    if _CONNECTION_REFUSED.search(message):
        return ErrorKind(
            "connection refused", f"connection refused{_at(where)} — is the server up?"
        )
    if _CONNECTION_LOST.search(message):
        return ErrorKind(
            "connection lost",
            f"the server{_at(where)} closed the connection — did it stop or crash?",
        )
    no_reply = _NO_REPLY.search(message)
    if no_reply:
        return ErrorKind(
            "no reply in time",
            f"no reply within {no_reply.group(1)} s{_at(where)} — is the server overloaded? "
            "(--timeout)",
        )
    if "ran past its" in message and "timeout" in message:
        return ErrorKind("episode timeout", f"{first_line(message)} (--episode-timeout)")
    status = _HTTP.search(message)
    if status:
        return _http_kind(int(status.group(1)), where)
    return ErrorKind(kind_of, f"{kind_of}: {first_line(message)}" if message else kind_of)


@dataclass
class KindCount:
    kind: ErrorKind
    count: int = 0
    latest: str = ""  # the latest such error's message (first line)


@dataclass
class ErrorTally:
    """Errors of a run by kind, in the order first seen."""

    api_base: str | None = None
    kinds: dict[str, KindCount] = field(default_factory=dict)

    def add(self, error: Mapping[str, object] | str | None, status: str) -> KindCount:
        """Count one errored record; the kind's tally (count 1: seen first now)."""
        kind = classify(error, self.api_base)
        if status == SCORE_ERROR:  # the scorer's failure, not the model's server
            kind = ErrorKind(f"scoring: {kind.kind}", f"scoring failed: {kind.cause}")
        tally = self.kinds.setdefault(kind.kind, KindCount(kind))
        tally.count += 1
        message = error.get("message") if isinstance(error, dict) else error
        tally.latest = first_line(str(message or kind.kind))
        return tally

    @property
    def total(self) -> int:
        return sum(tally.count for tally in self.kinds.values())

    def summary_lines(self, width: int = 100) -> list[str]:
        """One line per kind with its count, each at most ``width`` characters."""
        return [
            fit(f"errors: {tally.count} × {tally.kind.cause}", width)
            for tally in self.kinds.values()
        ]


def fit(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"
