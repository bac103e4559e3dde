"""Separating a model's reasoning from its answer.

Reasoning models either send their thoughts in a separate field
(``reasoning_content``, or ``reasoning`` on newer servers) or inline in the text
as ``<think>...</think>``. Qwen3-style chat templates open the ``<think>`` tag in
the prompt, so the reply may hold only the closing tag; a reply cut off by the
token limit may hold only the opening one. Reasoning is kept in the turn for the
record but never parsed for tool calls and never shown back to the model.

That is the default (``split``). ``keep`` leaves inline reasoning in the text
that is decoded, for comparisons with pipelines that read the whole reply (a
reasoning field the server sends apart is still set apart).
"""

from __future__ import annotations

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

# What happens to <think>...</think> in reply text (--inline-reasoning).
SPLIT = "split"
KEEP = "keep"
INLINE_REASONING = (SPLIT, KEEP)


def check_inline_reasoning(value: str) -> str:
    if value not in INLINE_REASONING:
        known = ", ".join(INLINE_REASONING)
        raise ValueError(f"unknown inline_reasoning '{value}' (known: {known})")
    return value


def read_inline_reasoning(text: str | None, mode: str) -> tuple[str | None, str | None]:
    """(text to decode, reasoning): ``split_reasoning`` for ``split``, the text
    as it came for ``keep``."""
    if mode == KEEP:
        return text, None
    return split_reasoning(text)


def split_reasoning(text: str | None) -> tuple[str | None, str | None]:
    """(text without reasoning, reasoning) from reply text; either may be None."""
    if text is None or (THINK_OPEN not in text and THINK_CLOSE not in text):
        return text, None
    thoughts: list[str] = []
    kept: list[str] = []
    rest = text
    first_close = rest.find(THINK_CLOSE)
    first_open = rest.find(THINK_OPEN)
    if first_close != -1 and (first_open == -1 or first_close < first_open):
        # The opening tag was part of the prompt: everything before the close is thought.
        thoughts.append(rest[:first_close])
        rest = rest[first_close + len(THINK_CLOSE) :]
    while True:
        start = rest.find(THINK_OPEN)
        if start == -1:
            kept.append(rest)
            break
        kept.append(rest[:start])
        end = rest.find(THINK_CLOSE, start + len(THINK_OPEN))
        if end == -1:  # cut off while thinking
            thoughts.append(rest[start + len(THINK_OPEN) :])
            break
        thoughts.append(rest[start + len(THINK_OPEN) : end])
        rest = rest[end + len(THINK_CLOSE) :]
    answer = "".join(kept).strip()
    reasoning = "\n".join(t.strip() for t in thoughts if t.strip())
    return (answer or None), (reasoning or None)


def join_reasoning(*parts: str | None) -> str | None:
    """Reasoning from several sources (field and inline tags) as one text."""
    texts = [part.strip() for part in parts if isinstance(part, str) and part.strip()]
    return "\n".join(texts) if texts else None
