"""The recorded episodes of bench/full_suite.py: which requests each episode asked,
in order, and which samples the replay server cannot serve unambiguously.

The record phase writes one line per model call, ``{"episode": N, "sample": KEY,
"body": BODY}``: N numbers the episodes in the order the runner started them (one
oracle client is built per episode, when it starts), KEY is the sample's key
(``bench/subset/id``; the trials of a sample are episodes of their own).

A sample is *ambiguous* when one of its requests was answered two ways by the
oracle (two samples with the same opening, each with its own gold answer): the
replay server, which knows only the request, cannot tell which reply is the
sample's, so its episode may take another sample's reply and then ask what nobody
recorded. Such samples are left out of both sides (the replayed run and the bare
client), and counted.

Not a bench of its own: tests/bench/test_episodes.py checks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Episode:
    """One (sample, trial): its requests in the order asked."""

    number: int
    sample: str
    bodies: list[bytes] = field(default_factory=list)


def call_line(episode: int, sample: str, body: dict[str, Any]) -> str:
    """One line of the episodes file."""
    return json.dumps({"episode": episode, "sample": sample, "body": body}, ensure_ascii=False)


def read_episodes(path: Path) -> list[Episode]:
    """The episodes of a file, in the order the runner started them; each body as the
    bytes to post."""
    episodes: dict[int, Episode] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            call = json.loads(line)
            number = int(call["episode"])
            episode = episodes.setdefault(number, Episode(number, call["sample"]))
            episode.bodies.append(json.dumps(call["body"], ensure_ascii=False).encode("utf-8"))
    return [episodes[n] for n in sorted(episodes)]


def ambiguous_samples(conflicts: Iterable[str], askers: Mapping[str, Iterable[str]]) -> set[str]:
    """The samples that asked a request answered two ways (``askers``: request key ->
    the samples that asked it)."""
    return {sample for key in conflicts for sample in askers.get(key, ())}


@dataclass(frozen=True)
class Split:
    """The episodes the bench replays, and those it leaves out (ambiguous samples')."""

    kept: list[Episode]
    left_out: list[Episode]

    @property
    def left_out_samples(self) -> int:
        return len({e.sample for e in self.left_out})

    @property
    def kept_calls(self) -> int:
        return sum(len(e.bodies) for e in self.kept)


def leave_out(episodes: Iterable[Episode], ambiguous: set[str]) -> Split:
    kept, left_out = [], []
    for episode in episodes:
        (left_out if episode.sample in ambiguous else kept).append(episode)
    return Split(kept, left_out)


def kept_ids(sample_order: Iterable[str], ambiguous: set[str]) -> dict[str, list[str]]:
    """subset -> the ids of its samples that are not ambiguous, in the order given
    (sample keys ``bench/subset/id``; an id may hold a slash)."""
    out: dict[str, list[str]] = {}
    seen: set[str] = set()
    for key in sample_order:
        _, subset, sample_id = key.split("/", 2)
        ids = out.setdefault(subset, [])
        if key not in ambiguous and key not in seen:
            ids.append(sample_id)
        seen.add(key)
    return out
