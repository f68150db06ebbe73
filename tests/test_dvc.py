"""`dvc repro` on a generated dvc.yaml: reproduces, is a no-op when up to date, re-runs exactly what a param change
touches, and shares the store with the CLI (DVC deleting an out before its command never loses work)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, executions, paperdag

pytestmark = pytest.mark.slow
BIN = str(Path(sys.executable).parent)


def _dvc(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], **(env or {})}
    result = subprocess.run([str(Path(BIN) / "dvc"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(autouse=True)
def _paperdag_sources(toy_project):
    """The toy's evaluate imports paperdag.common (the claim model), which its dvc.yaml lists as
    ``src/paperdag/common/...`` deps, as in the repository: the toy project sees the repository's sources there."""
    (toy_project.root / "src").symlink_to(REPO / "src", target_is_directory=True)


def _dvc_project(toy_project) -> Path:  # noqa: ANN001 - the toy_project fixture's Project
    """The toy project with just the toy pipeline, as a git and DVC repository with its generated dvc.yaml."""
    root = toy_project.root
    params = toy_project.params_path
    params.write_text(params.read_text().split("toy_cluster:")[0])
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    _dvc("init", "-q", cwd=root)
    assert paperdag("dvc", "--write", cwd=root).returncode == 0
    return root


def test_dvc_repro_shares_the_store(toy_project, tmp_path):
    root, log = _dvc_project(toy_project), tmp_path / "log"
    params = toy_project.params_path

    _dvc("repro", cwd=root, env={"PAPERDAG_TRACKING": "on"})
    assert [executions(log, s) for s in ("prepare", "train_a", "train_b", "evaluate")] == [1, 1, 1, 1]
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("toy").experiment_id])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 1 and len(runs) == 5, "one dvc repro: one parent run, a stage run per DVC stage"
    assert (root / "metrics/toy.json").is_file()
    assert "Stage 'toy-prepare' didn't change" in _dvc("repro", cwd=root).stdout

    params.write_text(params.read_text().replace("scale_b: 2.0", "scale_b: 5.0"))
    out = _dvc("repro", cwd=root).stdout
    assert "Running stage 'toy-train_b'" in out and "Running stage 'toy-evaluate'" in out
    assert "Running stage 'toy-train_a'" not in out
    assert [executions(log, s) for s in ("train_a", "train_b", "evaluate")] == [1, 2, 2]

    # the CLI finds everything dvc produced: all cache hits
    assert "0 to run, 4 cached" in paperdag("run", "toy", cwd=root).stderr
    # dvc deletes outs before re-running a stage: forced repro re-materialises from the store, computing nothing
    _dvc("repro", "--force", cwd=root)
    assert [executions(log, s) for s in ("prepare", "train_a", "train_b", "evaluate")] == [1, 1, 2, 2]
    shown = _dvc("metrics", "show", cwd=root).stdout
    assert "metrics/summary/toy.json" in shown and "evidence_holding" in shown and "claim.ratio" in shown


def test_outs_of_a_recompute_elsewhere_leave_dvc_status_clean(toy_project, tmp_path):
    """dvc.lock from one clone, the stages recomputed from scratch in another: identical outs, nothing to do."""
    root = _dvc_project(toy_project)
    _dvc("repro", cwd=root)
    other = tmp_path / "clone"  # same depth as root, so dvc.yaml's relative deps match
    shutil.copytree(root, other, ignore=shutil.ignore_patterns("artifacts", "mlflow.db"))
    assert paperdag("run", "toy", "--local", cwd=other).returncode == 0
    assert "up to date" in _dvc("status", cwd=other).stdout


def test_dvc_commit_records_a_papers_stages_as_dvc_commit_does(toy_project, tmp_path):
    """`paperdag dvc --commit toy` after a run writes the dvc.lock that `dvc commit -f` of its four stages writes
    (byte for byte: DVC's own entries, in one write of dvc.lock), and `dvc status` is then clean; a paper whose
    outputs do not exist yet is one line naming the run that makes them, an unknown paper a usage error."""
    root = _dvc_project(toy_project)
    names = [f"toy-{s}" for s in ("prepare", "train_a", "train_b", "evaluate")]

    missing = paperdag("dvc", "--commit", "toy", cwd=root)
    assert missing.returncode == 1 and not (root / "dvc.lock").exists(), missing.stderr
    assert missing.stderr.strip().splitlines()[-1].startswith("error: cannot record toy-prepare in dvc.lock: ")
    assert "run `paperdag run toy` first" in missing.stderr
    assert paperdag("dvc", "--commit", "nope", cwd=root).returncode == 2

    assert paperdag("run", "toy", "--local", cwd=root).returncode == 0
    other = tmp_path / "twin"  # same depth as root: dvc.yaml's relative deps match
    shutil.copytree(root, other, symlinks=True)
    _dvc("commit", "-f", *names, cwd=other)
    done = paperdag("dvc", "--commit", "toy", cwd=root)
    assert done.returncode == 0 and "dvc.lock records 4 stages of toy" in done.stderr, done.stdout + done.stderr
    assert (root / "dvc.lock").read_text() == (other / "dvc.lock").read_text()
    assert "up to date" in _dvc("status", cwd=root).stdout
