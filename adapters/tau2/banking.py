"""banking_knowledge's retrieval configuration (tau3 only).

tau2-bench v1.0.1 runs banking_knowledge under one of its retrieval variants
(``RETRIEVAL_VARIANTS`` in ``domains/banking_knowledge/retrieval.py``, prompts in
``data/tau2/domains/banking_knowledge/prompts/``): they decide the agent's
retrieval tools and policy text. The harness passes the variant to tau2-bench's
own ``get_environment`` and runs its tools as they are.

- Offline: ``no_knowledge``, ``full_kb``, ``golden_retrieval``, ``bm25``,
  ``bm25_grep``, ``grep_only``.
- Embedding-backed (``openai_embeddings*``, ``qwen_embeddings*``, and the
  ``alltools`` default): tau2-bench's own embedders call an OpenAI-compatible
  embeddings endpoint (OpenAI's: ``OPENAI_API_KEY``, and ``OPENAI_BASE_URL`` for
  another endpoint, read by its OpenAI client) or OpenRouter
  (``OPENROUTER_API_KEY``); ``*_reranker*`` also calls an OpenAI model.
- Shell-based (``terminal_use``, ``terminal_use_write``, and ``alltools``): its
  sandbox needs sandbox-runtime 0.0.23 (npm) with ripgrep, bubblewrap and socat.

The option is ``retrieval``; the default is tau2-bench's own (``alltools``). A
variant that cannot run here is refused in one line before the run starts. The
variant is recorded in every banking sample's metadata and named in the aggregate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from harness.errors import ConfigError

if TYPE_CHECKING:
    from .domains import Domain

RETRIEVAL_OPTION = "retrieval"
DEFAULT_RETRIEVAL = "alltools"  # tau2-bench's DEFAULT_RETRIEVAL_VARIANT
OFFLINE = ("no_knowledge", "full_kb", "golden_retrieval", "bm25", "bm25_grep", "grep_only")


def retrieval_of(options: Mapping[str, object]) -> str:
    value = options.get(RETRIEVAL_OPTION, DEFAULT_RETRIEVAL)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"tau3 option '{RETRIEVAL_OPTION}' must be a variant name, got {value!r}")
    return value


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def check_available(domain: Domain) -> None:
    """Refuse, in one line, a retrieval variant that is unknown or cannot run here."""
    from . import domains

    module = domain.package.module("domains.banking_knowledge.retrieval")
    names = module.get_all_variant_names()
    aliases = getattr(module, "RETRIEVAL_VARIANT_ALIASES", {})
    if domain.retrieval not in names and domain.retrieval not in aliases:
        raise ConfigError(
            f"tau3 banking_knowledge: unknown retrieval variant '{domain.retrieval}' "
            f"(known: {', '.join(names)})"
        )
    try:
        domains.check_buildable(domain)  # its pipelines, its sandbox, its credentials
    except Exception as exc:  # the official code's own error says what is missing
        raise ConfigError(
            f"tau3 banking_knowledge retrieval '{domain.retrieval}' cannot run here: "
            f"{_first_line(exc)}; offline variants: {', '.join(OFFLINE)} "
            f"(options: {{{RETRIEVAL_OPTION}: bm25}})"
        ) from None
