"""Checkpoints by name: a local path made absolute, its short name, its training step."""

from __future__ import annotations

from pathlib import Path

from harness.serving.steps import names_step, step_in


def is_local_checkpoint(checkpoint: str) -> bool:
    return Path(checkpoint).expanduser().exists()


def resolve_checkpoint(checkpoint: str) -> str:
    """A local checkpoint as an absolute path (two folders named step_200 in two
    training runs must not share cached replies); anything else, such as a
    Hugging Face id, as given."""
    path = Path(checkpoint).expanduser()
    return str(path.resolve()) if path.exists() else checkpoint


def checkpoint_name(checkpoint: str) -> str:
    """A short name for a checkpoint: a Hugging Face id as it is; for a local
    path, the part among its last three that names a step (``global_step_200``
    in ``run/global_step_200/actor/huggingface``), else the last part."""
    if not is_local_checkpoint(checkpoint):
        return checkpoint
    path = Path(checkpoint).expanduser().resolve()
    parts = [path.stem if path.suffix == ".gguf" else path.name, *(p.name for p in path.parents)]
    for part in parts[:3]:
        if names_step(part):
            return part
    return parts[0]


def checkpoint_step(checkpoint: str) -> int | None:
    """The training step in a checkpoint's name (``step_200`` -> 200), if any."""
    return step_in(checkpoint_name(checkpoint))
