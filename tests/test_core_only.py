"""A core that needs no orchestrator: ``paperdag run --local`` with tracking off imports none of Prefect, Ray, MLflow
or DVC, so it runs on a node where only the core (and the paper's extra) is installed. Each run happens in a
subprocess whose ``sitecustomize`` makes importing any of the four raise ``ImportError`` and records the attempt:
a run that tries, even one that catches the error, fails the test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PAPERDAG, REPO, TOY_PARAMS

BLOCKED = ("prefect", "ray", "mlflow", "dvc")

# Installed ahead of every other finder: an import of a blocked package (or of one of its modules) appends its name
# to $PAPERDAG_BLOCKED_LOG and raises; at exit, a blocked package found in sys.modules anyway (imported by a .pth
# file before this ran) is appended too.
SITECUSTOMIZE = f"""\
import atexit, os, sys

BLOCKED = {set(BLOCKED)!r}
LOG = os.environ["PAPERDAG_BLOCKED_LOG"]


def _record(name):
    with open(LOG, "a") as f:
        f.write(name + "\\n")


class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            _record(name)
            raise ImportError(f"{{name}} is blocked: the core must not import it")
        return None


sys.meta_path.insert(0, _Block())
atexit.register(lambda: [_record("loaded " + m) for m in sorted(BLOCKED & set(sys.modules))])
"""


def _core_only(tmp_path: Path, cwd: Path, command: list[str],
               tracking: str = "off") -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run ``command`` in ``cwd`` with the four orchestration packages blocked (tracking off unless told); returns
    the result and the blocked imports it attempted."""
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "blocked.log"
    log.write_text("")
    env = {**os.environ, "PAPERDAG_TRACKING": tracking, "PAPERDAG_BLOCKED_LOG": str(log),
           "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return result, log.read_text().split()


def test_the_blocker_blocks(tmp_path):
    """The hook is active in the subprocess: without this, the runs below would pass vacuously."""
    for name in BLOCKED:
        result, attempts = _core_only(tmp_path, tmp_path, [sys.executable, "-c", f"import {name}"])
        assert result.returncode == 1 and "is blocked" in result.stderr, result.stderr
        assert attempts == [name]


@pytest.mark.parametrize("slug", ["toy", pytest.param("normuon", marks=pytest.mark.slow)])
def test_local_run_imports_no_orchestrator(tmp_path, monkeypatch, slug):
    """A paper's smoke profile runs to its verdicts, the report included, without importing any of the four."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "params.yaml").write_text(TOY_PARAMS if slug == "toy" else (REPO / "params.yaml").read_text())
    (tmp_path / "log").mkdir()
    monkeypatch.setenv("TOY_LOG", str(tmp_path / "log"))  # the toy stages record each execution there
    result, attempts = _core_only(tmp_path, project, [*PAPERDAG, "run", slug, "--local", "-p", "smoke"])
    assert result.returncode == 0, result.stderr
    assert attempts == [], f"imported {attempts}"
    assert (project / "metrics" / "profiles" / "smoke" / f"{slug}.json").is_file()
    assert (project / "reports" / "index.html").is_file()


NEEDS_RAY = ("paperdag run without --local needs prefect, ray (the extra 'orchestration'): "
             "pip install 'paperdag[orchestration]', or run with --local")
NEEDS_MLFLOW = ("MLflow tracking needs mlflow (the extra 'orchestration'): pip install 'paperdag[orchestration]', "
                "or set PAPERDAG_TRACKING=off")


@pytest.mark.parametrize("args, tracking, words", [(["run", "toy", "-p", "smoke"], "off", NEEDS_RAY),
                                                   (["run", "toy", "--local", "-p", "smoke"], "on", NEEDS_MLFLOW)])
def test_what_needs_the_orchestration_extra_says_so_in_one_line(tmp_path, toy_project, args, tracking, words):
    """Where only the core is installed, a run that needs Prefect and Ray or MLflow stops before any stage, exit 2."""
    result, _ = _core_only(tmp_path, toy_project.root, [*PAPERDAG, *args], tracking=tracking)
    assert result.returncode == 2 and result.stderr.strip() == f"error: {words}", result.stderr
    assert not toy_project.view("toy", "prepare").parent.exists() and not (toy_project.artifacts / "profiles").exists()
