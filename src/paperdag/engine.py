"""Plan and execute a paper's stages; shared by every run path (local, Prefect + Ray, ``paperdag stage``).

A stage's cache key is known before anything runs:

    key = sha256(json(paper, stage, fn, sha256(science code it imports), its params slice, its upstream keys))

so planning a whole DAG costs file hashing only; cached stages never import their code or start an executor.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from paperdag import __version__
from paperdag.claims import METRICS_FILE
from paperdag.codehash import code_files, code_hash
from paperdag.dag import Pipeline, Resources, Stage
from paperdag.errors import UsageError
from paperdag.io import read_json, write_json_atomic
from paperdag.params import load_params, read_params_file
from paperdag.store import MANIFEST, Store

KEY_VERSION = 1


@dataclass
class Project:
    """A paperdag project folder: params.yaml, the artifacts/ view, metrics/, and the store (artifact root)."""

    root: Path
    artifact_root: str

    @classmethod
    def find(cls, start: Path | None = None, artifact_root: str | None = None) -> Project:
        """The nearest folder at or above ``start`` holding params.yaml; artifact root from arg or env."""
        here = Path(start or Path.cwd()).resolve()
        for folder in (here, *here.parents):
            if (folder / "params.yaml").is_file():
                root = artifact_root or os.environ.get("PAPERDAG_ARTIFACT_ROOT") or str(folder / "artifacts")
                return cls(root=folder, artifact_root=root)
        raise UsageError(f"no params.yaml in {here} or above: run paperdag inside a paperdag project")

    @property
    def params_path(self) -> Path:
        return self.root / "params.yaml"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    def store(self) -> Store:
        return Store(self.artifact_root, local_dir=self.artifacts)

    def view(self, paper: str, stage: str) -> Path:
        """Where a stage's output is materialised in the project (the DVC ``outs`` path)."""
        return self.artifacts / paper / stage

    def metrics_path(self, paper: str) -> Path:
        return self.root / "metrics" / f"{paper}.json"


@dataclass
class StagePlan:
    """One stage of one run: its key, params slice and whether the store already holds its output."""

    paper: str
    package: str
    stage: str
    kind: str
    fn: str
    key: str
    params: dict[str, Any]
    upstream: dict[str, str]
    resources: Resources
    outputs: tuple[str, ...]
    cached: bool
    force: bool = False  # recompute even if the store holds the output
    run: bool = True  # False: not requested (``--only``) and not needed
    manifest: dict[str, Any] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.paper}.{self.stage}"


def stage_module(pipeline: Pipeline, stage: Stage) -> str:
    return f"{pipeline.package}.{stage.fn.partition(':')[0]}"


def stage_code_files(pipeline: Pipeline, stage: Stage) -> list[Path]:
    """The science files a stage depends on (its DVC deps)."""
    return list(code_files(stage_module(pipeline, stage), pipeline.package))


def params_slice(pipeline: Pipeline, stage: Stage, values: dict[str, Any]) -> dict[str, Any]:
    keys = sorted({"seed", *stage.params} & set(values))
    return {k: values[k] for k in keys}


def stage_key(pipeline: Pipeline, stage: Stage, params: dict[str, Any], upstream: dict[str, str]) -> str:
    """sha256 of (key version, paper, stage, fn, science code hash, params slice, upstream keys)."""
    payload = {
        "v": KEY_VERSION, "paper": pipeline.slug, "stage": stage.name, "fn": stage.fn,
        "code": code_hash(stage_module(pipeline, stage), pipeline.package), "params": params, "upstream": upstream,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def git_provenance(root: Path) -> dict[str, Any]:
    """Commit and dirty flag of the project (``None`` outside a git checkout)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=5)
        if commit.returncode:
            return {"commit": None, "dirty": None}
        return {"commit": commit.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def load_pipeline_params(project: Project, pipeline: Pipeline, profile: str,
                         data: dict[str, Any] | None = None) -> dict[str, Any]:
    """Validated params of one paper for a profile, as plain JSON values."""
    data = read_params_file(project.params_path) if data is None else data
    model = load_params(data, pipeline.slug, pipeline.params_model, profile, project.params_path)
    return model.model_dump(mode="json")


def plan_pipeline(project: Project, pipeline: Pipeline, values: dict[str, Any], store: Store,
                  force: bool = False, only: str | None = None) -> list[StagePlan]:
    """Keys and cache status of every stage, in topological order.

    ``force`` recomputes (every stage, or just ``only``); ``only`` runs that stage plus any uncached ancestors.
    """
    if only is not None:
        pipeline.stage(only)  # raises a UsageError for an unknown stage
    plans: dict[str, StagePlan] = {}
    for stage in pipeline.order():
        params = params_slice(pipeline, stage, values)
        upstream = {u: plans[u].key for u in stage.upstream}
        key = stage_key(pipeline, stage, params, upstream)
        manifest = store.lookup(pipeline.slug, stage.name, key)
        forced = force and (only is None or only == stage.name)
        plans[stage.name] = StagePlan(
            paper=pipeline.slug, package=pipeline.package, stage=stage.name, kind=stage.kind, fn=stage.fn, key=key, params=params,
            upstream=upstream, resources=stage.resources, outputs=stage.outputs,
            cached=manifest is not None and not forced, force=forced, manifest=manifest,
        )
    if only is not None:
        needed = {only}
        for stage in reversed(pipeline.order()):
            if stage.name in needed:
                needed |= {u for u in stage.upstream if not plans[u].cached}
        for name, plan in plans.items():
            plan.run = name in needed
    return [plans[s.name] for s in pipeline.order()]


def resolve_fn(package: str, fn: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` reference inside ``package`` names (imports the module)."""
    module, _, name = fn.partition(":")
    return getattr(importlib.import_module(f"{package}.{module}"), name)


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "paperdag": __version__}
    for name in ("numpy", "pyarrow", "torch"):
        if name in sys.modules:
            versions[name] = getattr(sys.modules[name], "__version__", "?")
    return versions


def _seed_everything(seed: int, stage: str, threads: int) -> Any:
    import numpy as np

    salt = zlib.crc32(stage.encode())
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        torch.manual_seed(seed * 1_000_003 + salt)
        torch.set_num_threads(max(1, threads))
    return np.random.default_rng([seed, salt])


def execute_stage(store: Store, plan: StagePlan, inputs: dict[str, str], device: str = "cpu") -> tuple[dict, bool]:
    """Run one stage into a scratch folder and commit it; returns (manifest, cache_hit).

    Holds the output's lock throughout and re-checks the store first, so a concurrent run that finished the same
    output meanwhile turns this call into a cache hit.
    """
    from paperdag.stage import ParamsView, StageContext
    from paperdag.store import hash_folder

    with store.lock(plan.paper, plan.stage, plan.key):
        found = None if plan.force else store.lookup(plan.paper, plan.stage, plan.key)
        if found is not None:
            return found, True
        scratch = store.scratch(plan.paper, plan.stage, plan.key)
        try:
            fn = resolve_fn(plan.package, plan.fn)
            rng = _seed_everything(int(plan.params.get("seed", 0)), plan.stage, int(plan.resources.cpus))
            ctx = StageContext(params=ParamsView(plan.params, plan.paper, plan.stage),
                               inputs={k: Path(v) for k, v in inputs.items()}, out=scratch, rng=rng,
                               device=device, label=plan.label)
            started, t0 = datetime.now(timezone.utc).isoformat(timespec="seconds"), time.perf_counter()
            summary = fn(ctx) or {}
            seconds = time.perf_counter() - t0
            missing = [o for o in plan.outputs if not (scratch / o).exists()]
            if missing:
                raise RuntimeError(f"stage did not write its declared outputs {missing}")
            if (scratch / MANIFEST).exists():
                raise RuntimeError(f"stage wrote {MANIFEST}, a name reserved for the platform's manifest")
            ctx.flush_curves()
            manifest = {
                "paper": plan.paper, "stage": plan.stage, "kind": plan.kind, "key": plan.key,
                "key_parts": {"fn": plan.fn, "params": plan.params, "upstream": plan.upstream},
                "files": hash_folder(scratch), "summary": {k: float(v) for k, v in summary.items()},
                "provenance": plan.provenance, "versions": _versions(), "device": device,
                "host": platform.node(), "timing": {"started": started, "seconds": round(seconds, 3)},
            }
            store.commit(scratch, manifest)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return manifest, False


def publish_metrics(project: Project, pipeline: Pipeline, entry: Path, profile: str, key: str) -> Path:
    """Copy the metrics stage's ``metrics.json`` to ``metrics/<slug>.json``, adding paper, title and profile."""
    body = read_json(entry / METRICS_FILE)
    doc = {"paper": pipeline.slug, "title": pipeline.title, "profile": profile, "key": key, **body}
    target = project.metrics_path(pipeline.slug)
    write_json_atomic(target, doc)
    return target
