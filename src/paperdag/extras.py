"""Each paper's third-party stack is an optional extra of the paperdag distribution (``pip install
'paperdag[<slug>]'``, ``[all]`` for the catalogue), declared once in pyproject.toml and read back from the installed
metadata here, so a paper whose extra is missing fails in one line naming it before any stage runs. So does a
command that needs the extra ``orchestration`` (Prefect, Ray, MLflow, DVC) where only the core is installed."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from functools import cache
from importlib import metadata
from typing import TYPE_CHECKING

from paperdag.errors import PaperdagError

if TYPE_CHECKING:
    from packaging.requirements import Requirement


class MissingExtra(PaperdagError):
    """A paper's optional dependencies are not installed (exit code 2: fix the environment, then rerun)."""

    exit_code = 2


@cache
def extra_requirements(extra: str) -> tuple[Requirement, ...]:
    """The requirements the installed paperdag declares for ``extra`` (empty when paperdag is not installed)."""
    from packaging.requirements import Requirement

    try:
        declared = metadata.requires("paperdag") or []
    except metadata.PackageNotFoundError:
        return ()
    found = []
    for line in declared:
        req = Requirement(line)
        if req.marker is not None and req.marker.evaluate({"extra": extra}) and not req.marker.evaluate({"extra": ""}):
            found.append(req)
    return tuple(found)


def missing_packages(extra: str) -> list[str]:
    """Distributions of ``extra`` that are not installed."""
    missing = []
    for req in extra_requirements(extra):
        try:
            metadata.version(req.name)
        except metadata.PackageNotFoundError:
            missing.append(req.name)
    return missing


def require_extra(slug: str) -> None:
    """Raise ``MissingExtra`` (one line) when the paper's extra is declared but not fully installed."""
    missing = missing_packages(slug)
    if missing:
        raise MissingExtra(f"paper {slug!r} needs its optional dependencies ({', '.join(missing)} missing): "
                           f"pip install 'paperdag[{slug}]'")


def require_orchestration(modules: Sequence[str], needed_by: str, instead: str) -> None:
    """Raise ``MissingExtra`` (one line) when any of ``modules`` (parts of the extra ``orchestration``) cannot be
    imported; ``needed_by`` names what needs them and ``instead`` how to do without. Nothing is imported."""
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except ImportError:  # a finder that refuses the name
            found = False
        if not found:
            missing.append(name)
    if missing:
        raise MissingExtra(f"{needed_by} needs {', '.join(missing)} (the extra 'orchestration'): "
                           f"pip install 'paperdag[orchestration]', or {instead}")
