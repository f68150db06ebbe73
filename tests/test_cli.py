"""The command line: one-line errors with the right exit codes, nothing written on bad input; dvc.yaml in sync;
the science packages free of orchestration imports and cheap to declare."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, paperdag

PAPERS = REPO / "src" / "paperdag" / "papers"
ORCHESTRATION = {"prefect", "ray", "mlflow", "dvc", "tasks", "flows"}


def _one_line_error(result, code: int) -> str:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("args, code, words", [
    (["run", "no_such_paper"], 2, "unknown paper 'no_such_paper'"),
    (["run", "toy", "--profile", "nope"], 2, "no profile 'nope'"),
    (["run", "toy", "--only", "nope"], 2, "has no stage 'nope'"),
    (["stage", "toy", "nope"], 2, "has no stage 'nope'"),
    (["verify", "toy"], 1, "no certificate"),
    (["run"], 2, "Missing argument"),
    (["run", "toy", "--bogus-option"], 2, "No such option: --bogus-option"),
    (["run", "toy", "--retries", "-1"], 2, "--retries"),
    (["frobnicate"], 2, "No such command 'frobnicate'"),
    (["dvc"], 2, "exactly one of --write or --check"),
    (["dvc", "--write", "--check"], 2, "exactly one of --write or --check"),
    (["new", "Bad-Slug"], 2, "lowercase Python identifier"),
    (["list", "toy"], 2, "unexpected extra argument"),
    (["ui", "--port", "0"], 2, "--port"),
])
def test_bad_input_is_a_one_line_error(toy_project, args, code, words):
    assert words in _one_line_error(paperdag(*args, cwd=toy_project.root), code)
    assert not (toy_project.root / "artifacts").exists()


def test_version_and_exit_codes_of_commands(toy_project):
    version = paperdag("--version", cwd=toy_project.root)
    assert version.returncode == 0 and version.stdout.startswith("paperdag ")
    assert paperdag("run", "toy", "--local", cwd=toy_project.root, env={"TOY_FAIL": "evaluate"}).returncode == 1


@pytest.mark.parametrize("bad, words", [
    ("  n: not-a-number", "toy.n: Input should be a valid integer"),
    ("  n: -3", "toy.n: Input should be greater than or equal to 1"),
    ("  n: 50\n  nn: 3", "toy.nn: Extra inputs are not permitted"),
    ("  n: [1", "invalid YAML"),
])
def test_bad_params_exit_2_and_write_nothing(toy_project, bad, words):
    params = toy_project.params_path
    params.write_text(params.read_text().replace("  n: 50", bad, 1))
    line = _one_line_error(paperdag("run", "toy", cwd=toy_project.root), 2)
    assert words in line and "params.yaml" in line
    assert not (toy_project.root / "artifacts").exists() and not (toy_project.root / "metrics").exists()


def test_bad_profile_overlay_is_named(toy_project):
    params = toy_project.params_path
    params.write_text(params.read_text().replace("      n: 10", "      n: ten"))
    assert "toy.profiles.smoke.n" in _one_line_error(paperdag("run", "toy", "-p", "smoke", cwd=toy_project.root), 2)


@pytest.mark.parametrize("old, new, words", [
    ("    smoke:\n      n: 10\n", "    smoke:\n", "toy.profiles.smoke is empty"),
    ("    smoke:\n      n: 10\n", "    smoke: {}\n", "toy.profiles.smoke is empty"),
    ("toy:\n  seed: 0\n  n: 50\n  scale_a: 1.0\n  scale_b: 2.0\n  sleep: 0.0\n", "toy:\n",
     "section for paper 'toy' sets no params"),
])
def test_an_empty_overlay_or_section_is_an_error_not_a_full_run(toy_project, old, new, words):
    params = toy_project.params_path
    assert old in params.read_text()
    params.write_text(params.read_text().replace(old, new))
    assert words in _one_line_error(paperdag("run", "toy", "-p", "smoke", cwd=toy_project.root), 2)
    assert not (toy_project.root / "artifacts").exists()


def test_an_empty_paper_section_is_an_error(toy_project):
    params = toy_project.params_path
    params.write_text("toy:\ntoy_cluster:\n  seed: 0\n")
    assert "section for paper 'toy' is empty" in _one_line_error(paperdag("run", "toy", cwd=toy_project.root), 2)


@pytest.mark.parametrize("paper", ["vector_lyapunov", "pepmirror"])
def test_verify_on_a_folder_of_garbage_is_one_line_and_exit_1(tmp_path, paper):
    from paperdag.extras import missing_packages

    if missing_packages(paper):
        pytest.skip(f"paperdag[{paper}] is not installed")
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "meta.json").write_text('{"kind": ')
    (garbage / "weights.safetensors").write_bytes(os.urandom(512))
    (garbage / "designs_verified.parquet").write_bytes(os.urandom(512))
    env = {k: v for k, v in os.environ.items() if k != "PAPERDAG_EXTRA_PIPELINES"}
    result = subprocess.run([sys.executable, "-c", "from paperdag.cli import main; main()", "verify", paper,
                             str(garbage)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = [l for l in (result.stdout + result.stderr).splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith(("error: ", "REFUTED ")), lines


def test_outside_a_project(tmp_path):
    assert "no params.yaml" in _one_line_error(paperdag("list", cwd=tmp_path), 2)


def test_dvc_yaml_matches_the_declarations():
    env = {k: v for k, v in os.environ.items() if k != "PAPERDAG_EXTRA_PIPELINES"}
    result = subprocess.run([sys.executable, "-c", "from paperdag.cli import main; main()", "dvc", "--check"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_dvc_check_detects_drift(toy_project):
    assert paperdag("dvc", "--write", cwd=toy_project.root).returncode == 0
    assert paperdag("dvc", "--check", cwd=toy_project.root).returncode == 0
    dvc_yaml = toy_project.root / "dvc.yaml"
    dvc_yaml.write_text(dvc_yaml.read_text().replace("toy.scale_a", "toy.scale_z"))
    assert "out of date" in _one_line_error(paperdag("dvc", "--check", cwd=toy_project.root), 1)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    return {n.split(".")[0] for n in names}


def test_science_packages_import_no_orchestration():
    offenders = {str(p.relative_to(REPO)): _imports(p) & ORCHESTRATION for p in PAPERS.rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}
