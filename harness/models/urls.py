"""Joining a path to an api base URL: before its query, never after it.

An ``--api-base`` may carry a query (``http://host/v1?api_key=K``, a proxy that
takes its key there); text appended to the whole URL would land inside the
query (``/v1?api_key=K/chat/completions``). Every request URL built from an api
base (chat completions, the models listing, llama.cpp's /props, a served
model's readiness check) is built here.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def join_url(base: str, path: str) -> str:
    """``base`` with ``path`` appended to its path; its query and fragment kept at the end.

    ``join_url("http://h/v1/?k=K", "/chat/completions")`` is
    ``http://h/v1/chat/completions?k=K``.
    """
    parts = urlsplit(base.strip())
    joined = parts.path.rstrip("/") + "/" + path.lstrip("/")
    return urlunsplit(parts._replace(path=joined))


def server_root(base: str) -> str:
    """The server's root beside an OpenAI-style ``/v1`` base (llama.cpp serves
    ``/props`` there), with the query kept."""
    parts = urlsplit(base.strip())
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urlunsplit(parts._replace(path=path))


def has_query(base: str) -> bool:
    return bool(urlsplit(base.strip()).query)
