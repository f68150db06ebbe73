"""Shared fixtures: throwaway projects, the toy pipelines, and environment isolation (no telemetry, no network)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
os.environ["PAPERDAG_EXTRA_PIPELINES"] = "toy_pipeline.pipeline,toy_pipeline.cluster"
for var, value in {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", "RAY_USAGE_STATS_ENABLED": "0",
                   "DVC_NO_ANALYTICS": "1", "MLFLOW_ENABLE_TELEMETRY": "false", "PAPERDAG_TRACKING": "off"}.items():
    os.environ[var] = value
os.environ.pop("MLFLOW_TRACKING_URI", None)
os.environ.pop("RAY_ADDRESS", None)

TOY_PARAMS = """\
toy:
  seed: 0
  n: 50
  scale_a: 1.0
  scale_b: 2.0
  sleep: 0.0
  profiles:
    smoke:
      n: 10
toy_cluster:
  seed: 0
"""
PAPERDAG = [sys.executable, "-c", "from paperdag.cli import main; main()"]


@pytest.fixture
def toy_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A project folder holding only the toy pipelines' params; cwd is set to it."""
    from paperdag.testing import make_project

    project = make_project(tmp_path / "proj", TOY_PARAMS)
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("TOY_LOG", str(tmp_path / "log"))
    (tmp_path / "log").mkdir()
    return project


@pytest.fixture(scope="session")
def smoke_runs(tmp_path_factory: pytest.TempPathFactory):
    """``smoke_runs(slug)``: the paper's whole smoke profile run through the engine, once per test session (the
    contract test and the paper's own tests share it)."""
    from paperdag.testing import run_stages

    done = {}

    def run(slug: str):
        if slug not in done:
            done[slug] = run_stages(slug, root=tmp_path_factory.mktemp(f"smoke-{slug}"))
        return done[slug]

    return run


def executions(log: Path, stage: str) -> int:
    """How many times a toy stage body ran (each run touches a file in $TOY_LOG)."""
    return len(list(log.glob(f"{stage}.*")))


def paperdag(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300):
    """Run the paperdag CLI in a subprocess; returns the CompletedProcess (text, both streams captured)."""
    return subprocess.run([*PAPERDAG, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
