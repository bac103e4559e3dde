"""Fuzzy matching, exactly as the benchmark's tools rank and match text.

All ranking goes through ``thefuzz`` (on rapidfuzz), the library the benchmark
uses, so scores, rounding and tie order are the same:

* ``partial_ratio`` / ``ratio``: raw strings, case-sensitive, rounded to int;
* ``extract``: query and documents lower-cased with punctuation turned into
  spaces, scored with partial_ratio, every document returned best first.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from thefuzz import fuzz, process

# thefuzz logs a warning for every query that preprocessing empties (e.g. "!!!");
# that is an ordinary model input here, scored 0 everywhere, not a problem to log.
logging.getLogger("thefuzz.process").setLevel(logging.ERROR)

# Keep only this many ranked ids in search results.
DELIVERY_TOP_K = 100
OTA_TOP_K = 100
INSTORE_TOP_K = 1000


def partial_ratio(a: str, b: str) -> int:
    return fuzz.partial_ratio(a, b)


def ratio(a: str, b: str) -> int:
    return fuzz.ratio(a, b)


def extract(query: str, documents: list[str]) -> list[tuple[str, int]]:
    """Every document with its score, best first."""
    return [
        (doc, score)
        for doc, score in process.extract(query, documents, scorer=fuzz.partial_ratio, limit=None)
    ]


def rerank(query: str, documents: Mapping[str, str]) -> list[str]:
    """Ids ranked by how well their document matches ``query``, best first.

    Documents with identical text collapse onto the last id having that text, which
    then appears once per such document (as in the benchmark).
    """
    text_to_id = {text: doc_id for doc_id, text in documents.items()}
    return [text_to_id[text] for text, _ in extract(query, list(documents.values()))]


def join_keywords(keywords: object) -> str:
    """Keywords concatenated with no separator (a bare string joins back to itself)."""
    return "".join(keywords)  # type: ignore[arg-type]
