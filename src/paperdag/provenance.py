"""Provenance of a result: the commit it was computed at, and which of its inputs differ from that commit.

A stage's inputs are what enters its cache key: the code files of the stage and of every stage upstream of it (the
paper's modules and paperdag.common's that they import: ``engine.stage_code_files``) and the paper's section of
params.yaml. A result is ``clean`` when every input equals its version at HEAD; otherwise it is dirty and its dirty
inputs are recorded by path (relative to the repository; ``params.yaml:<paper>`` for the section) with the sha256
of the version the run used. Files the platform writes (metrics/, dvc.lock, reports/, artifacts/) are no input, so
a run's own outputs never make the next one dirty. A code file outside the project's repository cannot be
checked against its commit and counts as dirty; outside a git checkout the provenance is unknown.

One ``GitState`` per execution (three git commands, whatever the number of stages) serves every stage's check.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

PARAMS_INPUT = "params.yaml:{slug}"  # the name of a paper's params section among the inputs
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where PyYAML has it (~6x faster)


@dataclass(frozen=True)
class GitState:
    """The repository holding a project, seen once: its top folder and HEAD (None outside a git checkout), the
    files among the inputs that differ from HEAD (modified, staged, deleted or untracked; absolute paths), and, when
    the project's params.yaml differs from HEAD, params.yaml as committed (``{}`` when HEAD has none)."""

    top: Path | None
    commit: str | None
    changed: frozenset[Path] = field(default_factory=frozenset)
    head_params: dict[str, Any] | None = None  # None: params.yaml equals HEAD's, every section is clean


def _git(top: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--no-optional-locks", *args], cwd=top, capture_output=True, timeout=30)


def git_state(project_root: Path, files: Iterable[Path]) -> GitState:
    """The repository state of ``files`` (the inputs of every stage about to be planned) and of the project's
    params.yaml: three git commands, a fourth when params.yaml differs from HEAD."""
    try:
        top = _git(project_root, "rev-parse", "--show-toplevel")
        head = _git(project_root, "rev-parse", "--verify", "-q", "HEAD")
        if top.returncode or head.returncode:
            return GitState(None, None)
        root = Path(top.stdout.decode().strip()).resolve()
        params = (project_root / "params.yaml").resolve()
        resolved = {Path(f).resolve() for f in files} | {params}
        inside = sorted(str(f.relative_to(root)) for f in resolved if f.is_relative_to(root))
        status = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *inside)
        changed: set[Path] = set()
        entries = iter(status.stdout.decode().split("\0"))
        for entry in entries:  # "XY path", and after a rename or copy ("R"/"C") the origin's path
            if len(entry) > 3:
                changed.add(root / entry[3:])
                if entry[0] in "RC":
                    next(entries, None)
        head_params = None
        if not params.is_relative_to(root):
            head_params = {}  # a params.yaml outside the repository (a link): no commit holds it
        elif params in changed:
            shown = _git(root, "show", f"HEAD:{params.relative_to(root).as_posix()}")
            loaded = None if shown.returncode else yaml.load(shown.stdout, Loader=YAML_LOADER)
            head_params = loaded if isinstance(loaded, dict) else {}
    except (OSError, subprocess.SubprocessError, yaml.YAMLError):
        return GitState(None, None)
    return GitState(root, head.stdout.decode().strip(), frozenset(changed), head_params)


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "deleted"


def canonical_sha256(value: Any) -> str:
    """sha256 of a JSON value in canonical form (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def provenance(state: GitState, files: Iterable[Path], slug: str, section: Any) -> dict[str, Any]:
    """``{"commit", "dirty", "dirty_inputs": {input: sha256}}`` of a stage whose inputs are the code ``files`` and
    params.yaml's section ``section`` of paper ``slug`` (``dirty`` None and no list outside a git checkout)."""
    if state.top is None:
        return {"commit": None, "dirty": None}
    dirty: dict[str, str] = {}
    for f in sorted({Path(f).resolve() for f in files}):
        if not f.is_relative_to(state.top):
            dirty[f"{f} (outside the repository)"] = _sha256(f)
        elif f in state.changed:
            dirty[f.relative_to(state.top).as_posix()] = _sha256(f)
    if state.head_params is not None and canonical_sha256(state.head_params.get(slug)) != canonical_sha256(section):
        dirty[PARAMS_INPUT.format(slug=slug)] = canonical_sha256(section)
    return {"commit": state.commit, "dirty": bool(dirty), "dirty_inputs": dirty}


def describe(prov: dict[str, Any]) -> str:
    """``clean``, ``dirty: <input>, <input>`` (the inputs that differ from the commit), or ``unknown`` (no git);
    a record older than the input list says ``dirty (inputs not recorded)``."""
    if prov.get("dirty") is None:
        return "unknown"
    if not prov["dirty"]:
        return "clean"
    names = list(prov.get("dirty_inputs") or {})
    return f"dirty: {', '.join(names)}" if names else "dirty (inputs not recorded)"
