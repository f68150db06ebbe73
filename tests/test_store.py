"""The store: atomic commits, corruption detection, interruption, locking across processes, remote filesystems."""

from __future__ import annotations

import json
import multiprocessing as mp
import os

import pytest

from conftest import executions, paperdag
from paperdag.runs import Execution, drive
from paperdag.store import NO_VIEW, Store, materialize


def _run(**kw):
    return drive(Execution.open(["toy"], profile="smoke", track=False, **kw))


def test_corrupted_output_is_detected_and_recomputed(toy_project, tmp_path):
    _run()
    plan = next(p for p in Execution.open(["toy"], profile="smoke", track=False).plans if p.name == "prepare")
    entry = toy_project.store().local_path("toy", "prepare", plan.key)
    (entry / "data.parquet").chmod(0o644)  # entries are read-only; corruption by a process that ignores that
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
    assert not toy_project.view("toy", "prepare", "smoke").exists()


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


def test_two_writers_of_one_key_on_a_shared_root_never_mix_their_files(tmp_path):
    """Two machines computing the same key with different bytes (another CPU's floats): each publishes its blobs,
    then its manifest; whichever manifest is written last, the entry is that writer's files, whole."""
    from paperdag import remote
    from paperdag.store import hash_folder

    store, key = Store("mock:///bucket/artifacts", local_dir=tmp_path / "local"), "k" * 64
    entry = store.entry_path("p", "s", key)
    writers = []
    for name, text in (("a", "one machine's bytes"), ("b", "another machine's bytes, longer")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "out.txt").write_text(text)
        (folder / "table.txt").write_text(text.upper())
        manifest = {"paper": "p", "stage": "s", "key": key, "files": hash_folder(folder)}
        (folder / "manifest.json").write_text(json.dumps(manifest))
        writers.append((folder, manifest, text))
    a, b = writers
    remote.upload_entry(store.fs, store.base, entry, a[0], a[1]["files"])
    remote.upload_entry(store.fs, store.base, entry, b[0], b[1]["files"])  # b's manifest last
    got = store.local_path("p", "s", key)
    assert (got / "out.txt").read_text() == b[2] and (got / "table.txt").read_text() == b[2].upper()
    assert store.lookup("p", "s", key)["files"] == b[1]["files"]


def test_materialize_swaps_view_atomically(tmp_path):
    entry = tmp_path / "entry"
    entry.mkdir()
    (entry / "manifest.json").write_text('{"key": "1"}')
    (entry / "f.txt").write_text("one")
    view = tmp_path / "view"
    view.mkdir()
    (view / "stale.txt").write_text("old")
    files = {"f.txt": {"sha256": "0" * 64, "bytes": 3}}
    assert materialize(entry, view, files) == [NO_VIEW]  # a folder without a manifest is no view
    assert sorted(p.name for p in view.iterdir()) == ["f.txt", "manifest.json"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert materialize(entry, view, files) == [], "a view that is the entry's is left alone"


# -- the store heals what it detects (a view repaired, a damaged manifest recomputed) --------------------------------
def _plans() -> dict:
    return {p.name: p for p in Execution.open(["toy"], profile="smoke", track=False).plans}


def _same_file(a, b) -> bool:
    return os.path.samefile(a, b)


def test_entries_are_read_only_and_views_hard_link_them(toy_project):
    _run()
    entry = toy_project.store().local_path("toy", "prepare", _plans()["prepare"].key)
    view = toy_project.view("toy", "prepare", "smoke")
    assert oct((entry / "data.parquet").stat().st_mode & 0o777) == "0o444"
    assert _same_file(entry / "data.parquet", view / "data.parquet")


def test_a_truncated_view_file_is_recomputed_and_the_view_healed(toy_project, tmp_path):
    _run()
    view = toy_project.view("toy", "prepare", "smoke") / "data.parquet"
    size = view.stat().st_size
    view.chmod(0o644)
    os.truncate(view, 7)  # through the hard link: the entry is damaged too
    assert [n for n, p in _plans().items() if not p.cached] == ["prepare"]
    _run()
    assert executions(tmp_path / "log", "prepare") == 2
    entry = toy_project.store().local_path("toy", "prepare", _plans()["prepare"].key)
    assert view.stat().st_size == size and _same_file(view, entry / "data.parquet")


def test_an_identical_copy_in_a_view_is_relinked_without_a_heal_note(toy_project):

    from paperdag.store import IDENTICAL_COPY, view_differences

    _run()
    view = toy_project.view("toy", "prepare", "smoke")
    plan = _plans()["prepare"]
    entry = toy_project.store().local_path("toy", "prepare", plan.key)
    copy = view / "data.parquet"
    data = copy.read_bytes()
    copy.unlink()
    copy.write_bytes(data)  # what `dvc commit` leaves: the same bytes, not the entry's file
    assert view_differences(entry, view, plan.manifest["files"]) == [f"data.parquet {IDENTICAL_COPY}"]
    _run()
    assert _same_file(copy, entry / "data.parquet")


def test_a_deleted_or_replaced_view_file_comes_back_from_the_cached_entry(toy_project, tmp_path):
    _run()
    view = toy_project.view("toy", "train_a", "smoke")
    entry = toy_project.store().local_path("toy", "train_a", _plans()["train_a"].key)
    (view / "model.parquet").unlink()
    (toy_project.view("toy", "prepare", "smoke") / "provenance.txt").write_text("an extra file")
    evaluate = toy_project.view("toy", "evaluate", "smoke") / "metrics.json"
    original = evaluate.read_bytes()
    evaluate.unlink()
    evaluate.write_bytes(original.replace(b"b is twice a", b"b is twice A"))  # same size, another file
    _run()
    assert all(executions(tmp_path / "log", s) == 1 for s in ("prepare", "train_a", "evaluate")), "nothing recomputed"
    assert _same_file(view / "model.parquet", entry / "model.parquet")
    assert not (toy_project.view("toy", "prepare", "smoke") / "provenance.txt").exists()
    assert evaluate.read_bytes() == original


@pytest.mark.parametrize("damage", ["empty files", "no files", "fewer files", "not an object"])
def test_a_damaged_manifest_counts_as_missing_and_is_recomputed(toy_project, tmp_path, damage):
    import json

    _run()
    plan = _plans()["prepare"]
    manifest_path = toy_project.store().local_path("toy", "prepare", plan.key) / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    changed = {"empty files": manifest | {"files": {}},
               "no files": {k: v for k, v in manifest.items() if k != "files"},
               "fewer files": manifest | {"files": {"other.bin": manifest["files"]["data.parquet"]}},
               "not an object": []}[damage]
    manifest_path.chmod(0o644)
    manifest_path.write_text(json.dumps(changed))
    assert not _plans()["prepare"].cached
    again = paperdag("run", "toy", "--profile", "smoke", "--local", cwd=toy_project.root)
    assert again.returncode == 0, again.stderr
    assert executions(tmp_path / "log", "prepare") == 2
    assert toy_project.store().lookup("toy", "prepare", plan.key, outputs=plan.stage.outputs) is not None


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
