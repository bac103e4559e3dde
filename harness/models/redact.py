"""Keeping credentials out of everything the harness writes or shows.

Provider error messages can echo parts of a key, URLs can carry a password or a
token, and exception text ends up in records and logs. Every client passes
what it reports through ``redact_url`` / ``scrub_secrets`` first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"

# Query parameters whose value is a credential (Azure ``sig``, ``api-key``, ...).
_SECRET_PARAM = re.compile(r"key|token|secret|sig|password|auth|credential", re.IGNORECASE)
# Environment variables whose values are credentials.
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
# Credential-looking text in messages: bearer tokens, sk-style keys, key=value pairs.
_SECRET_TEXT = [
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{6,}"),
    re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_*.-]{6,}"),
    re.compile(
        r"(?i)\b((?:api[_-]?key|access[_-]?token|x-api-key)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+"
    ),
]
# Secrets shorter than this are not searched for (they would mask ordinary words).
MIN_SECRET_CHARS = 6


def redact_url(url: str | None) -> str | None:
    """The URL without user:password and with credential query values masked."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        query = urlencode(
            [
                (name, MASK if _SECRET_PARAM.search(name) else value)
                for name, value in parse_qsl(parts.query, keep_blank_values=True)
            ],
            safe="*",
        )
        return urlunsplit((parts.scheme, host, parts.path, query, ""))
    except ValueError:
        return "<unparseable url>"


def environment_secrets() -> list[str]:
    """Values of environment variables that hold credentials (``*_API_KEY``...)."""
    return [
        value
        for name, value in os.environ.items()
        if _SECRET_ENV.search(name) and len(value) >= MIN_SECRET_CHARS
    ]


def scrub_secrets(text: str, secrets: Iterable[str | None] = ()) -> str:
    """The text with the given secrets, environment credentials and
    credential-looking tokens replaced by ``***``."""
    known = {s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}
    known.update(environment_secrets())
    # Longest first, so a key that contains another is masked whole.
    for secret in sorted(known, key=len, reverse=True):
        text = text.replace(secret, MASK)
    for pattern in _SECRET_TEXT:
        text = pattern.sub(lambda m: (m.group(1) if m.lastindex else "") + MASK, text)
    return text
