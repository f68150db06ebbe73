"""The store: atomic commits, corruption detection, interruption, locking across processes, remote filesystems."""

from __future__ import annotations

import multiprocessing as mp
import os

import pytest

from conftest import executions
from paperdag.runs import Execution, drive
from paperdag.store import Store, materialize


def _run(**kw):
    return drive(Execution.open(["toy"], profile="smoke", track=False, **kw))


def test_corrupted_output_is_detected_and_recomputed(toy_project, tmp_path):
    _run()
    plan = next(p for p in Execution.open(["toy"], profile="smoke", track=False).plans if p.name == "prepare")
    entry = toy_project.store().local_path("toy", "prepare", plan.key)
    (entry / "data.parquet").write_bytes(b"garbage")
    again = Execution.open(["toy"], profile="smoke", track=False)
    assert [p.name for p in again.plans if not p.cached] == ["prepare"]
    drive(again)
    assert executions(tmp_path / "log", "prepare") == 2
    assert toy_project.store().lookup("toy", "prepare", plan.key) is not None


def test_interrupted_stage_leaves_nothing_that_counts(toy_project, monkeypatch):
    import toy_pipeline.stages as stages

    def interrupted(ctx):
        (ctx.out / "data.parquet").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(stages, "prepare", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _run()
    store_dir = toy_project.root / "artifacts/.store/toy/prepare"
    assert [p.name for p in store_dir.iterdir()] == []  # scratch folder removed, no entry
    assert not (toy_project.root / "artifacts/toy/prepare").exists()


def _compute_in_process(root: str) -> None:
    os.chdir(root)
    _run()


def test_concurrent_runs_compute_each_output_once(toy_project, tmp_path):
    params = toy_project.params_path
    params.write_text(params.read_text().replace("sleep: 0.0", "sleep: 0.3"))
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_compute_in_process, args=(str(toy_project.root),)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    for stage in ("prepare", "train_a", "train_b", "evaluate"):
        assert executions(tmp_path / "log", stage) == 1, stage


def test_remote_filesystem_store(tmp_path):
    store = Store("mock:///bucket/artifacts", local_dir=tmp_path / "local")
    scratch = store.scratch("p", "s", "k" * 64)
    (scratch / "a.txt").write_text("hello")
    from paperdag.store import hash_folder

    store.commit(scratch, {"paper": "p", "stage": "s", "key": "k" * 64, "files": hash_folder(scratch)})
    assert store.lookup("p", "s", "k" * 64) is not None
    local = store.local_path("p", "s", "k" * 64)
    assert (local / "a.txt").read_text() == "hello"
    assert store.lookup("p", "s", "x" * 64) is None


def test_materialize_swaps_view_atomically(tmp_path):
    entry = tmp_path / "entry"
    entry.mkdir()
    (entry / "manifest.json").write_text('{"key": "1"}')
    (entry / "f.txt").write_text("one")
    view = tmp_path / "view"
    view.mkdir()
    (view / "stale.txt").write_text("old")
    materialize(entry, view)
    assert sorted(p.name for p in view.iterdir()) == ["f.txt", "manifest.json"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_weights_files_are_byte_identical_for_the_same_tensors(tmp_path):
    """safetensors writes its metadata in hash-map order; save_tensors sorts the header, so DVC sees no change."""
    import torch

    from paperdag.io import load_tensors, save_tensors

    tensors = {"b.weight": torch.arange(15.0).view(3, 5), "a": torch.arange(7), "h": torch.ones(2, dtype=torch.float16)}
    metadata = {f"key{i}": str(i) for i in range(8)}
    for i in range(5):
        save_tensors(tmp_path / f"{i}.safetensors", tensors, metadata)
    assert len({(tmp_path / f"{i}.safetensors").read_bytes() for i in range(5)}) == 1
    back = load_tensors(tmp_path / "0.safetensors")
    assert all(torch.equal(back[k], v) for k, v in tensors.items())
