"""MLflow tracking: one experiment per paper, a parent run per execution, a nested run per stage.

All logging happens in the driver process through an explicit ``MlflowClient`` (never the fluent API, whose
active-run stack is global), serialised by a lock, after the store and experiments were initialised once under a
file lock (concurrent first use of a fresh sqlite store races on migrations otherwise). Ray workers never log.

Store: ``MLFLOW_TRACKING_URI`` if set, else ``sqlite:///<project>/mlflow.db`` with artifacts under
``<project>/mlartifacts/<paper>``; ``paperdag ui`` serves it.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from pathlib import Path
from typing import Any

from filelock import FileLock

from paperdag import __version__
from paperdag.stage import CURVES_FILE

MAX_PARAM_CHARS = 6000


def tracking_uri(root: Path) -> str:
    """``MLFLOW_TRACKING_URI`` or the project's local sqlite store."""
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{root / 'mlflow.db'}"


def flatten(values: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested params to ``{"a.b": "value"}`` strings as MLflow stores them (lists as JSON)."""
    flat: dict[str, str] = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        else:
            text = value if isinstance(value, str) else json.dumps(value)
            flat[name] = text[:MAX_PARAM_CHARS]
    return flat


def claim_metrics(claims: dict[str, int]) -> dict[str, int]:
    """``claim.<id>`` (0/1) per claim, and ``claims_holding`` / ``claims_total``, when there are claims."""
    if not claims:
        return {}
    return {f"claim.{k}": v for k, v in claims.items()} | {"claims_holding": sum(claims.values()),
                                                          "claims_total": len(claims)}


def claim_tags(claims: dict[str, int] | None) -> dict[str, str]:
    """``paperdag.claims = "holding/total"``, so runs can be filtered by their verdicts."""
    return {"paperdag.claims": f"{sum(claims.values())}/{len(claims)}"} if claims else {}


class Tracker:
    """Logs executions and stages of papers to MLflow (see module docstring)."""

    def __init__(self, root: Path):
        os.environ.setdefault("MLFLOW_ENABLE_ASYNC_LOGGING", "false")
        from mlflow import MlflowClient

        self.root = root
        self.init_lock = root / "artifacts" / ".locks" / "mlflow-init.lock"
        self.init_lock.parent.mkdir(parents=True, exist_ok=True)
        self.uri = tracking_uri(root)
        self._lock = threading.Lock()
        with FileLock(str(self.init_lock)):
            self.client = MlflowClient(tracking_uri=self.uri)
            self.client.search_experiments(max_results=1)  # creates/migrates the store once, under the lock
        self._experiments: dict[str, str] = {}
        self.parents: dict[str, str] = {}

    def experiment(self, paper: str) -> str:
        """The paper's experiment id, created on first use (artifacts under mlartifacts/<paper> locally)."""
        if paper not in self._experiments:
            with FileLock(str(self.init_lock)):
                found = self.client.get_experiment_by_name(paper)
                if found is None:
                    location = None if "MLFLOW_TRACKING_URI" in os.environ else (self.root / "mlartifacts" / paper).as_uri()
                    exp_id = self.client.create_experiment(paper, artifact_location=location)
                else:
                    exp_id = found.experiment_id
            self._experiments[paper] = exp_id
        return self._experiments[paper]

    def start_execution(self, paper: str, profile: str, trigger: str, provenance: dict[str, Any]) -> str:
        """A parent run for one execution of a paper's pipeline."""
        tags = {
            "mlflow.runName": f"{paper} [{profile}] {trigger}", "paperdag.profile": profile,
            "paperdag.trigger": trigger, "paperdag.version": __version__,
            "paperdag.git_commit": str(provenance.get("commit")), "paperdag.dirty": str(provenance.get("dirty")),
        }
        if provenance.get("commit"):
            tags["mlflow.source.git.commit"] = provenance["commit"]
        with self._lock:
            run = self.client.create_run(self.experiment(paper), tags=tags)
        self.parents[paper] = run.info.run_id
        return run.info.run_id

    def end_execution(self, paper: str, ok: bool, metrics: dict[str, float] | None = None,
                      claims: dict[str, int] | None = None) -> None:
        """Close the paper's parent run with its counts and, when its metrics stage was recorded, its verdicts."""
        from mlflow.entities import Metric, RunTag

        run_id = self.parents.pop(paper, None)
        if run_id is None:
            return
        now = int(time.time() * 1000)
        rows = {**(metrics or {}), **claim_metrics(claims or {})}
        with self._lock:
            self.client.log_batch(run_id, metrics=[Metric(k, float(v), now, 0) for k, v in rows.items()],
                                  tags=[RunTag(k, v) for k, v in claim_tags(claims).items()])
            self.client.set_terminated(run_id, "FINISHED" if ok else "FAILED")

    def producer_run(self, paper: str, key: str) -> str | None:
        """The run that computed the output with this key (a cache hit links to it)."""
        runs = self.client.search_runs(
            [self.experiment(paper)], f"tags.`paperdag.key` = '{key}' and tags.`paperdag.cache` = 'miss'",
            max_results=1, order_by=["attributes.start_time ASC"],
        )
        return runs[0].info.run_id if runs else None

    def log_stage(self, plan: Any, manifest: dict[str, Any] | None, entry: Path | None, hit: bool,
                  inputs: dict[str, Path], error: str | None = None, claims: dict[str, int] | None = None) -> str:
        """A nested run for one stage: params, metrics (curves by step), artifacts, datasets, cache hit or miss, and
        for the metrics stage its claims (``claim.<id>``, ``claims_holding``, ``claims_total``, a tag)."""
        from mlflow.entities import Metric, Param

        tags = {
            "mlflow.runName": plan.name, "mlflow.parentRunId": self.parents.get(plan.paper, ""),
            "paperdag.paper": plan.paper, "paperdag.stage": plan.name, "paperdag.kind": plan.stage.kind,
            "paperdag.key": plan.key, "paperdag.cache": "hit" if hit else ("failed" if error else "miss"),
        }
        if not tags["mlflow.parentRunId"]:
            del tags["mlflow.parentRunId"]
        tags |= claim_tags(claims)
        with self._lock:
            if hit:
                producer = self.producer_run(plan.paper, plan.key)
                if producer:
                    tags["paperdag.producer_run_id"] = producer
                    tags["mlflow.note.content"] = f"Cache hit: output produced by run {producer}."
            if error:
                tags["paperdag.error"] = error[:5000]
            run_id = self.client.create_run(self.experiment(plan.paper), tags=tags).info.run_id
            params = [Param(k, v) for k, v in flatten(plan.params).items()]
            params += [Param(f"args.{k}", v) for k, v in flatten(plan.stage.args).items()]
            params += [Param(f"upstream.{k}", v) for k, v in plan.upstream.items()]
            now = int(time.time() * 1000)
            metrics = self._metrics(manifest, entry) + [Metric(k, v, now, 0) for k, v in claim_metrics(claims or {}).items()]
            chunks = max(math.ceil(len(params) / 100), math.ceil(len(metrics) / 900), 1)  # MLflow batch limits
            for c in range(chunks):
                self.client.log_batch(run_id, params=params[c * 100:(c + 1) * 100],
                                      metrics=metrics[c * 900:(c + 1) * 900])
            if entry is not None and not hit:
                self.client.log_artifacts(run_id, str(entry))
                self._log_datasets(run_id, plan, inputs, entry)
            self.client.set_terminated(run_id, "FAILED" if error else "FINISHED")
        return run_id

    @staticmethod
    def _metrics(manifest: dict[str, Any] | None, entry: Path | None) -> list[Any]:
        from mlflow.entities import Metric

        if manifest is None:
            return []
        now = int(time.time() * 1000)
        rows = [Metric(k, v, now, 0) for k, v in manifest.get("summary", {}).items()]
        seconds = manifest.get("run", {}).get("timing", {}).get("seconds")
        if seconds is not None:
            rows.append(Metric("stage_seconds", seconds, now, 0))
        curves = entry / CURVES_FILE if entry is not None else None
        if curves is not None and curves.is_file():
            for line in curves.read_text().splitlines():
                point = json.loads(line)
                rows.append(Metric(point["name"], point["value"], now, point["step"]))
        return rows

    def _log_datasets(self, run_id: str, plan: Any, inputs: dict[str, Path], entry: Path) -> None:
        """Parquet tables the stage read (upstream) and wrote, as MLflow datasets with their sha256 digests."""
        from mlflow.entities import Dataset, DatasetInput, InputTag

        found = [(f"upstream:{name}", folder) for name, folder in inputs.items()] + [("output", entry)]
        datasets = []
        for context, folder in found:
            manifest = json.loads((folder / "manifest.json").read_text())
            for rel, meta in manifest["files"].items():
                if rel.endswith(".parquet"):
                    ds = Dataset(name=f"{manifest['stage']}/{rel}", digest=meta["sha256"][:16], source_type="local",
                                 source=json.dumps({"uri": (folder / rel).as_uri()}))
                    datasets.append(DatasetInput(ds, tags=[InputTag("mlflow.data.context", context)]))
        if datasets:
            self.client.log_inputs(run_id, datasets=datasets)
