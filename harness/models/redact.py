"""Keeping the run's credentials out of everything the harness writes or shows.

Two rules, both applied to structured data (dicts, lists, strings) before it is
serialised, never to serialised JSON (a pattern run over JSON text can eat the
backslash of an escaped quote and corrupt a harmless record):

- by value (``mask``), everywhere: every secret the run holds is replaced
  wherever it appears, in records (tool-call arguments and message text
  included), the cache, the manifest, scores, server.log, reports, exports and
  messages. The run registers them once (``add_secret``, ``add_url_secrets``,
  ``add_argument_secrets``, ``add_config_secrets``): URL userinfo and credential
  query values, key flags of server commands, the credentials of the model
  config, strategy settings and suite options; credential-named environment
  variables (``*_API_KEY``, ``HF_TOKEN``, ``AWS_BEARER_TOKEN_BEDROCK`` ...: one
  naming rule, ``is_credential_name``, for variables, flags and settings keys)
  are always included.
- by shape (``scrub_secrets``), only on text a server or an exception produced
  outside the trajectory: HTTP error bodies, server log lines, exception
  messages (a record's ``error``, error lines). Bearer and Basic credentials,
  ``sk-`` style keys, ``api_key=...`` pairs and ``scheme://user:pass@``, for
  secrets the run was never told about (a server that echoes a header, say).

A trajectory is data: what the model sent and what the benchmark gave it (a
password in a question, a token in a scenario) is stored as it was, so that
a regrade or an export judges what was judged live. Only a held value is masked
there.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any, overload
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"

# Query parameters whose value is a credential (Azure ``sig``, ``api-key``, ...).
_SECRET_PARAM = re.compile(r"key|token|secret|sig|password|auth|credential", re.IGNORECASE)
# The one rule for names whose value is a credential: environment variables,
# command-line flags, keys of settings (``is_credential_name``). A name is split
# into words (at ``_ - .``, at camelCase, trailing digits dropped); a word that
# ends in one of these makes it a credential (OPENAI_API_KEY, OPENAI_API_KEY_2,
# AWS_BEARER_TOKEN_BEDROCK, AWS_SECRET_ACCESS_KEY, WATSONX_APIKEY, DB_PASSWORD,
# GOOGLE_APPLICATION_CREDENTIALS, --hf-token, apiKey) ...
_CREDENTIAL_ENDINGS = ("key", "token", "secret", "password", "passwd", "credential", "credentials")
# ... and so does a word that is one of these (GITHUB_PAT, DB_PASSWD, DB_PASS,
# API_KEYS, SNOWFLAKE_JWT); ``pwd`` only beside other words (MYSQL_PWD: PWD and
# OLDPWD are the shell's directories). Whole words only: PATH, TOKENIZERS_PARALLELISM,
# --skip-tokenizer-init, --max-num-batched-tokens and SSH_AUTH_SOCK are not credentials.
_CREDENTIAL_WORDS = frozenset({"pat", "pass", "keys", "secrets", "jwt"})
# Words that end like a credential and are none (TIKTOKEN_CACHE_DIR: a tokenizer's cache).
_NOT_CREDENTIAL_WORDS = frozenset({"tiktoken"})
# Credential-looking text: bearer tokens, sk-style keys, key=value pairs, URL userinfo.
# Masked by scrub_secrets only (server and exception text), never in a trajectory.
_SECRET_TEXT = [
    re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{6,}"),
    re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_*.-]{6,}"),
    re.compile(
        r"(?i)\b((?:api[_-]?key|access[_-]?token|x-api-key|auth[_-]?token|client[_-]?secret"
        r"|password|passwd)[\"']?\s*[:=]\s*\\?[\"']?)[^\s\"'\\,;&}]+"
    ),
    re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#@\"'<>]+@"),
]
# HTTP Basic credentials: base64 of "user:password" (checked by decoding, so that
# "Basic arithmetic" stays as it is).
_BASIC = re.compile(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])")
# Secrets shorter than this are not searched for (they would mask ordinary words).
MIN_SECRET_CHARS = 6

_registered: set[str] = set()


# -- what the run knows ------------------------------------------------------------


def add_secret(value: str | None) -> None:
    """Mask this value (and its URL-encoded and JSON-escaped forms) from now on."""
    if not isinstance(value, str) or len(value) < MIN_SECRET_CHARS:
        return
    _registered.add(value)
    for variant in (quote(value, safe=""), json.dumps(value, ensure_ascii=False)[1:-1]):
        if variant != value:
            _registered.add(variant)


def add_url_secrets(url: str | None) -> None:
    """Register a URL's credentials: user, password, ``user:password`` (also as
    Basic credentials) and credential query values. Comma-separated lists of
    URLs (replicas) are split."""
    if not isinstance(url, str) or "://" not in url:
        return
    for part in url.split(","):
        try:
            parts = urlsplit(part.strip())
            user, password = parts.username, parts.password
            query = parse_qsl(parts.query, keep_blank_values=True)
        except ValueError:
            continue
        if password is not None:
            add_secret(unquote(password))
            add_secret(password)
            pair = f"{unquote(user or '')}:{unquote(password)}"
            add_secret(pair)
            add_secret(base64.b64encode(pair.encode("utf-8")).decode("ascii"))
        if user:
            add_secret(unquote(user))  # a token given as the user name
        for name, value in query:
            if _SECRET_PARAM.search(name):
                add_secret(value)


def _name_words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)  # apiKey -> api_Key
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", spaced)  # HFToken -> HF_Token
    words = (word.rstrip("0123456789") for word in re.split(r"[^a-z0-9]+", spaced.lower()))
    return [word for word in words if word]


def is_credential_name(name: str) -> bool:
    """Whether a name (environment variable, flag without its dashes, settings
    key) says its value is a credential: the rule above, the one place it is kept."""
    words = _name_words(name)
    return any(
        (word.endswith(_CREDENTIAL_ENDINGS) and word not in _NOT_CREDENTIAL_WORDS)
        or word in _CREDENTIAL_WORDS
        or (word == "pwd" and len(words) > 1)
        for word in words
    )


def is_secret_flag(arg: str) -> bool:
    """Whether ``arg`` is a flag whose value is a credential (``--api-key``)."""
    if not arg.startswith("-"):
        return False
    return is_credential_name(arg.lstrip("-").partition("=")[0])


def argument_secrets(args: list[str]) -> list[str]:
    """The credential values in a command line: ``--api-key=X`` and ``--api-key X``.

    A credential flag followed by another flag (``--skip-tokenizer-init
    --api-key KEY``: a boolean flag, or a flag with no value) has no value.
    """
    values = []
    for index, arg in enumerate(args):
        if not is_secret_flag(arg):
            continue
        _, eq, value = arg.partition("=")
        if eq:
            values.append(value)
        elif index + 1 < len(args) and not args[index + 1].startswith("-"):
            values.append(args[index + 1])
    return values


def add_argument_secrets(args: Iterable[str]) -> None:
    """Register the credentials of a command line, and of any URLs in it."""
    args = [str(arg) for arg in args]
    for value in argument_secrets(args):
        add_secret(value)
    for arg in args:
        add_url_secrets(arg.partition("=")[2] if arg.startswith("-") else arg)


def add_config_secrets(data: object) -> None:
    """Register the credentials in parsed settings (a model config, strategy
    settings, a suite entry's options): values of credential-named keys, and URL
    credentials anywhere."""
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str) and is_credential_name(key) and isinstance(value, str):
                add_secret(value)
            add_config_secrets(value)
    elif isinstance(data, list):
        for item in data:
            add_config_secrets(item)
    elif isinstance(data, str):
        add_url_secrets(data)


# Whether an environment variable's name says it holds a credential, by name:
# the environment is read afresh on every call (it may change), the names rarely.
_secret_name: dict[str, bool] = {}


def environment_secrets() -> list[str]:
    """Values of environment variables named as credentials (``is_credential_name``:
    ``*_API_KEY``, ``AWS_BEARER_TOKEN_BEDROCK``, ``GITHUB_PAT`` ...)."""
    values = []
    for name, value in os.environ.items():
        secret = _secret_name.get(name)
        if secret is None:
            secret = _secret_name[name] = is_credential_name(name)
        if secret and len(value) >= MIN_SECRET_CHARS:
            values.append(value)
    return values


def known_secrets(extra: Iterable[str | None] = ()) -> set[str]:
    known = {s for s in extra if isinstance(s, str) and len(s) >= MIN_SECRET_CHARS}
    known.update(_registered)
    # Reading os.environ costs ~20 µs a variable (it decodes every entry): once per
    # command inside secret_scope(), else on every call.
    known.update(_environment_snapshot if _environment_snapshot is not None else
                 environment_secrets())  # fmt: skip
    return known


_environment_snapshot: list[str] | None = None


@contextlib.contextmanager
def secret_scope() -> Iterator[None]:
    """Secrets registered inside the block are forgotten after it (one command).
    The environment's credentials are read once, at the start of the block."""
    global _environment_snapshot
    saved, saved_snapshot = set(_registered), _environment_snapshot
    _environment_snapshot = environment_secrets()
    try:
        yield
    finally:
        _registered.clear()
        _registered.update(saved)
        _environment_snapshot = saved_snapshot


@contextlib.contextmanager
def environment_read_once() -> Iterator[None]:
    """The environment's credentials read once for the block (a run), unless an
    enclosing secret_scope() already did; every reply masked inside it is masked
    against that reading instead of decoding os.environ again."""
    global _environment_snapshot
    if _environment_snapshot is not None:
        yield
        return
    _environment_snapshot = environment_secrets()
    try:
        yield
    finally:
        _environment_snapshot = None


def _mask_shape(match: re.Match[str]) -> str:
    prefix = match.group(1) if match.lastindex else ""
    return prefix + MASK


# -- masking -----------------------------------------------------------------------


class _Masker:
    """Masks one batch of data with one compiled pattern of the known secrets;
    with ``shapes``, credential-looking text too (see the module docstring for
    where each applies)."""

    def __init__(self, secrets: Iterable[str | None] = (), shapes: bool = False):
        known = sorted(known_secrets(secrets), key=len, reverse=True)  # longest first
        self._known = re.compile("|".join(map(re.escape, known))) if known else None
        self._known_list = known
        self._shapes = shapes

    def text(self, text: str) -> str:
        if self._known is not None:
            text = self._known.sub(MASK, text)
        if not self._shapes:
            return text
        for pattern in _SECRET_TEXT:
            text = pattern.sub(_mask_shape, text)
        return _BASIC.sub(_mask_basic, text)

    def finds_any(self, value: object) -> bool:
        """Whether any text in ``value`` may need masking (False: nothing to mask)."""
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):  # keys JSON cannot write, cycles
            return True
        return self.finds_any_in_json(text)

    def finds_any_in_json(self, text: str) -> bool:
        """Whether the JSON text of a value holds anything to mask, by one search
        per pattern over the whole text with its escapes undone. Every string of
        the value is in there whole, between quotes, and every pattern's edges
        are word boundaries or character classes a quote satisfies: a match
        inside one string is a match here. (Matches across strings only cost a
        full walk.)"""
        if not self._shapes:
            return _holds_any(text, self._known_list)
        if "\\" in text:
            text = _JSON_ESCAPE.sub(_unescape, text)
        if any(secret in text for secret in self._known_list):  # substring tests: C speed
            return True
        # Each pattern needs its literal; in ASCII text a plain substring test
        # (much faster than the pattern) says when it cannot match. Outside ASCII
        # case-insensitive matching knows more equivalences than lower() does.
        lowered = text.lower() if text.isascii() else None
        for pattern, literals in _SHAPE_LITERALS:
            if lowered is not None and not any(literal in lowered for literal in literals):
                continue
            if pattern.search(text):
                return True
        return False

    def mask(self, value: Any) -> Any:
        """See ``mask()``."""
        try:
            if not self.finds_any(value):
                return value
            return self.value(value)
        except RecursionError:  # nested too deep (or circular): bounded first, then masked
            from harness.boundary.sanitise import json_ready

            return self.value(json_ready(value))

    def value(self, value: object) -> object:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                (self.text(k) if isinstance(k, str) else k): self.value(v) for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return type(value)(self.value(item) for item in value)
        if value is None or isinstance(value, (bool, int, float)):
            return value
        return self.text(str(value))  # what json.dumps(default=str) would write


# Every credential shape with the lowercase literals a match must contain.
_SHAPE_LITERALS = [
    (_SECRET_TEXT[0], ("bearer",)),
    (_SECRET_TEXT[1], ("sk-", "rk-", "pk-")),
    (
        _SECRET_TEXT[2],
        tuple(
            f"{a}{sep}{b}"
            for a, b in (
                ("api", "key"),
                ("access", "token"),
                ("auth", "token"),
                ("client", "secret"),
            )
            for sep in ("", "_", "-")
        )
        + ("password", "passwd"),
    ),
    (_SECRET_TEXT[3], ("://",)),
    (_BASIC, ("basic",)),
]

_JSON_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))")
_SIMPLE_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescape(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return chr(int(match.group(1), 16))
    return _SIMPLE_ESCAPES.get(match.group(2), match.group(2))


def _holds_any(json_text: str, secrets: list[str]) -> bool:
    """Whether any of ``secrets`` is in the JSON text with its escapes undone
    (no secrets: nothing to search, the text is not even unescaped)."""
    if not secrets:
        return False
    if "\\" in json_text:
        json_text = _JSON_ESCAPE.sub(_unescape, json_text)
    return any(secret in json_text for secret in secrets)  # substring tests: C speed


def may_need_masking(json_text: str, secrets: Iterable[str | None] = ()) -> bool:
    """Whether a value written as this JSON text may hold a held secret (False:
    the text can be written as it is, ``mask`` would not change it). A writer
    that has the text already checks it instead of walking the value;
    ``secrets``: held ones besides the registered. Only substring tests: no
    pattern is built for it."""
    return _holds_any(json_text, list(known_secrets(secrets)))


def _mask_basic(match: re.Match[str]) -> str:
    try:
        decoded = base64.b64decode(match.group(2), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return match.group(0)
    return match.group(1) + MASK if ":" in decoded else match.group(0)


def mask(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """``value`` (JSON-like data) with every held secret (the registered ones,
    the environment's, ``secrets``) masked, wherever it appears; nothing else is
    changed. A masked copy (non-JSON leaves become strings), or ``value`` itself
    when nothing in it needs masking, the common case, found by one search over
    all its text (masking every string of every record on its own was the
    store's largest cost). What every writer calls: the store (records,
    manifest, scores), the response cache, the report and exports."""
    return _Masker(secrets).mask(value)


def masker(secrets: Iterable[str | None] = ()) -> _Masker:
    """A masker by value for many values (``.mask(value)``, ``.text(text)``):
    the held secrets are gathered once, for a writer of many records."""
    return _Masker(secrets)


def scrub_secrets(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Text a server or an exception produced outside the trajectory (an HTTP
    error body, a server log line, an exception message) with the held secrets,
    ``secrets`` and credential-looking tokens (Bearer, Basic, ``sk-...``,
    ``api_key=...``, URL userinfo) replaced by ``***``. Never for a trajectory:
    there only held values are masked (``mask``)."""
    return _Masker(secrets, shapes=True).text(text)


@overload
def redact_url(url: str) -> str: ...
@overload
def redact_url(url: None) -> None: ...
@overload
def redact_url(url: str | None) -> str | None: ...


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
