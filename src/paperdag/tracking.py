"""MLflow tracking: one experiment per paper, a parent run per execution of a paper, a nested run per stage that ran.

What users see: each paper's experiment (a model-development experiment described by the paper's title) holds a
parent run per execution, named ``<paper> · <profile> · <trigger> · <commit> · <time>``, tagged with the commit and
``paperdag.provenance`` (``clean``, or ``dirty: <inputs>``: the paper's code files or params section that differ
from the commit; provenance.py; each stage run carries its own), carrying the verdicts
(metrics ``evidence_holding``, ``evidence_failing``, ``evidence_inconclusive``, ``checks_passing``,
``preconditions_holding``, ... and ``claim.<id>`` 1 holds / 0 fails / -1 inconclusive; tags ``verdict.<id>`` and
``paperdag.claims``, the headline line). Under it, a run per
stage that was computed (or failed, or was retried), with its real start and end times, params, summary metrics,
curves by step (a curve logged with a ``run`` label becomes a child run of its own with shared metric names, so
configurations overlay in the compare view), its files as artifacts and its upstream files as datasets (Parquet
with their schema) linked to the runs that produced them. A stage served from the store is not logged again: its
output links to the run that produced it (``paperdag.producer_run_id``), so a cached re-run adds one parent run and
no stage runs. A ``dvc repro`` groups its ``paperdag stage`` commands under one parent.

All logging happens in the driver process through an explicit ``MlflowClient`` (never the fluent API, whose
active-run stack is global), serialised by a lock, opened lazily (an execution that logs nothing never imports
MLflow) after the store was initialised once under a file lock (concurrent first use of a fresh sqlite store races
on migrations otherwise). Ray workers never log.

Store: ``MLFLOW_TRACKING_URI`` if set, else ``sqlite:///<project>/mlflow.db`` with artifacts under
``<project>/mlartifacts/<paper>``; ``paperdag ui`` serves it.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from filelock import FileLock

from paperdag import __version__
from paperdag.claims import VERDICT_CODE, counts, headline
from paperdag.errors import env_seconds
from paperdag.provenance import describe
from paperdag.stage import CURVES_FILE

MAX_PARAM_CHARS = 6000
MAX_TAG_CHARS = 5000  # MLflow's limit on a tag value
TRACKING_TIMEOUT_S = 5.0  # default of PAPERDAG_TRACKING_TIMEOUT_S
EXPERIMENT_KIND = "custom_model_development"  # MLflow 3 opens such experiments on their runs, not on GenAI traces


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


def claim_metrics(doc: dict[str, Any] | None) -> dict[str, int]:
    """From a published metrics file: the verdict counts (``evidence_holding``, ``evidence_failing``,
    ``evidence_inconclusive``, ``checks_passing``, ..., ``claims_holding`` / ``claims_total``) and ``claim.<id>``
    per claim (1 holds, 0 fails, -1 inconclusive), so the runs table sorts by them."""
    if not doc or not doc.get("claims"):
        return {}
    return {**{k: int(v) for k, v in counts(doc["claims"]).items()},
            **{f"claim.{c['id']}": VERDICT_CODE[c["verdict"]] for c in doc["claims"]}}


def claim_tags(doc: dict[str, Any] | None) -> dict[str, str]:
    """``paperdag.claims`` (the headline line) and ``verdict.<id>`` (holds / fails / inconclusive), so runs can be
    filtered by a claim's verdict: ``tags.verdict.<id> = 'inconclusive'``."""
    if not doc or not doc.get("claims"):
        return {}
    return {"paperdag.claims": headline(counts(doc["claims"])),
            **{f"verdict.{c['id']}": c["verdict"] for c in doc["claims"]}}


def _probe_server(uri: str, timeout: float) -> None:
    """Raise ``ConnectionError`` unless something accepts a TCP connection at the tracking server within
    ``timeout`` seconds (the caller, ``best_effort``, turns it into one warning)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(uri)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "localhost", port), timeout=timeout).close()
    except OSError as e:
        raise ConnectionError(f"no tracking server answers within {timeout:g}s ({e.strerror or e})") from None


def _ms(when: float | None = None) -> int:
    return int((time.time() if when is None else when) * 1000)


def stage_interval(manifest: dict[str, Any] | None) -> tuple[int, int]:
    """(start, end) in epoch ms of the computation recorded in a manifest's ``run.timing`` (now, now without)."""
    timing = (manifest or {}).get("run", {}).get("timing", {})
    try:
        start = datetime.fromisoformat(timing["started"]).timestamp()
        return _ms(start), _ms(start + float(timing["seconds"]))
    except (KeyError, TypeError, ValueError):
        return _ms(), _ms()


def dvc_session() -> str | None:
    """An id of the ``dvc repro`` process this command runs under (DVC sets ``DVC_STAGE``), so its stages share one
    parent run: the nearest ancestor process whose command line runs dvc, by pid and start time."""
    if "DVC_STAGE" not in os.environ:
        return None
    try:
        import psutil

        proc = psutil.Process(os.getppid())
        for _ in range(4):
            if any("dvc" in Path(part).name for part in proc.cmdline()[:2]):
                return f"dvc-{proc.pid}-{int(proc.create_time())}"
            proc = proc.parent()
            if proc is None:
                break
    except Exception:  # noqa: BLE001 - no grouping is better than a failed run
        return None
    return None


def parquet_schema(path: Path) -> str:
    """The MLflow dataset schema (``{"mlflow_colspec": [...]}``) of a Parquet file, read from its footer."""
    import pyarrow.parquet as pq

    cols = [{"name": f.name, "type": str(f.type)} for f in pq.read_schema(path)]
    return json.dumps({"mlflow_colspec": cols})


def best_effort(method: Callable[..., Any]) -> Callable[..., Any]:
    """A tracking call that never stops a run: on the first MLflow error (an unreadable store, a locked database)
    it warns once, in one line, and the run goes on untracked."""

    @functools.wraps(method)
    def call(self: Tracker, *args: Any, **kwargs: Any) -> Any:
        if self.broken:
            return None
        try:
            return method(self, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 - tracking must not fail a run
            self.broken = True
            first = (str(e).strip().splitlines() or [""])[0][:200]
            print(f"warning: MLflow tracking off for the rest of this run ({self.uri}: {type(e).__name__}: {first})",
                  file=sys.stderr, flush=True)
            return None

    return call


class Tracker:
    """Logs one execution's papers and stages to MLflow (see the module docstring)."""

    def __init__(self, root: Path, profile: str, trigger: str, provenance: Callable[[], dict[str, dict[str, Any]]],
                 titles: dict[str, str]):
        self.root, self.profile, self.trigger = root, profile, trigger
        self.provenance, self.titles = provenance, titles  # paper -> provenance, asked when a parent run opens
        self.uri = tracking_uri(root)
        self.init_lock = root / "artifacts" / ".locks" / "mlflow-init.lock"
        self._lock = threading.RLock()
        self._client: Any = None
        self._experiments: dict[str, str] = {}
        self.parents: dict[str, str] = {}
        self._runs_by_key: dict[str, str] = {}  # output key -> run that produced it, this execution
        self._hits: dict[str, list[str]] = defaultdict(list)  # paper -> keys served from the store
        self.parents_logged = 0
        self.session = dvc_session() if trigger == "dvc" else None
        self.broken = False
        self.started = _ms()
        self.timeout = env_seconds("PAPERDAG_TRACKING_TIMEOUT_S", TRACKING_TIMEOUT_S)

    @property
    def client(self) -> Any:
        """The MLflow client, created on first use (imports MLflow, creates or migrates the store under a lock).
        A tracking server must accept a TCP connection within ``PAPERDAG_TRACKING_TIMEOUT_S`` and each request is
        bounded by it, with one retry: an unreachable server costs seconds, not MLflow's minutes of retries."""
        if self._client is None:
            if self.uri.startswith(("http://", "https://")):
                _probe_server(self.uri, self.timeout)
                os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", str(max(1, round(self.timeout))))
                os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
                os.environ.setdefault("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "1")
            os.environ.setdefault("MLFLOW_ENABLE_ASYNC_LOGGING", "false")
            for name in ("mlflow", "alembic"):  # store creation and migration chatter
                logging.getLogger(name).setLevel(logging.WARNING)
            from mlflow import MlflowClient

            self.init_lock.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.init_lock)):
                client = MlflowClient(tracking_uri=self.uri)
                client.search_experiments(max_results=1)
            self._client = client
        return self._client

    def experiment(self, paper: str) -> str:
        """The paper's experiment id, created on first use as a model-development experiment described by the
        paper's title (artifacts under mlartifacts/<paper> locally)."""
        if paper not in self._experiments:
            tags = {"mlflow.experimentKind": EXPERIMENT_KIND, "mlflow.note.content": self.titles.get(paper, paper)}
            client = self.client  # opened before taking the init lock, which opening takes too
            with FileLock(str(self.init_lock)):
                found = client.get_experiment_by_name(paper)
                if found is None:
                    location = None if "MLFLOW_TRACKING_URI" in os.environ else (self.root / "mlartifacts" / paper).as_uri()
                    exp_id = client.create_experiment(paper, artifact_location=location, tags=tags)
                else:
                    exp_id = found.experiment_id
                    for k, v in tags.items():
                        if found.tags.get(k) != v:
                            client.set_experiment_tag(exp_id, k, v)
            self._experiments[paper] = exp_id
        return self._experiments[paper]

    # -- parent runs -------------------------------------------------------------------------------------------
    def _parent_name(self, paper: str) -> str:
        prov = self.provenance().get(paper, {})
        commit = (prov.get("commit") or "no-git")[:7] + ("+dirty" if prov.get("dirty") else "")
        when = datetime.fromtimestamp(self.started / 1000).strftime("%Y-%m-%d %H:%M:%S")
        return f"{paper} · {self.profile} · {self.trigger} · {commit} · {when}"

    def parent(self, paper: str, start_ms: int | None = None) -> str:
        """The paper's parent run of this execution (of this ``dvc repro`` when grouped), created on first use."""
        if paper in self.parents:
            return self.parents[paper]
        prov = self.provenance().get(paper, {})
        with self._lock:
            exp = self.experiment(paper)
            if self.session:
                found = self.client.search_runs([exp], f"tags.`paperdag.session` = '{self.session}'", max_results=1)
                if found:
                    self.parents[paper] = found[0].info.run_id
                    return self.parents[paper]
            tags = {
                "mlflow.runName": self._parent_name(paper), "paperdag.profile": self.profile,
                "paperdag.trigger": self.trigger, "paperdag.version": __version__,
                "paperdag.git_commit": str(prov.get("commit")), "paperdag.provenance": describe(prov)[:MAX_TAG_CHARS],
                "mlflow.source.name": f"paperdag ({self.trigger})", "mlflow.source.type": "PROJECT",
            }
            if prov.get("commit"):
                tags["mlflow.source.git.commit"] = prov["commit"]
            if self.session:
                tags["paperdag.session"] = self.session
            run = self.client.create_run(exp, start_time=start_ms or self.started, tags=tags)
            self.parents[paper] = run.info.run_id
            self.parents_logged += 1
        return self.parents[paper]

    @best_effort
    def end_paper(self, paper: str, status: str, metrics: dict[str, float], claims: dict[str, Any] | None) -> None:
        """Close the paper's parent run (``FINISHED``, ``FAILED`` or ``KILLED``) with its counts and verdicts; a
        paper whose every stage came from the store gets a parent run that links to the producing runs."""
        hits = self._hits.pop(paper, [])
        if paper not in self.parents and self.trigger == "dvc":
            return  # a dvc stage served from the store: its producing run holds it, and dvc repro stays fast
        from mlflow.entities import Metric, RunTag

        with self._lock:
            run_id = self.parent(paper)
            tags = claim_tags(claims)
            if hits and not any(k in self._runs_by_key for k in hits):
                tags["paperdag.cache"] = "hit"
                tags["mlflow.note.content"] = f"All {len(hits)} stages served from the store; no stage recomputed."
            now = _ms()
            rows = {**metrics, **claim_metrics(claims)}
            self.client.log_batch(run_id, metrics=[Metric(k, float(v), now, 0) for k, v in rows.items()],
                                  tags=[RunTag(k, v) for k, v in tags.items()])
            self.client.set_terminated(run_id, status, end_time=now)
        self.parents.pop(paper, None)

    # -- stage runs --------------------------------------------------------------------------------------------
    def producer_run(self, paper: str, key: str) -> str | None:
        """The run that computed the output with this key (this execution's, else the first in the store)."""
        if key in self._runs_by_key:
            return self._runs_by_key[key]
        runs = self.client.search_runs(
            [self.experiment(paper)], f"tags.`paperdag.key` = '{key}' and tags.`paperdag.cache` = 'miss'",
            max_results=1, order_by=["attributes.start_time ASC"],
        )
        return runs[0].info.run_id if runs else None

    def cached(self, plan: Any) -> None:
        """A stage served from the store: no run of its own (its producing run holds it)."""
        self._hits[plan.paper].append(plan.key)

    @best_effort
    def stage(self, plan: Any, manifest: dict[str, Any] | None, entry: Path | None, inputs: dict[str, Path],
              error: str | None = None, attempt: int = 0, claims: dict[str, Any] | None = None) -> str:
        """A nested run for a stage that was computed (or failed: ``error``; ``attempt`` > 0 for a retry): params,
        summary metrics, curves by step, artifacts, input datasets; for the metrics stage its claims."""
        from mlflow.entities import Metric, Param

        start, end = stage_interval(manifest) if error is None else (_ms(), _ms())
        status = "miss" if error is None else "failed"
        tags = {
            "mlflow.runName": plan.name if not attempt else f"{plan.name} (attempt {attempt + 1})",
            "mlflow.parentRunId": self.parent(plan.paper, start), "paperdag.paper": plan.paper,
            "paperdag.stage": plan.name, "paperdag.kind": plan.stage.kind, "paperdag.key": plan.key,
            "paperdag.cache": status, "paperdag.attempt": str(attempt + 1),
            "paperdag.provenance": describe(plan.provenance)[:MAX_TAG_CHARS],
        } | claim_tags(claims)
        if error:
            tags["paperdag.error"] = error[:MAX_TAG_CHARS]
        with self._lock:
            run_id = self.client.create_run(self.experiment(plan.paper), start_time=start, tags=tags).info.run_id
            params = [Param(k, v) for k, v in flatten(plan.params).items()]
            params += [Param(f"args.{k}", v) for k, v in flatten(plan.stage.args).items()]
            params += [Param(f"upstream.{k}", v) for k, v in plan.upstream.items()]
            metrics = self._summary(manifest, end) + [Metric(k, v, end, 0) for k, v in claim_metrics(claims).items()]
            _log_batches(self.client, run_id, params, metrics)
            if entry is not None and error is None:
                self.client.log_artifacts(run_id, str(entry))
                self._log_curves(run_id, plan, entry, start, end)
                self._log_datasets(run_id, plan, inputs)
                self._runs_by_key[plan.key] = run_id
            self.client.set_terminated(run_id, "FAILED" if error else "FINISHED", end_time=end)
        return run_id

    @staticmethod
    def _summary(manifest: dict[str, Any] | None, when: int) -> list[Any]:
        from mlflow.entities import Metric

        if manifest is None:
            return []
        rows = [Metric(k, v, when, 0) for k, v in manifest.get("summary", {}).items()]
        seconds = manifest.get("run", {}).get("timing", {}).get("seconds")
        if seconds is not None:
            rows.append(Metric("stage_seconds", seconds, when, 0))
        return rows

    def _log_curves(self, run_id: str, plan: Any, entry: Path, start: int, end: int) -> None:
        """Curve points by step; points with a ``run`` label go to a child run per label (with its params)."""
        from mlflow.entities import Metric, Param

        curves = entry / CURVES_FILE
        if not curves.is_file():
            return
        by_run: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for line in curves.read_text().splitlines():
            point = json.loads(line)
            by_run[point.get("run") or ""].append(point)
        for label, points in by_run.items():
            target = run_id
            if label:
                tags = {"mlflow.runName": label, "mlflow.parentRunId": run_id, "paperdag.paper": plan.paper,
                        "paperdag.stage": plan.name, "paperdag.curve_run": label}
                target = self.client.create_run(self.experiment(plan.paper), start_time=start, tags=tags).info.run_id
            params = [Param(k, v) for k, v in flatten(points[0].get("params") or {}).items()] if label else []
            _log_batches(self.client, target, params,
                         [Metric(p["name"], p["value"], end, p["step"]) for p in points])
            if label:
                self.client.set_terminated(target, "FINISHED", end_time=end)

    def _log_datasets(self, run_id: str, plan: Any, inputs: dict[str, Path]) -> None:
        """Each upstream file the stage could read, as an MLflow dataset (digest; Parquet schema), tagged with the
        upstream stage and the run that produced it."""
        from mlflow.entities import Dataset, DatasetInput, InputTag

        datasets = []
        for name, folder in inputs.items():
            manifest = json.loads((folder / "manifest.json").read_text())
            producer = self.producer_run(plan.paper, manifest["key"])
            for rel, meta in manifest["files"].items():
                if rel.startswith("_"):
                    continue
                schema = parquet_schema(folder / rel) if rel.endswith(".parquet") else None
                ds = Dataset(name=f"{name}/{rel}", digest=meta["sha256"][:16], source_type="local",
                             source=json.dumps({"uri": (folder / rel).as_uri()}), schema=schema)
                tags = [InputTag("mlflow.data.context", "input"), InputTag("paperdag.upstream", name)]
                if producer:
                    tags.append(InputTag("paperdag.producer_run_id", producer))
                datasets.append(DatasetInput(ds, tags=tags))
        if datasets:
            self.client.log_inputs(run_id, datasets=datasets)


def _log_batches(client: Any, run_id: str, params: list[Any], metrics: list[Any]) -> None:
    """``log_batch`` within MLflow's limits (100 params, 1000 entries per call)."""
    chunks = max(math.ceil(len(params) / 100), math.ceil(len(metrics) / 900), 1)
    for c in range(chunks):
        client.log_batch(run_id, params=params[c * 100:(c + 1) * 100], metrics=metrics[c * 900:(c + 1) * 900])
