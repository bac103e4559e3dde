"""The benchmark adapters, importable as ``harness.adapters.<name>``.

In the repository they live in the top-level ``adapters/`` folder, but that folder
is never put on ``sys.path`` as a package of its own: a top-level ``adapters``
module would collide with the unrelated PyPI library of that name. A built wheel
copies the folder here (see ``force-include`` in pyproject.toml); a source
checkout or editable install extends this package's search path to it instead.
"""

from pathlib import Path

_checkout_root = Path(__file__).resolve().parents[2]
_source_adapters = _checkout_root / "adapters"
# Only a source checkout has pyproject.toml beside the adapters folder; an
# installed wheel sits in site-packages, whose "adapters" may be someone else's.
if (_checkout_root / "pyproject.toml").is_file() and _source_adapters.is_dir():
    __path__.append(str(_source_adapters))  # noqa: F821 - set by the import system
