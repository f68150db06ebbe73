"""A paperdag project folder: params.yaml, the ``artifacts/`` view DVC tracks, ``metrics/``, and the store."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from paperdag.errors import UsageError
from paperdag.params import DEFAULT_PROFILE
from paperdag.store import PROFILE_VIEWS, Store


@dataclass
class Project:
    """A project root (the folder holding params.yaml) and its artifact root (a folder or a pyarrow.fs URI)."""

    root: Path
    artifact_root: str

    @classmethod
    def find(cls, start: Path | None = None, artifact_root: str | None = None) -> Project:
        """The nearest folder at or above ``start`` holding params.yaml; artifact root from arg or env."""
        here = Path(start or Path.cwd()).resolve()
        for folder in (here, *here.parents):
            if (folder / "params.yaml").is_file():
                root = artifact_root or os.environ.get("PAPERDAG_ARTIFACT_ROOT") or str(folder / "artifacts")
                return cls(root=folder, artifact_root=root)
        raise UsageError(f"no params.yaml in {here} or above: run paperdag inside a paperdag project")

    @property
    def params_path(self) -> Path:
        return self.root / "params.yaml"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    def store(self) -> Store:
        return Store(self.artifact_root, local_dir=self.artifacts)

    def view(self, paper: str, stage: str, profile: str = DEFAULT_PROFILE) -> Path:
        """Where a stage's output is materialised in the project: ``artifacts/<paper>/<stage>`` for the default
        profile (the DVC ``outs`` path), ``artifacts/profiles/<profile>/<paper>/<stage>`` for any other, so a smoke,
        replicate or gpu run never replaces the outputs dvc.lock records."""
        base = self.artifacts if profile == DEFAULT_PROFILE else self.artifacts / PROFILE_VIEWS / profile
        return base / paper / stage

    def metrics_dir(self, profile: str = DEFAULT_PROFILE) -> Path:
        """Where a profile's results are published: ``metrics/`` for the default profile (committed, DVC-tracked),
        ``metrics/profiles/<profile>/`` for any other, so a quick smoke run never replaces the published results."""
        base = self.root / "metrics"
        return base if profile == DEFAULT_PROFILE else base / "profiles" / profile

    def metrics_path(self, paper: str, profile: str = DEFAULT_PROFILE) -> Path:
        return self.metrics_dir(profile) / f"{paper}.json"

    def summary_path(self, paper: str, profile: str = DEFAULT_PROFILE) -> Path:
        """The paper's flat DVC metrics file: verdict counts, ``claim.<id>`` and headline numbers."""
        return self.metrics_dir(profile) / "summary" / f"{paper}.json"
