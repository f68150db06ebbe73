"""An offline install: ``paperdag wheelhouse`` lists (``--dry-run``, no index needed) and downloads the wheels of the
core and the named papers' extras for a target interpreter, never torch nor what only torch needs, plus paperdag's
own wheel; the folder alone installs ``paperdag[<paper>]`` with pip's index switched off."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from conftest import PAPERDAG, REPO

from paperdag.errors import UsageError
from paperdag.wheelhouse import Selection, closure, Resolved, platform_tags, requirements, stand_in

NODE_STACK = ("numpy", "scipy", "pyarrow", "pandas", "matplotlib", "scikit-learn")  # what a GPU node's Python has
ORCHESTRATION = ("prefect", "ray", "mlflow", "dvc")
NEVER = re.compile(r"^(torch|triton|nvidia[-_])", re.I)

PYPROJECT = """\
[project]
name = "paperdag"
requires-python = ">=3.11"
dependencies = ["torch>=2.4", "pydantic>=2.6", "numpy>=1.26"]
[project.optional-dependencies]
orchestration = ["prefect>=3.4"]
one = ["geoopt>=0.5"]
two = ["z3-solver>=4.12", "numpy>=1.26"]
all = ["paperdag[one,two]"]
dev = ["paperdag[all,orchestration]", "pytest>=8"]
"""


def _wheelhouse(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*PAPERDAG, "wheelhouse", *args], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env=env)


def test_dry_run_lists_the_core_and_the_extras_without_an_index(tmp_path):
    """The list comes from pyproject.toml alone: pip is not run (no index is reachable from it), nothing written."""
    env = {**os.environ, "PATH": "", "PIP_NO_INDEX": "1", "PIP_INDEX_URL": "http://127.0.0.1:9/simple"}
    done = _wheelhouse(str(tmp_path / "wh"), "hamn", "sketchrefine", "--python", "3.12", "--dry-run",
                       "--exclude", "numpy,scipy", env=env)
    assert done.returncode == 0, done.stderr
    lines = dict(line.strip().split(": ", 1) for line in done.stdout.splitlines()[1:])
    core = {Requirement(r).name for r in lines["core"].split(", ")}
    assert {"pydantic", "pyyaml", "typer", "rich", "filelock", "pyarrow"} <= core
    assert not core & {"torch", "numpy", "scipy", *ORCHESTRATION}
    assert lines["hamn"].startswith("geoopt") and lines["sketchrefine"].startswith("z3-solver")
    assert "torch" in lines["never downloaded"] and "numpy, scipy" in lines["never downloaded"]
    assert "CPython 3.12 on manylinux_2_28_x86_64" in done.stdout.splitlines()[0]
    assert not (tmp_path / "wh").exists()


@pytest.mark.parametrize("args, words", [
    (["no_such_paper"], "no extra 'no_such_paper' in pyproject.toml"),
    (["dev"], "no extra 'dev'"),
    (["--python", "3.10"], "--python 3.10: paperdag needs Python >=3.11"),
    (["--python", "python3"], "give a CPython version as MAJOR.MINOR"),
])
def test_bad_input_is_one_line_with_exit_2(tmp_path, args, words):
    done = _wheelhouse(str(tmp_path / "wh"), "--dry-run", *args)
    assert done.returncode == 2 and done.stderr.startswith("error: ") and words in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "wh").exists()


def test_requirements_come_from_pyproject_with_extras_expanded(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    selection = requirements(["all"], "3.12", "manylinux_2_28_x86_64", exclude=["NumPy"], root=tmp_path)
    assert {g: [str(r) for r in reqs] for g, reqs in selection.groups.items()} == {
        "core": ["pydantic>=2.6"], "all": ["geoopt>=0.5", "z3-solver>=4.12"]}
    assert selection.left_out("torch") and selection.left_out("nvidia-cudnn-cu13") and selection.left_out("numpy")
    assert not selection.left_out("pydantic")
    with pytest.raises(UsageError, match="no extra 'dev'"):
        requirements(["dev"], "3.12", "manylinux_2_28_x86_64", root=tmp_path)


def test_a_manylinux_node_takes_older_glibc_wheels():
    tags = platform_tags("manylinux_2_28_x86_64")
    assert tags[0] == "manylinux_2_28_x86_64" and tags[-1] == "manylinux1_x86_64"
    assert {"manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_5_x86_64"} <= set(tags)
    assert platform_tags("macosx_11_0_arm64") == ["macosx_11_0_arm64"]


def _dist(version: str, *requires: str, extras: tuple[str, ...] = ()) -> Resolved:
    return Resolved(version, tuple(map(Requirement, requires)), frozenset(extras))


def test_the_closure_drops_what_only_torch_needs_and_follows_markers_and_extras():
    resolved = {
        "geoopt": _dist("0.5.1", "torch>=1.9", "numpy"),
        "torch": _dist("2.13.0", "sympy", "nvidia-cudnn-cu13; platform_system == 'Linux'"),
        "sympy": _dist("1.14"), "numpy": _dist("2.3"), "nvidia-cudnn-cu13": _dist("9.0"),
        "pydantic": _dist("2.11", "pydantic-core", "email-validator; extra == 'email'",
                          "colorama; sys_platform == 'win32'", "typing-extensions; python_version < '3.13'"),
        "pydantic-core": _dist("2.33"), "email-validator": _dist("2.0"), "colorama": _dist("0.4"),
        "typing-extensions": _dist("4.14"),
    }
    roots = [Requirement("geoopt"), Requirement("pydantic")]
    linux = Selection("3.12", "manylinux_2_28_x86_64", {})
    assert closure(roots, resolved, linux) == {"geoopt", "numpy", "pydantic", "pydantic-core", "typing-extensions"}
    windows = Selection("3.13", "win_amd64", {})
    assert closure(roots, resolved, windows) == {"geoopt", "numpy", "pydantic", "pydantic-core", "colorama"}
    resolved["pydantic"] = _dist("2.11", "email-validator; extra == 'email'", extras=("email",))
    linux.exclude = ["numpy"]
    assert closure(roots, resolved, linux) == {"geoopt", "pydantic", "email-validator"}


def _index_reachable(folder: Path) -> bool:
    """Whether pip, as configured here, can fetch a small CPython 3.12 wheel from its index."""
    probe = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
                            "--dest", str(folder), "--no-cache-dir", "--retries", "0", "--timeout", "5",
                            "--python-version", "3.12", "--implementation", "cp", "shellingham"],
                           capture_output=True, text=True, timeout=120)
    return probe.returncode == 0


@pytest.mark.slow
def test_the_wheelhouse_holds_the_core_and_extras_never_torch_and_installs_offline(tmp_path):
    """Downloads for CPython 3.12 with the node's numerical stack excluded, then resolves ``paperdag[hamn]`` from
    the folder alone (index and configuration off; stand-ins for what the node has)."""
    if not _index_reachable(tmp_path / "probe"):
        pytest.skip("no package index reachable: the download is not checked (the list is, by the dry-run test)")
    house = tmp_path / "wh"
    done = _wheelhouse(str(house), "hamn", "--python", "3.12", "--exclude", ",".join(NODE_STACK))
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in house.glob("*.whl"))
    assert any(n.startswith("geoopt-") for n in names)
    own = zipfile.ZipFile(next(house.glob("paperdag-*.whl"))).namelist()
    assert {"paperdag/cli.py", "paperdag/wheelhouse.py", "flows/papers.py", "tasks/stage.py"} <= set(own)
    assert any(n.startswith("pydantic_core-") and "cp312" in n for n in names)
    assert not [n for n in names if NEVER.match(n) or n.split("-")[0].replace("_", "-") in (*NODE_STACK,
                                                                                               *ORCHESTRATION)]
    core = re.search(r"^  core\s+(\d+) wheels?\s+([\d.]+) MB$", done.stdout, re.M)
    assert core and float(core.group(2)) <= 40, done.stdout  # the goal, the node's numerics excluded
    total = re.search(r"^wheelhouse .*: (\d+) wheels, ([\d.]+) MB", done.stdout, re.M)
    assert total and int(total.group(1)) == len(names), done.stdout
    assert abs(float(total.group(2)) - sum(p.stat().st_size for p in house.glob("*.whl")) / 1e6) < 0.1

    node = tmp_path / "node"  # what the node already has, as empty wheels at this interpreter's versions
    node.mkdir()
    for name in ("torch", *NODE_STACK):
        stand_in(node, name)
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {"PIP_CONFIG_FILE": os.devnull}
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-index",
                              "--find-links", str(house), "--find-links", str(node), "--only-binary=:all:",
                              "--python-version", "3.12", "--implementation", "cp",
                              *[a for tag in platform_tags("manylinux_2_28_x86_64") for a in ("--platform", tag)],
                              "--quiet", "--report", str(report), "paperdag[hamn]"],
                             capture_output=True, text=True, env=env, timeout=300)
    assert install.returncode == 0, install.stderr
    installed = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    assert {"paperdag", "geoopt", "pydantic", "typer"} <= installed and not installed & set(ORCHESTRATION)
