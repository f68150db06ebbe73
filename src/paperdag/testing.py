"""Helpers for tests: run a paper's pipeline end to end in a throwaway project folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from paperdag.codehash import PACKAGE_ROOT
from paperdag.engine import Project
from paperdag.runs import Execution, run_local

REPO_ROOT = PACKAGE_ROOT.parent.parent


def make_project(folder: Path, params_yaml: str | None = None) -> Project:
    """A project in ``folder`` with the given params.yaml text, else its existing params.yaml, else the repository's."""
    folder.mkdir(parents=True, exist_ok=True)
    if params_yaml is not None:
        (folder / "params.yaml").write_text(params_yaml)
    elif not (folder / "params.yaml").is_file():
        shutil.copy(REPO_ROOT / "params.yaml", folder / "params.yaml")
    return Project(root=folder.resolve(), artifact_root=str(folder.resolve() / "artifacts"))


def run_smoke(slug: str, folder: Path, profile: str = "smoke", track: bool = False) -> dict[str, Any]:
    """Run ``slug``'s pipeline with ``profile`` in-process in a project at ``folder``; returns metrics/<slug>.json."""
    project = make_project(folder)
    run_local(Execution.open([slug], profile=profile, project=project, track=track), retries=0)
    return json.loads(project.metrics_path(slug).read_text())
