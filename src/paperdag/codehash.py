"""The science code a stage depends on, found without importing it (no torch import just to compute a key).

Starting from the stage function's module, follow ``import``/``from ... import`` statements (parsed with ``ast``)
into the paper's own package and ``paperdag.common``, transitively. The sorted file list is both the stage's DVC
``deps`` and, hashed, part of its cache key: editing a module re-runs exactly the stages that import it.

The key follows meaning, not layout: a module is hashed as its syntax tree with docstrings removed (comments,
blank lines and line numbers never reach the tree), so editing documentation re-runs nothing. A paper's
declaration modules (``pipeline.py``, ``params.py``) are left out: what they declare enters the key as values (the
params slice, ``fn``, ``args``, upstream keys).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from functools import cache
from pathlib import Path

from paperdag.dag import DECLARATIONS

PACKAGE_ROOT = Path(__file__).resolve().parent  # .../src/paperdag
SHARED_SCIENCE = "paperdag.common"


@cache
def _package_dir(package: str) -> Path | None:
    """The folder of a package (finding it imports only the package's parents and ``__init__``)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin).parent if spec is not None and spec.origin else None


def _module_file(module: str, roots: tuple[str, ...]) -> Path | None:
    """The source file of ``module`` inside one of the ``roots`` packages, located by path (never imported)."""
    for root in roots:
        if module != root and not module.startswith(root + "."):
            continue
        base = _package_dir(root)
        if base is None:
            return None
        rel = Path(*module[len(root):].lstrip(".").split(".")) if module != root else Path()
        for candidate in (base / rel.with_suffix(".py") if module != root else None, base / rel / "__init__.py"):
            if candidate is not None and candidate.is_file():
                return candidate
    return None


ImportRow = tuple[int, str, tuple[str, ...]]  # (relative level, module, imported names); level -1: ``import a, b``


@cache
def _analysis(source: bytes) -> tuple[tuple[ImportRow, ...], bytes]:
    """One parse of a file's source, memoised by content: its import statements, and its meaning as hashed
    (``canonical_dump`` of the tree without docstrings: no comments, no positions)."""
    tree = ast.parse(source)
    rows: list[ImportRow] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            rows.append((-1, "", tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            rows.append((node.level, node.module or "", tuple(alias.name for alias in node.names)))
    return tuple(rows), canonical_dump(_strip_docstrings(tree)).encode()


_ABSENT = object()
_LATER_FIELDS = frozenset({"type_params"})  # added by Python 3.12 (PEP 695); empty unless the syntax is used


def canonical_dump(node: object) -> str:
    """The text ``ast.dump(node)`` gives on Python 3.11, whichever Python parses (keys agree across the 3.11 of CI
    and the 3.12 of a GPU node): every field written ``name=value``, an optional field left out when None, an empty
    field that later Pythons added (``type_params``) left out, and the empty string constants Python 3.12 puts in
    f-string parts (``f"{x:<{w}}"``) dropped."""
    if isinstance(node, list):
        return f"[{', '.join(canonical_dump(item) for item in node)}]"
    if not isinstance(node, ast.AST):
        return repr(node)
    cls = type(node)
    fields = []
    for name in node._fields:
        value = getattr(node, name, _ABSENT)
        if value is _ABSENT or (name in _LATER_FIELDS and not value) \
                or (value is None and getattr(cls, name, _ABSENT) is None):
            continue
        if isinstance(node, ast.JoinedStr) and name == "values":
            value = [v for v in value if not (isinstance(v, ast.Constant) and v.value == "")]
        fields.append(f"{name}={canonical_dump(value)}")
    return f"{cls.__name__}({', '.join(fields)})"


def _imports(module: str, path: Path) -> set[str]:
    """Absolute names of modules imported by ``module`` (relative imports resolved, submodule imports expanded)."""
    is_pkg = path.name == "__init__.py"
    package = module if is_pkg else module.rpartition(".")[0]
    names: set[str] = set()
    for level, base, aliases in _analysis(path.read_bytes())[0]:
        if level < 0:
            names.update(aliases)
            continue
        if level:
            parts = package.split(".")
            parts = parts[: len(parts) - (level - 1)]
            base = ".".join(parts + ([base] if base else []))
        names.add(base)
        names.update(f"{base}.{alias}" for alias in aliases)  # `from pkg import submodule`
    return names


@cache
def code_files(module: str, package: str) -> tuple[Path, ...]:
    """Sorted source files of ``module`` and every module of ``package`` or paperdag.common it imports, transitively,
    except the package's declaration modules (``package.pipeline``, ``package.params``)."""
    prefixes = (package, SHARED_SCIENCE)
    skip = {f"{package}.{name}" for name in DECLARATIONS}
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen or name in skip or not name.startswith(prefixes):
            continue
        path = _module_file(name, prefixes)
        if path is None:
            continue
        seen[name] = path
        todo.extend(_imports(name, path))
        parent = name.rpartition(".")[0]  # importing a.b.c runs a/b/__init__.py too
        if parent.startswith(prefixes):
            todo.append(parent)
    return tuple(sorted(set(seen.values())))


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    """Remove the docstring (a leading string expression) of the module and of every class and function."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def code_hash(module: str, package: str) -> str:
    """sha256 over (file name, meaning) of ``code_files(module, package)``."""
    h = hashlib.sha256()
    for path in code_files(module, package):
        h.update(path.name.encode() + b"\0" + _analysis(path.read_bytes())[1] + b"\0")
    return h.hexdigest()
