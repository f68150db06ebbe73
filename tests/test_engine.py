"""Keys, cache hits and invalidation, failures and retries, on the toy pipeline run in-process."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, TOY_PARAMS, executions, paperdag
from paperdag.errors import StageFailed
from paperdag.runs import Execution, drive


def _run(profile: str = "smoke", retries: int = 1, **kw):
    return drive(Execution.open(["toy"], profile=profile, track=False, **kw), retries=retries)


def _keys(profile: str = "smoke") -> dict[str, str]:
    return {p.name: p.key for p in Execution.open(["toy"], profile=profile, track=False).plans}


def test_second_run_is_all_cache_hits(toy_project, tmp_path):
    first = _run()
    assert first.done == {f"toy.{s}": False for s in ("prepare", "train_a", "train_b", "evaluate")}
    second = _run()
    assert all(second.done.values()) and len(second.done) == 4
    assert executions(tmp_path / "log", "prepare") == 1
    metrics = json.loads((toy_project.root / "metrics" / "profiles" / "smoke" / "toy.json").read_text())
    assert metrics["paper"] == "toy" and metrics["profile"] == "smoke"
    assert metrics["verdicts"] == {"a_is_nonzero": "holds", "ratio": "holds"} and metrics["evidence_holding"] == 1
    assert metrics["headline"] == "evidence 1 holds / 0 fails / 0 inconclusive; checks 0/0; preconditions 1/1"


def test_another_profile_never_replaces_the_published_default_results(toy_project):
    published = toy_project.metrics_path("toy")
    _run()  # a new paper: its first (smoke) results are published where there were none
    assert json.loads(published.read_text())["profile"] == "smoke"
    drive(Execution.open(["toy"], track=False))  # the default run publishes over them
    default = published.read_bytes()
    params = toy_project.params_path
    params.write_text(params.read_text().replace("      n: 10", "      n: 12"))
    _run()
    assert published.read_bytes() == default, "a smoke run replaced the published default results"
    assert json.loads((published.parent / "profiles" / "smoke" / "toy.json").read_text())["profile"] == "smoke"


def test_another_profile_keeps_its_views_beside_the_defaults_dvc_outs(toy_project):
    """dvc.yaml's outs are the default's views: a smoke run materialises under artifacts/profiles/smoke/, so it
    never re-points artifacts/<paper>/<stage> (which dvc status would then report as changed)."""
    drive(Execution.open(["toy"], track=False))
    view = toy_project.view("toy", "evaluate")
    default = {f.name: f.stat().st_ino for f in view.iterdir()}
    params = toy_project.params_path
    params.write_text(params.read_text().replace("      n: 10", "      n: 12"))  # the smoke overlay's keys move
    _run()
    assert {f.name: f.stat().st_ino for f in view.iterdir()} == default, "a smoke run re-pointed a default view"
    smoke = toy_project.view("toy", "evaluate", "smoke")
    assert smoke == toy_project.artifacts / "profiles" / "smoke" / "toy" / "evaluate"
    assert (smoke / "manifest.json").read_bytes() != (view / "manifest.json").read_bytes()


def test_where_no_default_result_is_there_another_profiles_run_shows_in_the_default_views(toy_project):
    """A fresh clone's first smoke run fills artifacts/<paper>/<stage> too (as its metrics land in metrics/ where
    nothing was published): only the default's current result is kept from being replaced; a default run then
    takes the views back, and a smoke run after it leaves them."""
    _run()
    view = toy_project.view("toy", "evaluate")
    smoke = json.loads((toy_project.view("toy", "evaluate", "smoke") / "manifest.json").read_text())["key"]
    assert json.loads((view / "manifest.json").read_text())["key"] == smoke
    drive(Execution.open(["toy"], track=False))
    default = json.loads((view / "manifest.json").read_text())["key"]
    assert default != smoke
    _run(force=True)
    assert json.loads((view / "manifest.json").read_text())["key"] == default


def test_param_change_reruns_exactly_that_stage_and_descendants(toy_project):
    _run()
    before = _keys()
    params = toy_project.params_path
    params.write_text(params.read_text().replace("scale_a: 1.0", "scale_a: 3.0"))
    after = _keys()
    changed = {s for s in before if before[s] != after[s]}
    assert changed == {"train_a", "evaluate"}
    rerun = _run()
    assert {label for label, hit in rerun.done.items() if not hit} == {"toy.train_a", "toy.evaluate"}


def test_profile_overlay_changes_only_dependent_keys(toy_project):
    default, smoke = _keys("default"), _keys("smoke")
    assert all(default[s] != smoke[s] for s in default)  # n feeds prepare, and every stage is downstream of it


def test_views_and_manifest_record_provenance(toy_project):
    _run()
    view = toy_project.view("toy", "train_a", "smoke")
    manifest = json.loads((view / "manifest.json").read_text())
    assert manifest["key_parts"]["params"] == {"scale_a": 1.0, "seed": 0, "sleep": 0.0}
    assert manifest["key_parts"]["args"] == {"variant": "a"}
    assert set(manifest["key_parts"]["upstream"]) == {"prepare"}
    assert {"model.parquet", "_curves.jsonl"} <= set(manifest["files"])
    assert not (view / "run.json").exists()  # the run's facts stay in the store, out of DVC's outs
    run = json.loads((toy_project.store().local_path("toy", "train_a", manifest["key"]) / "run.json").read_text())
    assert run["provenance"] == {"commit": None, "dirty": None}  # a project folder outside git: unknown
    assert run["device"] == "cpu" and run["profile"] == "smoke" and run["timing"]["seconds"] >= 0
    env = run["environment"]
    assert env["python"] and env["packages"]["numpy"] and env["cpu"]["model"] and env["blas"]
    assert set(run["upstream_environments"]) == {"prepare"}


def test_published_metrics_carry_the_environment_of_every_stage_behind_them(toy_project):
    _run()
    block = json.loads(toy_project.metrics_path("toy", "smoke").read_text())["environment"]
    assert block["stages"] == ["evaluate", "prepare", "train_a", "train_b"]
    assert block["python"] and block["packages.numpy"] and isinstance(block["cpu.isa"], list)
    assert any(line.startswith("openblas") or line.startswith("mkl") for line in block["blas"])


def test_recomputed_outputs_are_byte_identical(toy_project):
    _run()
    view = toy_project.view("toy", "evaluate", "smoke").parent
    before = {p: p.read_bytes() for p in sorted(view.rglob("*")) if p.is_file()}
    _run(force=True)
    assert {p: p.read_bytes() for p in sorted(view.rglob("*")) if p.is_file()} == before


def test_failure_is_retried_then_reported_and_downstream_skipped(toy_project, tmp_path, monkeypatch):
    monkeypatch.setenv("TOY_FAIL", "train_a")
    with pytest.raises(StageFailed, match=r"toy\.train_a failed: ValueError: train_a was told to fail.*"
                                          r"skipped downstream: toy\.evaluate"):
        _run(retries=1)
    log = tmp_path / "log"
    assert executions(log, "train_a") == 2  # one retry
    assert executions(log, "evaluate") == 0
    assert executions(log, "train_b") == 1
    assert not (toy_project.root / "artifacts/toy/evaluate").exists()
    # upstream results stay cached: fixing the failure reruns only the failed stage and its descendants
    monkeypatch.delenv("TOY_FAIL")
    rerun = _run()
    assert {label for label, hit in rerun.done.items() if not hit} == {"toy.train_a", "toy.evaluate"}
    assert executions(log, "prepare") == 1


def test_failure_skips_every_transitive_descendant(toy_project, tmp_path, monkeypatch):
    monkeypatch.setenv("TOY_FAIL", "prepare")
    with pytest.raises(StageFailed, match=r"toy\.prepare failed.*skipped downstream: "
                                          r"toy\.train_a, toy\.train_b, toy\.evaluate"):
        _run(retries=0)
    assert [executions(tmp_path / "log", s) for s in ("train_a", "train_b", "evaluate")] == [0, 0, 0]


def test_force_and_only(toy_project, tmp_path):
    _run()
    forced = _run(force=True, only=["train_b"])
    assert forced.done == {"toy.train_b": False}
    assert executions(tmp_path / "log", "train_b") == 2


def _package(tmp_path, monkeypatch, files: dict[str, str]):
    pkg = tmp_path / "kpkg"
    pkg.mkdir(exist_ok=True)
    for name, text in files.items():
        (pkg / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    return pkg


KPKG = {
    "__init__.py": '"""doc"""\n',
    "params.py": "from paperdag.params import ParamsModel\n\nclass Params(ParamsModel):\n    seed: int\n",
    "pipeline.py": "from .params import Params\n",
    "a.py": "from .b import f\nfrom .params import Params\nimport numpy\n\ndef stage(ctx: Params):\n    return f()\n",
    "b.py": 'def f():\n    """Return one."""\n    return 1\n',
    "c.py": "def g():\n    return 2\n",
}


def _hash(module: str) -> str:
    from paperdag.codehash import _package_dir, code_files, code_hash

    code_files.cache_clear()
    _package_dir.cache_clear()  # each test has its own kpkg folder
    return code_hash(module, "kpkg")


def test_code_key_follows_imports_not_declarations(tmp_path, monkeypatch):
    from paperdag.codehash import code_files

    pkg = _package(tmp_path, monkeypatch, KPKG)
    a, c = _hash("kpkg.a"), _hash("kpkg.c")
    assert [p.name for p in code_files("kpkg.a", "kpkg")] == ["__init__.py", "a.py", "b.py"]  # no params.py
    (pkg / "c.py").write_text("def g():\n    return 3\n")
    assert _hash("kpkg.a") == a and _hash("kpkg.c") != c
    (pkg / "params.py").write_text(KPKG["params.py"] + "    extra: int\n")
    (pkg / "pipeline.py").write_text(KPKG["pipeline.py"] + "X = 1\n")
    assert _hash("kpkg.a") == a
    (pkg / "b.py").write_text("def f():\n    return 2\n")
    assert _hash("kpkg.a") != a


def test_code_key_ignores_docstrings_comments_and_layout(tmp_path, monkeypatch):
    pkg = _package(tmp_path, monkeypatch, KPKG)
    a = _hash("kpkg.a")
    edits = {
        "b.py": 'def f():\n    """Return one, edited."""\n\n    # a comment\n    return 1  # trailing\n',
        "__init__.py": '"""another module docstring"""\n# and a comment\n',
        "a.py": '"""Module doc."""\n' + KPKG["a.py"].replace("import numpy", "import numpy  # why"),
    }
    for name, text in edits.items():
        (pkg / name).write_text(text)
        assert _hash("kpkg.a") == a, name
    (pkg / "b.py").write_text('def f():\n    """Return one."""\n    return "1"\n')  # a string that is not a docstring
    assert _hash("kpkg.a") != a


def test_code_key_is_the_same_text_on_every_python():
    """The hashed text is Python 3.11's ``ast.dump`` whichever Python parses: a GPU node's 3.12 adds an empty
    ``type_params`` to every function and class and empty constants to nested f-string formats, which changed every
    key there (measured: no store entry of a lent H200's run matched CI's keys)."""
    import ast
    import sys

    from paperdag.codehash import canonical_dump

    source = 'def f(x, w):\n    y = ...\n    return f"{x:<{w}}" + f"{x!r}"\nclass C:\n    pass\n'
    tree = ast.parse(source)
    text = canonical_dump(tree)
    if sys.version_info[:2] == (3, 11):
        assert text == ast.dump(tree)
        for path in (REPO / "src" / "paperdag").rglob("*.py"):
            module = ast.parse(path.read_bytes())
            assert canonical_dump(module) == ast.dump(module), path
    for node in ast.walk(tree):  # what Python 3.12 parses from the same source
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            node.type_params = []
        if isinstance(node, ast.JoinedStr):
            node.values.append(ast.Constant(value=""))
    assert canonical_dump(tree) == text
    assert "Constant(value=Ellipsis)" in text and "type_params" not in text
    if "type_params" in ast.FunctionDef._fields:  # Python >= 3.12: PEP 695 syntax, where used, is meaning
        tree.body[0].type_params = [ast.Name(id="T")]
        assert canonical_dump(tree) != text


def test_resources_and_declaration_edits_keep_keys(toy_project):
    from dataclasses import replace

    from paperdag.dag import Resources
    from paperdag.engine import stage_key
    from toy_pipeline.pipeline import PIPELINE

    stage = PIPELINE.stage("train_a")
    key = stage_key(PIPELINE, stage, {"seed": 0}, {"prepare": "k"})
    assert stage_key(PIPELINE, replace(stage, resources=Resources(cpus=4, gpus=1)), {"seed": 0}, {"prepare": "k"}) == key
    assert stage_key(PIPELINE, replace(stage, args={"variant": "b"}), {"seed": 0}, {"prepare": "k"}) != key


def test_a_stage_may_not_write_the_platform_manifest(toy_project, monkeypatch):
    import toy_pipeline.stages as stages

    monkeypatch.setattr(stages, "prepare", lambda ctx: (ctx.out / "data.parquet").touch() or
                        (ctx.out / "manifest.json").write_text("{}") and {})
    with pytest.raises(StageFailed, match="reserved for the platform"):
        _run(retries=0)


def test_missing_extra_is_one_line_naming_it(toy_project, monkeypatch):
    from packaging.requirements import Requirement

    from paperdag import extras

    _run()
    monkeypatch.setattr(extras, "extra_requirements", lambda slug: (Requirement("no-such-dist-xyz>=1"),))
    assert Execution.open(["toy"], profile="smoke", track=False).pending() == []  # cached: no extra needed
    with pytest.raises(extras.MissingExtra, match=r"no-such-dist-xyz missing.*pip install 'paperdag\[toy\]'") as err:
        Execution.open(["toy"], force=True, track=False)
    assert err.value.exit_code == 2 and "\n" not in str(err.value)


def test_a_broken_tracking_store_warns_once_and_the_run_goes_on(toy_project, capsys):
    (toy_project.root / "mlflow.db").write_bytes(b"SQLite format 3\x00 truncated")
    execution = drive(Execution.open(["toy"], profile="smoke", track=True))
    assert len(execution.done) == 4
    err = capsys.readouterr().err
    assert err.count("warning: MLflow tracking off for the rest of this run") == 1


class OneSlot:
    """An executor with room for one stage at a time, running each in a thread; records the submission order."""

    def __init__(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.pool, self.futures, self.order = ThreadPoolExecutor(2), [], []

    def fits(self, plan, running) -> bool:
        return not running

    def submit(self, execution, plan):
        from paperdag.runs import execute_stage

        assert all(f.done() for f in self.futures), f"{plan.name} submitted while another stage runs"
        self.order.append(plan.name)
        self.futures.append(self.pool.submit(execute_stage, execution.store, plan, execution.inputs(plan), "cpu"))
        return self.futures[-1]


def test_ready_stages_wait_until_they_fit_and_start_in_declaration_order(toy_project):
    executor = OneSlot()
    execution = drive(Execution.open(["toy"], profile="smoke", track=False), executor)
    assert executor.order == ["prepare", "train_a", "train_b", "evaluate"]
    assert execution.done == {f"toy.{s}": False for s in executor.order}


def test_embedded_ray_admits_a_stage_only_where_its_cpus_and_gpus_are_free():
    from types import SimpleNamespace

    from paperdag.dag import Resources
    from paperdag.ray_exec import RayExecutor

    stage = lambda cpus, gpus=0.0: SimpleNamespace(resources=Resources(cpus=cpus, gpus=gpus))
    ray = RayExecutor.__new__(RayExecutor)  # no cluster needed: fits reads the recorded cluster resources
    ray.embedded, ray.resources = True, {"CPU": 2.0}
    assert ray.fits(stage(1), [stage(1)]) and not ray.fits(stage(1), [stage(1), stage(1)])
    assert ray.fits(stage(1, 0.5), [stage(1, 0.5)])  # no GPU here: a GPU stage runs on the CPU
    ray.resources = {"CPU": 16.0, "GPU": 1.0}
    assert ray.fits(stage(1, 0.5), [stage(1, 0.5)]) and not ray.fits(stage(1, 0.5), [stage(1, 0.5), stage(1, 0.5)])
    ray.embedded = False  # a joined cluster: everything is queued on Ray (its autoscaler sizes it)
    assert ray.fits(stage(8), [stage(8), stage(8)])


# -- provenance: a result is clean when its inputs equal the commit ----------------------------------------------------
def _git(repo, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def _repo(tmp_path):
    """A git repository with two code files and a params.yaml of two papers, committed."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "train.py").write_text("x = 1\n")
    (repo / "pkg" / "model.py").write_text("y = 2\n")
    (repo / "params.yaml").write_text("toy:\n  seed: 0\n  n: 5\nother:\n  seed: 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "init")
    return repo, [repo / "pkg" / "train.py", repo / "pkg" / "model.py"]


def _provenance(repo, files):
    from paperdag.params import read_params_file
    from paperdag.provenance import git_state, provenance

    return provenance(git_state(repo, files), files, "toy", read_params_file(repo / "params.yaml")["toy"])


def test_provenance_is_clean_at_the_commit_and_outputs_never_count(tmp_path):
    """Outputs the platform writes (metrics/, dvc.lock, reports/, artifacts/), other files and another paper's
    params section may differ from the commit: the inputs still equal it, so the result is clean."""
    from paperdag.provenance import describe

    repo, files = _repo(tmp_path)
    head = _git(repo, "rev-parse", "HEAD").strip()
    assert _provenance(repo, files) == {"commit": head, "dirty": False, "dirty_inputs": {}}
    for out in ("metrics/toy.json", "metrics/summary/toy.json", "dvc.lock", "reports/index.html",
                "artifacts/toy/train/manifest.json", "pkg/unrelated.py"):
        (repo / out).parent.mkdir(parents=True, exist_ok=True)
        (repo / out).write_text("written by a run\n")
    _git(repo, "add", "dvc.lock")  # staged and untracked outputs alike
    (repo / "params.yaml").write_text("toy:\n  seed: 0\n  n: 5\nother:\n  seed: 2\n")
    assert describe(_provenance(repo, files)) == "clean"


def test_provenance_names_each_dirty_input_with_its_hash(tmp_path):
    """An edited code file, an untracked one and the paper's own params section are dirty, each named with the
    sha256 of the version used; committing them makes the result clean again."""
    from paperdag.provenance import canonical_sha256, describe, git_state, provenance

    repo, files = _repo(tmp_path)
    (repo / "pkg" / "train.py").write_text("x = 3\n")
    (repo / "pkg" / "new.py").write_text("z = 0\n")
    (repo / "params.yaml").write_text("toy:\n  seed: 0\n  n: 6\nother:\n  seed: 1\n")
    prov = _provenance(repo, [*files, repo / "pkg" / "new.py"])
    assert prov["dirty"] and prov["dirty_inputs"] == {
        "pkg/train.py": hashlib.sha256(b"x = 3\n").hexdigest(), "pkg/new.py": hashlib.sha256(b"z = 0\n").hexdigest(),
        "params.yaml:toy": canonical_sha256({"seed": 0, "n": 6})}
    assert describe(prov) == "dirty: pkg/new.py, pkg/train.py, params.yaml:toy"
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "edit")
    assert describe(_provenance(repo, [*files, repo / "pkg" / "new.py"])) == "clean"
    outside = tmp_path / "no-git"
    outside.mkdir()
    assert provenance(git_state(outside, files), files, "toy", {}) == {"commit": None, "dirty": None}  # unknown


def test_a_clone_records_clean_provenance_and_an_edited_science_file_dirty(tmp_path):
    """A committed checkout (platform and toy pipeline) runs the toy paper: its entries record the commit and
    ``clean``, also after the run rewrote metrics/ and reports/ and a forced re-run; once the paper's science file
    (all four stages live in stages.py) is edited, the recomputed entries record ``dirty`` naming that file."""
    repo = tmp_path / "clone"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "src" / "paperdag", repo / "src" / "paperdag", ignore=ignore)
    shutil.copytree(REPO / "tests" / "toy_pipeline", repo / "tests" / "toy_pipeline", ignore=ignore)
    (repo / "params.yaml").write_text(TOY_PARAMS)
    (repo / ".gitignore").write_text("artifacts/\nmlflow.db\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "clone")
    env = {"PYTHONPATH": f"{repo / 'src'}{os.pathsep}{repo / 'tests'}", "TOY_LOG": str(tmp_path)}

    def run(*args: str, track: str = "off") -> dict[str, str]:
        result = paperdag("run", "toy", "--local", *args, cwd=repo, env=env | {"PAPERDAG_TRACKING": track})
        assert result.returncode == 0, result.stderr
        store = repo / "artifacts" / ".store" / "toy"  # each view holds the entry this run used
        views = (repo / "artifacts" / "toy").iterdir()
        keys = {v.name: json.loads((v / "manifest.json").read_text())["key"] for v in views}
        return {name: json.loads((store / name / k / "run.json").read_text())["provenance"] for name, k in keys.items()}

    head = _git(repo, "rev-parse", "HEAD").strip()
    assert all(p == {"commit": head, "dirty": False, "dirty_inputs": {}} for p in run(track="on").values())
    assert (repo / "metrics" / "toy.json").is_file()
    assert json.loads((repo / "reports" / "runs.json").read_text())["toy"]["provenance"] == "clean"
    assert f"| {head[:7]} (clean) |" in (repo / "reports" / "summary.md").read_text()
    assert all(not p["dirty"] for p in run("--force").values())  # its own outputs never count
    clean = {"commit": head, "dirty": False, "dirty_inputs": {}}
    assert all(p == clean for p in run("--force", "--jobs", "2").values())  # stages in child processes: the same
    stages = repo / "tests" / "toy_pipeline" / "stages.py"
    stages.write_text(stages.read_text().replace("return {\"scale\": scale}", "return {\"scale\": scale * 1.0}"))
    after = run(track="on")
    assert after["prepare"]["dirty"] and list(after["train_a"]["dirty_inputs"]) == ["tests/toy_pipeline/stages.py"]
    assert after["train_a"]["dirty_inputs"]["tests/toy_pipeline/stages.py"] == hashlib.sha256(
        stages.read_bytes()).hexdigest()
    from mlflow import MlflowClient  # the parent runs' tags say the same

    client = MlflowClient(f"sqlite:///{repo / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("toy").experiment_id], "tags.`paperdag.stage` IS NULL",
                              order_by=["attributes.start_time ASC"])
    assert [r.data.tags["paperdag.provenance"] for r in runs] == ["clean", "dirty: tests/toy_pipeline/stages.py"]


# -- progress: the time left, from the stage timings in the store ------------------------------------------------------
STORED = {"prepare": 100.0, "train_a": 200.0, "train_b": 320.0, "evaluate": 60.0}


def _store_timings(project, seconds: dict[str, float]) -> None:
    """Rewrite every toy entry's recorded wall time (as if each stage had taken ``seconds[stage]``)."""
    for run_file in (project.artifacts / ".store" / "toy").glob("*/*/run.json"):
        run = json.loads(run_file.read_text())
        run["timing"]["seconds"] = seconds[run_file.parent.parent.name]
        run_file.chmod(0o644)
        run_file.write_text(json.dumps(run))


def test_without_history_the_plan_says_so_and_progress_lines_carry_no_estimate(toy_project, capsys):
    execution = Execution.open(["toy"], profile="smoke", track=False)
    assert execution.estimate.plan_line(0) == ("4 stages to run, no past runs of them in the store to estimate "
                                               "from; 0 cached")
    drive(execution)
    assert " left" not in capsys.readouterr().err


def test_plan_and_progress_lines_estimate_the_time_left_from_stored_timings(toy_project, capsys):
    """Stored wall times 100, 200, 320, 60 s: the plan expects 680 s one stage at a time (the local loop) and 480 s
    on 2 CPUs (the two train stages side by side); each progress line of a forced re-run gives the simulated time
    to the end from the stages not settled yet; a changed param is estimated from the profile's last run."""
    _run()
    _store_timings(toy_project, STORED)
    execution = Execution.open(["toy"], profile="smoke", force=True, track=False)
    assert execution.estimate.seconds == {f"toy.{s}": t for s, t in STORED.items()}
    assert execution.estimate.plan_line(0) == "4 stages to run, ~11 min one at a time from past runs; 0 cached"
    execution.estimate.cpus = 2
    assert execution.estimate.plan_line(0) == "4 stages to run, ~8 min on 2 CPUs from past runs; 0 cached"
    execution.estimate.cpus = None
    capsys.readouterr()
    drive(execution)
    lines = {tuple(line.split()[:2]): line for line in capsys.readouterr().err.splitlines()}
    expected = {("toy.prepare", "started"): "~11:20 left", ("toy.prepare", "done"): "~9:40 left",
                ("toy.train_a", "done"): "~6:20 left", ("toy.train_b", "done"): "~1:00 left"}
    for event, left in expected.items():
        assert lines[event].endswith(left), lines[event]
    assert not lines[("toy.evaluate", "done")].endswith("left")
    _store_timings(toy_project, STORED)  # the forced re-run recorded its own (real) times
    params = toy_project.params_path
    params.write_text(params.read_text().replace("scale_a: 1.0", "scale_a: 3.0"))
    changed = Execution.open(["toy"], profile="smoke", track=False)
    assert changed.estimate.seconds == {"toy.train_a": 200.0, "toy.evaluate": 60.0}


def test_simulated_schedule_starts_stages_once_upstream_finished_and_cpus_are_free():
    from paperdag.timings import Job, simulate

    jobs = [Job("p", 10, 1, ()), Job("a", 30, 1, ("p",)), Job("b", 20, 2, ("p",)), Job("e", 5, 1, ("a", "b"))]
    assert simulate(jobs, None) == {"p": 10, "a": 40, "b": 60, "e": 65}  # one at a time
    assert simulate(jobs, 3) == {"p": 10, "a": 40, "b": 30, "e": 45}  # a (1 CPU) beside b (2)
    assert simulate(jobs, 2) == {"p": 10, "a": 40, "b": 60, "e": 65}  # b waits until a's CPU is free
    assert simulate(jobs[1:], 2, running={"a": 25}) == {"a": 5, "b": 25, "e": 30}  # p settled, a ran 25 s


def test_list_shows_each_stages_and_papers_expected_time_from_stored_timings(tmp_path, monkeypatch):
    from paperdag.testing import make_project

    project = make_project(tmp_path / "proj")
    project.params_path.write_text(project.params_path.read_text() + TOY_PARAMS)
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("TOY_LOG", str(tmp_path))
    _run(profile="default")
    _store_timings(project, STORED)
    shown = paperdag("list", cwd=project.root).stdout.splitlines()
    i = next(k for k, line in enumerate(shown) if line.startswith("toy "))
    assert "(all cached; a full run ~" in shown[i] and "CPUs from past runs)" in shown[i], shown[i]
    assert [line.split()[4] for line in shown[i + 1:i + 5]] == ["~1:40", "~3:20", "~5:20", "~1:00"], shown[i:i + 5]
    a2rbench = next(line for line in shown if line.startswith("a2rbench "))
    assert a2rbench.endswith("stale; no past runs here to estimate from)"), a2rbench  # never run here
    params = project.params_path
    params.write_text(params.read_text().replace("scale_b: 2.0", "scale_b: 5.0"))
    shown = paperdag("list", cwd=project.root).stdout.splitlines()
    assert next(line for line in shown if line.startswith("toy ")).count("(2 stale, ~6 min to run; a full run ~")


def test_an_in_process_run_gives_its_caller_back_its_threads(toy_project, monkeypatch):
    """Each stage runs at its declared cpus (OMP_NUM_THREADS, torch's intra-op threads); after an in-process run the
    caller's settings are back, as they were before it."""
    import torch

    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert not any(_run().done.values())  # every toy stage computed, here, at 1 cpu each
        assert os.environ["OMP_NUM_THREADS"] == "3" and torch.get_num_threads() == 2
        monkeypatch.delenv("OMP_NUM_THREADS")
        _run(force=True)
        assert "OMP_NUM_THREADS" not in os.environ and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_stage_that_imports_torch_while_it_runs_gets_its_declared_threads():
    """torch imported after the stage starts takes the stage's cpus as its intra-op threads, not every core (torch
    caps OMP_NUM_THREADS at the cores, so the test declares 1 cpu on a machine with more)."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: torch's default is already 1 thread")
    code = ("from paperdag.engine import _seed_everything; _seed_everything(0, 'train', 1); import torch; "
            "print(torch.get_num_threads())")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1"]
