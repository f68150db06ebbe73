"""Helpers for tests: run a paper's stages through the engine (same keys, seeds and checks as a real run) in a
throwaway project folder."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from paperdag.codehash import PACKAGE_ROOT
from paperdag.params import DEFAULT_PROFILE, PROFILES_KEY, deep_merge, read_params_file
from paperdag.project import Project
from paperdag.runs import Execution, LocalExecutor, drive

REPO_ROOT = PACKAGE_ROOT.parent.parent
TEST_PROFILE = "_test"


def make_project(folder: Path, params_yaml: str | None = None) -> Project:
    """A project in ``folder`` with the given params.yaml text, else its existing params.yaml, else the repository's."""
    folder.mkdir(parents=True, exist_ok=True)
    if params_yaml is not None:
        (folder / "params.yaml").write_text(params_yaml)
    elif not (folder / "params.yaml").is_file():
        shutil.copy(REPO_ROOT / "params.yaml", folder / "params.yaml")
    return Project(root=folder.resolve(), artifact_root=str(folder.resolve() / "artifacts"))


@dataclass
class StageRuns:
    """What ``run_stages`` ran: each stage's output folder and summary, and the project it ran in."""

    project: Project
    slug: str
    outputs: dict[str, Path]
    summaries: dict[str, dict[str, float]]
    profile: str = DEFAULT_PROFILE

    def __getitem__(self, stage: str) -> Path:
        return self.outputs[stage]

    def metrics(self) -> dict[str, Any]:
        """The published metrics file of the run's profile (after the metrics stage ran)."""
        return json.loads(self.project.metrics_path(self.slug, self.profile).read_text())

    def summary(self) -> dict[str, Any]:
        """The published DVC summary of the run's profile."""
        return json.loads(self.project.summary_path(self.slug, self.profile).read_text())


def run_stages(slug: str, names: list[str] | tuple[str, ...] = (), profile: str = "smoke", root: Path | None = None,
               track: bool = False, **overrides: Any) -> StageRuns:
    """Run ``names`` (default: every stage) of paper ``slug`` and any uncached upstream stages, in this process,
    exactly as the engine does (keys, seeds, params restricted to each stage's declaration, declared outputs).

    ``overrides`` replace params on top of ``profile`` (validated like params.yaml); the project lives in ``root``
    (default: a new temporary folder), starting from the repository's params.yaml.
    """
    project = make_project(Path(root) if root is not None else Path(tempfile.mkdtemp(prefix=f"pd-{slug}-")))
    if overrides:
        data = read_params_file(project.params_path)
        section = data[slug]
        profiles = section.setdefault(PROFILES_KEY, {})
        base = dict(profiles.get(profile) or {}) if profile != DEFAULT_PROFILE else {}
        profiles[TEST_PROFILE] = deep_merge(base, overrides)
        project.params_path.write_text(yaml.safe_dump(data, sort_keys=False))
        profile = TEST_PROFILE
    execution = Execution.open([slug], profile=profile, only=tuple(names), project=project, track=track)
    drive(execution, LocalExecutor(), retries=0)
    ran = [p for p in execution.plans if p.run]
    views = {p.name: project.view(slug, p.name, profile) for p in ran}
    return StageRuns(project, slug, views,
                     {name: json.loads((view / "manifest.json").read_text())["summary"] for name, view in views.items()},
                     profile)


class NotARayHead:
    """A TCP listener on 127.0.0.1 that is not a Ray head: silent, an SSH banner, HTTP/1.1, or an HTTP/2 server
    that answers the preface and then nothing (what ``ray.init`` would wait on forever)."""

    def __init__(self, kind: str):
        self.kind, self.sock = kind, socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        try:
            if self.kind == "ssh":
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
            data = conn.recv(4096)
            if self.kind == "http" and data:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            if self.kind == "h2" and data:
                conn.sendall(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        except OSError:
            pass

    def close(self) -> None:
        for c in [self.sock, *self.conns]:
            c.close()
