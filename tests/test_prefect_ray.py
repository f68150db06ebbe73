"""`paperdag run` end to end on the toy pipeline: Prefect flow, Ray execution, MLflow tracking, failures."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import executions, paperdag

pytestmark = pytest.mark.slow


def _mlflow_runs(root):
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{root / 'mlflow.db'}")
    exp = client.get_experiment_by_name("toy")
    return client, client.search_runs([exp.experiment_id])


def test_run_on_prefect_and_ray_in_parallel_then_cached(toy_project, tmp_path):
    params = toy_project.params_path
    params.write_text(params.read_text().replace("sleep: 0.0", "sleep: 2.0"))
    env = {"PAPERDAG_TRACKING": "on", "TOY_RENDEZVOUS": "1"}  # the train stages wait for each other to start
    first = paperdag("run", "toy", "--profile", "smoke", cwd=toy_project.root, env=env)
    assert first.returncode == 0, first.stderr[-3000:]  # a one-by-one run fails the rendezvous
    assert "[toy.train_a] a line from the stage" in first.stderr, "worker output reaches the driver"
    assert "pid=" not in first.stderr and "\x1b[" not in first.stderr, "no Ray prefixes or colour codes off a tty"
    assert "[4/4]" in first.stderr and "toy: evidence 1 holds / 0 fails / 0 inconclusive" in first.stderr

    second = paperdag("run", "toy", "--profile", "smoke", cwd=toy_project.root, env=env)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "4 cached" in second.stderr and executions(tmp_path / "log", "prepare") == 1

    client, runs = _mlflow_runs(toy_project.root)
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(parents) == 2 and len(children) == 4  # the cached re-run adds a parent run and no stage runs
    assert {r.data.tags["paperdag.trigger"] for r in parents} == {"cli"}
    assert len({r.data.tags["mlflow.runName"] for r in parents}) == 2, "parent runs have distinct names"
    cached = next(r for r in parents if r.data.tags.get("paperdag.cache") == "hit")
    assert cached.data.metrics["cache_hits"] == 4 and cached.data.metrics["stages_run"] == 0
    exp = client.get_experiment_by_name("toy")
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development" and exp.tags["mlflow.note.content"]
    train_a = next(r for r in children if r.data.tags["mlflow.runName"] == "train_a")
    assert train_a.data.params["scale_a"] == "1.0" and train_a.data.params["args.variant"] == "a"
    assert train_a.info.end_time - train_a.info.start_time >= 2000, "stage runs span the real computation"
    assert len(client.get_metric_history(train_a.info.run_id, "loss")) == 3
    assert {a.path for a in client.list_artifacts(train_a.info.run_id)} >= {"manifest.json", "model.parquet"}
    inputs = client.get_run(train_a.info.run_id).inputs.dataset_inputs
    assert inputs and "x" in inputs[0].dataset.schema, "input datasets logged with their Parquet schema"
    prepare = next(r for r in children if r.data.tags["mlflow.runName"] == "prepare")
    assert {t.key: t.value for t in inputs[0].tags}["paperdag.producer_run_id"] == prepare.info.run_id
    evaluate = next(r for r in children if r.data.tags["mlflow.runName"] == "evaluate")
    line = "evidence 1 holds / 0 fails / 0 inconclusive; checks 0/0; preconditions 1/1"
    for run in (evaluate, *parents):
        m = run.data.metrics
        assert (m["evidence_holding"], m["evidence_failing"], m["evidence_inconclusive"]) == (1, 0, 0)
        assert m["preconditions_holding"] == m["preconditions_total"] == 1 and m["claims_total"] == 2
        assert m["claim.ratio"] == 1 and run.data.tags["verdict.ratio"] == "holds"
        assert run.data.tags["paperdag.claims"] == line
    assert f"toy: {line} (metrics/profiles/smoke/toy.json)" in second.stderr
    # the runs table sorts by evidence_holding and filters by a claim's verdict
    exp_id = client.get_experiment_by_name("toy").experiment_id
    found = client.search_runs([exp_id], "tags.verdict.ratio = 'holds'", order_by=["metrics.evidence_holding DESC"])
    assert {r.info.run_id for r in found} == {r.info.run_id for r in (evaluate, *parents)}
    assert not client.search_runs([exp_id], "tags.verdict.ratio = 'inconclusive'")


def test_failed_stage_is_named_and_downstream_not_run(toy_project, tmp_path):
    result = paperdag("run", "toy", "--retries", "0", cwd=toy_project.root, env={"TOY_FAIL": "train_b"})
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: stage toy.train_b failed: ValueError: train_b was told to fail")
    assert "toy.evaluate" in last
    log = tmp_path / "log"
    assert executions(log, "train_b") == 1 and executions(log, "evaluate") == 0
    assert (toy_project.root / "artifacts/toy/train_a/manifest.json").is_file()


COUNT_VERIFY = """
import sys
from paperdag.cli import main
from paperdag.store import Store

calls, verify = [], Store.verify
Store.verify = lambda self, *a, **k: calls.append(a[1]) or verify(self, *a, **k)
try:
    main()
finally:
    print(f"store.verify calls: {len(calls)}", file=sys.stderr)
"""


def test_prefect_path_plans_once_and_retries_in_the_loop(toy_project, tmp_path):
    """The flow runs the CLI's planned execution (each cached entry is hash-checked once, in planning) and a stage
    that fails once is retried by the scheduling loop, then recorded."""
    assert paperdag("run", "toy", "--local", cwd=toy_project.root).returncode == 0
    result = subprocess.run([sys.executable, "-c", COUNT_VERIFY, "run", "toy", "--force", "--only", "train_b"],
                            cwd=toy_project.root, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "TOY_FAIL_ONCE": "train_b"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "store.verify calls: 4" in result.stderr  # the 4 entries checked while planning, none again
    assert "toy.train_b" in result.stderr and "retry 1 after ValueError: train_b was told to fail" in result.stderr
    assert executions(tmp_path / "log", "train_b") == 3 and executions(tmp_path / "log", "evaluate") == 1


def test_prefect_ui_shows_named_tagged_runs_with_logs_and_a_claims_artifact(toy_project, prefect_server):
    result = paperdag("run", "toy", cwd=toy_project.root, env={"PREFECT_API_URL": prefect_server})
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"Prefect flow run: {prefect_server.removesuffix('/api')}/flow-runs/flow-run/" in result.stderr
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: prefect_server}), get_client(sync_client=True) as client:
        runs = client.read_flow_runs()
        assert len(runs) == 1
        run = runs[0]
        assert run.name == "toy · default · cli" and {"paper:toy", "profile:default"} <= set(run.tags)
        logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run.id])))
        messages = "\n".join(log.message for log in logs)
        line = "evidence 1 holds / 0 fails / 0 inconclusive; checks 0/0; preconditions 1/1"
        assert "toy.train_a: computed in" in messages and f"toy: {line}" in messages
        artifacts = client.read_latest_artifacts()
        claims = next(a for a in artifacts if a.key == "claims-toy")
        assert f"**{line}**" in claims.data and "| precondition | holds | `a_is_nonzero` |" in claims.data
