"""``harness list``: benchmarks (subsets, load options), suites and built-in models."""

from __future__ import annotations

import argparse

HELP = "benchmarks, subsets, suites and built-in models"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No flags."""


def run(args: argparse.Namespace) -> int:
    from harness.config.suites import available_suites
    from harness.models.settings import BUILTIN_MODELS
    from harness.task.registry import benchmark_names, get_adapter

    print("benchmarks:")
    for name in benchmark_names():
        try:
            adapter = get_adapter(name)
        except Exception as exc:  # a broken third-party adapter must not hide the others
            print(f"  {name}: unavailable ({type(exc).__name__}: {exc})")
            continue
        subsets = adapter.subsets()
        print(f"  {name}: {', '.join(subsets)}")
        for option, about in sorted(adapter.known_options().items()):  # a suite's `options:`
            print(f"    option {option}: {about}")
    print("suites: " + ", ".join(available_suites()))
    print("built-in models:")
    for name, about in BUILTIN_MODELS.items():
        print(f"  {name}: {about}")
    print(
        "other models: any litellm model name (e.g. openai/gpt-4.1), or with --api-base a local server"
    )
    return 0
