"""Whether a run's first requests fit the model's context window, said before
the run starts.

A request longer than the window is refused by the server and its episode ends
there, scored as a failure (context_overflow). Where the window is known (the
server reports it, or the run starts the server with it), the samples whose
very first request is already longer are counted before the first model call,
and the run says so in one line, instead of the user learning it from the
summary at the end.

There is no tokenizer here, so a request's length is estimated from its
characters at CHARS_PER_TOKEN characters a token: more than tokenizers average
on English text, and far more than on JSON schemas or CJK text, so the estimate
errs short and a sample counted here does not fit. Longer conversations are
not predicted; the first overflow of the run is said when it happens
(FitReport.context_overflow).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from harness.models.server_info import ContextWindow
from harness.task.contract import Sample

CHARS_PER_TOKEN = 5


def first_request_tokens(sample: Sample) -> int:
    """At least how many tokens a sample's first request takes: its opening
    messages and its tools (the chat template adds more)."""
    text = json.dumps(sample.initial_messages, ensure_ascii=False, default=str)
    text += json.dumps(sample.tools, ensure_ascii=False, default=str)
    return len(text) // CHARS_PER_TOKEN


def too_long(samples: Iterable[Sample], window: ContextWindow) -> list[tuple[Sample, int]]:
    """The samples whose first request is longer than the window, with its length."""
    found = []
    for sample in samples:
        tokens = first_request_tokens(sample)
        if tokens > window.tokens:
            found.append((sample, tokens))
    return found


def fit_line(samples: list[Sample], window: ContextWindow) -> str | None:
    """One line when some samples' first requests cannot fit, else None."""
    over = too_long(samples, window)
    if not over:
        return None
    longest_sample, longest = max(over, key=lambda pair: pair[1])
    return (
        f"{len(over)} of {len(samples)} samples cannot fit: their first request is "
        f"longer than the model's context window of {window.tokens} tokens "
        f"({window.source}); the longest, {longest_sample.key}, is about {longest} tokens "
        f"or more (at {CHARS_PER_TOKEN} characters a token). Those episodes will end at "
        "once, scored as failures (context_overflow); a server with a longer context "
        "lets them run"
    )


def unique_samples(samples: Iterable[Sample]) -> list[Sample]:
    """Each sample once (a run has one work item per sample and trial)."""
    seen: dict[str, Sample] = {}
    for sample in samples:
        seen.setdefault(sample.key, sample)
    return list(seen.values())


def server_window(
    api_base: str, served: str, start_arguments: list[str] | None
) -> ContextWindow | None:
    """The context window of the run's server: from the command it was started
    with (``--serve``), else what the server (its first replica) reports; None
    when neither says."""
    from harness.models.server_info import (
        context_window,
        context_window_of_arguments,
        probe_server,
    )

    if start_arguments:
        window = context_window_of_arguments(start_arguments)
        if window is not None:
            return window
    return context_window(probe_server(api_base.split(",")[0].strip()), served)
