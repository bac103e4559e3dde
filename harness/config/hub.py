"""Whether the Hugging Face Hub can be reached, asked once per process.

Benchmarks whose data is not on PyPI fetch it from the Hub when no data folder
is given. Offline, ``huggingface_hub`` retries each file for a minute and more
before it gives up, once per subset; one short probe first tells the run at
once, and a loader then looks only in the local Hub cache
(``local_files_only``), which answers at once either way.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Callable
from functools import cache
from typing import TypeVar

from harness.errors import DataNotFoundError

T = TypeVar("T")

DEFAULT_ENDPOINT = "https://huggingface.co"
PROBE_TIMEOUT_S = 4.0


def hub_endpoint() -> str:
    """The Hub the downloads go to (``HF_ENDPOINT``, as ``huggingface_hub`` reads it)."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` set: ``huggingface_hub`` looks only in its cache."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "on", "yes", "true")


@cache
def _probe(endpoint: str) -> str | None:
    request = urllib.request.Request(f"{endpoint}/api/models?limit=1", method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S):
            return None
    except urllib.error.HTTPError:
        return None  # it answered
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            return f"no answer within {PROBE_TIMEOUT_S:g} s"
        return f"{type(reason).__name__}: {reason}"[:200]


def hub_unreachable() -> str | None:
    """Why the Hub cannot be reached (one probe per endpoint and process), or
    None when it answers or when ``HF_HUB_OFFLINE`` says not to ask it."""
    if hub_offline():
        return None
    return _probe(hub_endpoint())


def unreachable_message(problem: str) -> str:
    """One line for every subset whose data is not in the local Hub cache."""
    return (
        f"the Hugging Face Hub ({hub_endpoint()}) cannot be reached ({problem}) and the data "
        "is not in its local cache: pass a downloaded copy with --data-dir, or set "
        "HF_HUB_OFFLINE=1 to use only the local Hub cache (docs/running.md)"
    )


OFFLINE_MESSAGE = (
    "HF_HUB_OFFLINE is set and the data is not in the local Hugging Face Hub cache: pass a "
    "downloaded copy with --data-dir, or download it once with network (docs/running.md)"
)


class HubUnreachableError(DataNotFoundError):
    """The Hub cannot be reached and the data is not in the local Hub cache: the
    same line for every subset (a loader passes it on unchanged)."""


def fetch_from_hub(fetch: Callable[[bool], T]) -> T:
    """``fetch(local_files_only)``: from the Hub when it can be reached, else
    from the local Hub cache only; HubUnreachableError when it is not there."""
    if hub_offline():
        try:
            return fetch(True)
        except Exception as exc:  # not in the cache (LocalEntryNotFoundError and kin)
            raise HubUnreachableError(OFFLINE_MESSAGE) from exc
    problem = hub_unreachable()
    if problem is None:
        return fetch(False)
    try:
        return fetch(True)
    except Exception as exc:
        raise HubUnreachableError(unreachable_message(problem)) from exc
