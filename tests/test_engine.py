"""Keys, cache hits and invalidation, failures and retries, on the toy pipeline run in-process."""

from __future__ import annotations

import json

import pytest

from conftest import executions
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
    metrics = json.loads((toy_project.root / "metrics" / "toy.json").read_text())
    assert metrics["paper"] == "toy" and metrics["profile"] == "smoke"
    assert metrics["claims"][0]["holds"] is True


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
    manifest = json.loads((toy_project.root / "artifacts/toy/train_a/manifest.json").read_text())
    assert manifest["key_parts"]["params"] == {"scale_a": 1.0, "seed": 0, "sleep": 0.0}
    assert set(manifest["key_parts"]["upstream"]) == {"prepare"}
    assert {"model.parquet", "_curves.jsonl"} <= set(manifest["files"])
    assert {"commit", "dirty"} <= set(manifest["provenance"])
    assert manifest["versions"]["python"] and manifest["device"] == "cpu"
    assert manifest["timing"]["seconds"] >= 0


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


def test_code_key_follows_imports_only(tmp_path, monkeypatch):
    from paperdag.codehash import code_files, code_hash

    pkg = tmp_path / "kpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""doc"""\n')
    (pkg / "a.py").write_text("from .b import f\nimport numpy\n\ndef stage(ctx):\n    return f()\n")
    (pkg / "b.py").write_text("def f():\n    return 1\n")
    (pkg / "c.py").write_text("def g():\n    return 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert [p.name for p in code_files("kpkg.a", "kpkg")] == ["__init__.py", "a.py", "b.py"]
    before = code_hash("kpkg.a", "kpkg")
    (pkg / "c.py").write_text("def g():\n    return 3\n")
    code_files.cache_clear()
    assert code_hash("kpkg.a", "kpkg") == before
    (pkg / "b.py").write_text("def f():\n    return 2\n")
    code_files.cache_clear()
    assert code_hash("kpkg.a", "kpkg") != before


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
