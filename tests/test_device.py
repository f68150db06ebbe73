"""Device runs: the device a stage gets, deterministic kernels on CUDA and the nondeterministic ones recorded, the
declared precision, each stage's provenance (device, versions, precision, wall time) in run.json and the metrics,
and a GPU node's store folder brought back and pulled. CUDA is mocked: these tests run on the CPU."""

from __future__ import annotations

import json
import os
import shutil
import sys
import warnings

import pytest
import torch
from torch._prims_common import alert_not_deterministic

from conftest import TOY_PARAMS, executions, paperdag
from paperdag import device
from paperdag.device import Precision
from paperdag.engine import restrict
from paperdag.environment import differences, summarise
from paperdag.params import ParamsModel
from paperdag.runs import Execution, drive
from paperdag.stage import StageContext

GPU_NAME = "NVIDIA H200 (mocked)"
OP = "scatter_add_cuda_kernel"


def _run(profile: str = "smoke"):
    return drive(Execution.open(["toy"], profile=profile, track=False))


def _run_json(project, stage: str, profile: str = "smoke") -> dict:
    plan = next(p for p in Execution.open(["toy"], profile=profile, track=False).plans if p.name == stage)
    return json.loads((project.store().local_path("toy", stage, plan.key) / "run.json").read_text())


@pytest.fixture
def mocked_gpu(monkeypatch):
    """A visible GPU named ``GPU_NAME``; toy's train stages record their ``ctx.device`` and whether deterministic
    kernels were on, and call an op torch has no deterministic kernel for (torch's own warn-only path)."""
    import toy_pipeline.stages as stages

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: GPU_NAME)
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", "unset by the test")
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG")
    seen: list[tuple[str, bool]] = []
    train = stages.train

    def train_on_gpu(ctx, variant):
        seen.append((ctx.device, torch.are_deterministic_algorithms_enabled()))
        alert_not_deterministic(OP)
        return train(ctx, variant)

    monkeypatch.setattr(stages, "train", train_on_gpu)
    return seen


def test_local_device_is_cuda_whenever_a_gpu_is_visible_with_deterministic_kernels(toy_project, mocked_gpu):
    _run()  # toy's stages ask for no GPU: in this process they get the one it sees
    assert mocked_gpu == [("cuda", True), ("cuda", True)]
    assert not torch.are_deterministic_algorithms_enabled()  # restored after each stage
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == device.CUBLAS_WORKSPACE
    run = _run_json(toy_project, "train_a")
    env = run["environment"]
    assert run["device"] == "cuda" and env["device"] == GPU_NAME and env["precision"] == "fp32"
    assert env["nondeterministic"] == [OP] and "cuda" in env["torch"] and env["wall_s"] >= 0
    assert _run_json(toy_project, "prepare")["environment"]["nondeterministic"] == []


def test_device_provenance_reaches_the_published_metrics(toy_project, mocked_gpu):
    _run()
    block = json.loads(toy_project.metrics_path("toy", "smoke").read_text())["environment"]
    assert block["device"] == GPU_NAME and block["precision"] == "fp32"
    assert block["nondeterministic"] == {"evaluate": [], "prepare": [], "train_a": [OP], "train_b": [OP]}
    assert "wall_s" not in block  # a run's wall time stays in its run.json: the metrics are a function of the keys
    assert _run_json(toy_project, "train_a")["environment"]["wall_s"] >= 0


def test_a_cpu_run_records_the_cpu_model_as_its_device(toy_project):
    _run()
    env = _run_json(toy_project, "train_a")["environment"]
    assert env["device"] == env["cpu"]["model"] and env["precision"] == "fp32" and "nondeterministic" not in env


def test_wall_time_is_per_stage_and_no_environment_difference():
    same = {"device": "cpu x", "wall_s": 1.0}
    assert summarise({"a": same, "b": {**same, "wall_s": 2.0}}) == {"stages": ["a", "b"], "device": "cpu x"}
    assert differences(same, {**same, "wall_s": 9.0}) == []
    assert differences(same, {"device": GPU_NAME, "wall_s": 1.0}) == [f"device cpu x -> {GPU_NAME}"]


def test_device_is_cpu_without_a_gpu_driver_and_torch_is_not_imported(monkeypatch):
    monkeypatch.setattr(device, "GPU_DRIVERS", ())
    monkeypatch.delitem(sys.modules, "torch")
    assert device.visible() == "cpu" and "torch" not in sys.modules


def test_deterministic_device_block_collects_alerts_and_shows_other_warnings():
    with pytest.warns(UserWarning, match="an ordinary warning"):
        with device.deterministic("cuda") as ops:
            assert torch.are_deterministic_algorithms_enabled() and not torch.backends.cudnn.benchmark
            for _ in range(3):
                alert_not_deterministic(OP)
            alert_not_deterministic("index_put_cuda")
            warnings.warn("an ordinary warning", UserWarning)
            assert ops == []  # filled when the block ends
    assert ops == ["index_put_cuda", OP] and not torch.are_deterministic_algorithms_enabled()
    with device.deterministic("cpu") as ops:
        assert not torch.are_deterministic_algorithms_enabled()  # CPU kernels are left as they are
    assert ops == []


class _Declares(ParamsModel):
    seed: int
    precision: Precision


class _Silent(ParamsModel):
    seed: int


def _ctx(params, keys, tmp_path) -> StageContext:
    return StageContext(params=restrict(params, keys), out=tmp_path, rng=None)


@pytest.mark.parametrize("params, keys, dtype", [
    (_Declares(seed=0, precision="bf16"), ["seed", "precision"], torch.bfloat16),
    (_Declares(seed=0, precision="fp32"), ["seed", "precision"], torch.float32),
    (_Silent(seed=0), ["seed"], torch.float32),
])
def test_autocast_is_bf16_only_where_the_paper_declares_it_on_the_device(params, keys, dtype, tmp_path):
    with _ctx(params, keys, tmp_path).autocast():
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == dtype


def test_autocast_refuses_a_precision_the_stage_does_not_declare(tmp_path):
    with pytest.raises(AttributeError, match="'precision' is not declared by this stage"):
        _ctx(_Declares(seed=0, precision="bf16"), ["seed"], tmp_path).autocast()
    with pytest.raises(ValueError, match="'fp16' is not one of fp32, bf16"):
        device.autocast("cpu", "fp16")


def test_pull_from_a_gpu_nodes_store_folder_publishes_the_gpu_profile(toy_project, mocked_gpu, tmp_path,
                                                                      monkeypatch):
    params = TOY_PARAMS.replace("    smoke:\n      n: 10\n", "    smoke:\n      n: 10\n    gpu:\n      n: 12\n")
    toy_project.params_path.write_text(params)
    node = tmp_path / "node-root"
    monkeypatch.setenv("PAPERDAG_ARTIFACT_ROOT", f"file://{node}")
    _run("gpu")  # the GPU node: its entries collect in the folder
    monkeypatch.delenv("PAPERDAG_ARTIFACT_ROOT")
    brought = tmp_path / "brought-back"
    shutil.copytree(node, brought)
    shutil.rmtree(node)

    from paperdag.testing import make_project

    clone = make_project(tmp_path / "clone", params)
    log = tmp_path / "log"
    ran = {s: executions(log, s) for s in ("prepare", "train_a", "evaluate")}
    env = {"PAPERDAG_ARTIFACT_ROOT": f"file://{brought}"}
    pulled = paperdag("pull", "toy", "-p", "gpu", cwd=clone.root, env=env)
    assert pulled.returncode == 0, pulled.stderr
    assert "toy: 4 pulled" in pulled.stdout + pulled.stderr
    doc = json.loads(clone.metrics_path("toy", "gpu").read_text())
    assert doc["profile"] == "gpu" and doc["environment"]["device"] == GPU_NAME
    again = paperdag("pull", "toy", "-p", "gpu", cwd=clone.root, env=env)
    assert "toy: 0 pulled (0.0 MB), 4 already there" in again.stdout + again.stderr

    shutil.rmtree(brought)  # the entries were copied into the clone's own store
    monkeypatch.chdir(clone.root)
    assert all(p.cached for p in Execution.open(["toy"], profile="gpu", track=False).plans)
    _run("gpu")
    assert {s: executions(log, s) for s in ran} == ran
    from paperdag.dag import get_pipeline
    from paperdag.report import gpu_verdicts

    assert gpu_verdicts(clone, get_pipeline("toy")).endswith(f"device {GPU_NAME}")  # its key is this code's: not stale


def test_pull_from_a_folder_without_a_store_is_one_line(toy_project, tmp_path):
    missing = paperdag("pull", "toy", cwd=toy_project.root,
                       env={"PAPERDAG_ARTIFACT_ROOT": f"file://{tmp_path / 'nowhere'}"})
    assert missing.returncode == 2 and "holds no store" in missing.stderr
    unset = paperdag("pull", "toy", cwd=toy_project.root, env={"PAPERDAG_ARTIFACT_ROOT": ""})
    assert unset.returncode == 2 and "file:///path" in unset.stderr
