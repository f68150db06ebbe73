"""Plan and execute a paper's stages; shared by every run path (local, Prefect + Ray, ``paperdag stage``).

A stage's cache key is known before anything runs:

    key = sha256(json(paper, stage, fn, args, sha256(science code it imports), params slice, upstream keys))

so planning a whole DAG costs file hashing only; cached stages never import their code or start an executor.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import platform
import shutil
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from paperdag.claims import METRICS_FILE, VERDICT_CODE, counts, headline
from paperdag.codehash import code_files, code_hash
from paperdag.dag import Pipeline, Resources, Stage
from paperdag.io import read_json, write_json_atomic
from paperdag.params import DEFAULT_PROFILE, load_params, read_params_file
from paperdag.project import Project
from paperdag.provenance import canonical_sha256
from paperdag.store import MANIFEST, RUN_FILE, Store

KEY_VERSION = 2  # 2: code hashed without docstrings, declaration modules left out, stage args in the key


@dataclass
class StagePlan:
    """One stage of one run: its declaration, key, params and whether the store already holds its output.

    ``params`` is the stage's params slice as JSON (what enters the key, DVC and MLflow); ``values`` is the paper's
    validated params object, of which the stage sees only the declared keys.
    """

    pipeline: Pipeline
    stage: Stage
    key: str
    params: dict[str, Any]
    values: BaseModel
    upstream: dict[str, str]
    cached: bool
    force: bool = False  # recompute even if the store holds the output
    run: bool = True  # False: not requested (``--only``) and not needed
    manifest: dict[str, Any] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)  # provenance.provenance() of the stage's inputs
    profile: str = DEFAULT_PROFILE

    @property
    def paper(self) -> str:
        return self.pipeline.slug

    @property
    def name(self) -> str:
        return self.stage.name

    @property
    def label(self) -> str:
        return f"{self.paper}.{self.stage.name}"

    @property
    def resources(self) -> Resources:
        return self.stage.resources


def stage_module(pipeline: Pipeline, stage: Stage) -> str:
    return f"{pipeline.package}.{stage.module}"


def stage_code_files(pipeline: Pipeline, stage: Stage) -> list[Path]:
    """The science files a stage depends on (its DVC deps)."""
    return list(code_files(stage_module(pipeline, stage), pipeline.package))


def declared_keys(stage: Stage) -> list[str]:
    """The params keys a stage reads: ``seed`` and what it declares."""
    return sorted({"seed", *stage.params})


def stage_key(pipeline: Pipeline, stage: Stage, params: dict[str, Any], upstream: dict[str, str]) -> str:
    """sha256 of (key version, paper, stage, fn, args, science code hash, params slice, upstream keys)."""
    payload = {
        "v": KEY_VERSION, "paper": pipeline.slug, "stage": stage.name, "fn": stage.fn, "args": stage.args,
        "code": code_hash(stage_module(pipeline, stage), pipeline.package), "params": params, "upstream": upstream,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def stage_inputs(pipeline: Pipeline) -> dict[str, list[Path]]:
    """Per stage, the code files its result depends on: its own and those of every stage upstream of it (what its
    key covers, through the upstream keys); with the paper's params section, the inputs ``provenance`` checks."""
    inputs: dict[str, list[Path]] = {}
    for stage in pipeline.order():
        files = set(stage_code_files(pipeline, stage)).union(*(inputs[u] for u in stage.upstream))
        inputs[stage.name] = sorted(files)
    return inputs


def load_pipeline_params(project: Project, pipeline: Pipeline, profile: str,
                         data: dict[str, Any] | None = None) -> BaseModel:
    """The validated params object of one paper for a profile."""
    data = read_params_file(project.params_path) if data is None else data
    return load_params(data, pipeline.slug, pipeline.params_model, profile, project.params_path)


def stage_keys(pipeline: Pipeline, values: BaseModel) -> dict[str, tuple[str, dict[str, Any], dict[str, str]]]:
    """Per stage, in topological order: (its key, the params it declares, its upstream stages' keys), from the code
    and ``values`` alone (no store is read)."""
    dumped = values.model_dump(mode="json")
    found: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {}
    for stage in pipeline.order():
        params = {k: dumped[k] for k in declared_keys(stage) if k in dumped}
        upstream = {u: found[u][0] for u in stage.upstream}
        found[stage.name] = (stage_key(pipeline, stage, params, upstream), params, upstream)
    return found


def plan_pipeline(pipeline: Pipeline, values: BaseModel, store: Store, force: bool = False,
                  only: Sequence[str] = ()) -> list[StagePlan]:
    """Keys and cache status of every stage, in topological order.

    ``force`` recomputes (every stage, or just those in ``only``); ``only`` runs those stages plus any uncached
    ancestors.
    """
    for name in only:
        pipeline.stage(name)  # raises a UsageError for an unknown stage
    plans: dict[str, StagePlan] = {}
    for stage, (key, params, upstream) in zip(pipeline.order(), stage_keys(pipeline, values).values()):
        manifest = store.lookup(pipeline.slug, stage.name, key, outputs=stage.outputs)
        forced = force and (not only or stage.name in only)
        plans[stage.name] = StagePlan(pipeline=pipeline, stage=stage, key=key, params=params, values=values,
                                      upstream=upstream, cached=manifest is not None and not forced, force=forced,
                                      manifest=manifest)
    if only:
        needed = set(only)
        for stage in reversed(pipeline.order()):
            if stage.name in needed:
                needed |= {u for u in stage.upstream if not plans[u].cached}
        for name, plan in plans.items():
            plan.run = name in needed
    return [plans[s.name] for s in pipeline.order()]


def restrict(values: BaseModel, keys: Sequence[str]) -> BaseModel:
    """The params object with only ``keys`` set (same class, values as validated: tuples and sub-models kept); any
    other field raises AttributeError on access, so a stage cannot read a param that is not in its key."""
    return type(values).model_construct(**{k: getattr(values, k) for k in keys if k in type(values).model_fields})


def resolve_fn(package: str, fn: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` reference inside ``package`` names (imports the module)."""
    module, _, name = fn.partition(":")
    return getattr(importlib.import_module(f"{package}.{module}"), name)


def _seed_everything(seed: int, stage: str, threads: int) -> Any:
    """The stage's numpy Generator, seeded by (seed, crc32(stage)); torch, where the stage's module imported it,
    seeded by seed * 1000003 + crc32(stage) with ``threads`` intra-op threads. A stage that imports torch only while
    it runs gets the same threads through OMP_NUM_THREADS, which torch reads when it starts (else it takes every core,
    and its sums would depend on the machine's core count)."""
    import numpy as np

    salt = zlib.crc32(stage.encode())
    os.environ["OMP_NUM_THREADS"] = str(max(1, threads))
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        torch.manual_seed(seed * 1_000_003 + salt)
        torch.set_num_threads(max(1, threads))
    return np.random.default_rng([seed, salt])


def _threads_now() -> tuple[str | None, int | None]:
    """(OMP_NUM_THREADS, torch's intra-op threads where torch is imported): what ``_seed_everything`` overrides."""
    torch = sys.modules.get("torch")
    return os.environ.get("OMP_NUM_THREADS"), torch.get_num_threads() if torch is not None else None


def _restore_threads(saved: tuple[str | None, int | None]) -> None:
    """Put back what ``_threads_now`` saved, so an in-process run goes on with its caller's threads after a stage (a
    torch first imported by the stage keeps the stage's: its default is decided once, at import)."""
    env, threads = saved
    if env is None:
        os.environ.pop("OMP_NUM_THREADS", None)
    else:
        os.environ["OMP_NUM_THREADS"] = env
    if threads is not None:
        sys.modules["torch"].set_num_threads(threads)


def execute_stage(store: Store, plan: StagePlan, inputs: dict[str, str], device: str = "cpu") -> tuple[dict, bool]:
    """Run one stage into a scratch folder and commit it; returns (manifest, cache_hit).

    The manifest is a function of the key (what was computed, file hashes, summary); the facts of this run (time,
    host, device, profile, provenance, its environment and its upstream stages' from their run.json) go to the
    entry's ``run.json`` and come back as ``manifest["run"]``. On CUDA the stage runs with deterministic kernels where
    torch has them (``device.deterministic``); its environment names the ops that had none.

    Holds the output's lock throughout and re-checks the store first, so a concurrent run that finished the same
    output meanwhile turns this call into a cache hit.
    """
    from threadpoolctl import threadpool_limits

    from paperdag.device import DEFAULT_PRECISION, deterministic
    from paperdag.environment import capture
    from paperdag.stage import StageContext
    from paperdag.store import hash_folder

    stage = plan.stage
    with store.lock(plan.paper, stage.name, plan.key):
        found = None if plan.force else store.lookup(plan.paper, stage.name, plan.key, outputs=stage.outputs)
        if found is not None:
            return found, True
        scratch = store.scratch(plan.paper, stage.name, plan.key)
        threads = _threads_now()
        try:
            fn = resolve_fn(plan.pipeline.package, stage.fn)
            rng = _seed_everything(int(plan.params.get("seed", 0)), stage.name, int(stage.resources.cpus))
            ctx = StageContext(
                params=restrict(plan.values, declared_keys(stage)), out=scratch, rng=rng, device=device,
                label=plan.label, outputs=stage.outputs, inputs={u: Path(inputs[u]) for u in stage.upstream},
                upstream_outputs={u: plan.pipeline.stage(u).outputs for u in stage.upstream},
            )
            started, t0 = datetime.now(timezone.utc).isoformat(timespec="seconds"), time.perf_counter()
            with threadpool_limits(limits=max(1, int(stage.resources.cpus))):  # BLAS/OpenMP threads as on Ray, so
                with deterministic(device) as nondeterministic:  # sums reduce in the same order on every machine
                    summary = fn(ctx, **stage.args) or {}
                    seconds = time.perf_counter() - t0
                environment = capture(plan.paper, device, str(plan.params.get("precision", DEFAULT_PRECISION)),
                                      seconds, nondeterministic)
            missing = [o for o in stage.outputs if not (scratch / o).exists()]
            if missing:
                raise RuntimeError(f"stage did not write its declared outputs {missing}")
            if (scratch / MANIFEST).exists():
                raise RuntimeError(f"stage wrote {MANIFEST}, a name reserved for the platform's manifest")
            ctx.flush_curves()
            manifest = {
                "paper": plan.paper, "stage": stage.name, "kind": stage.kind, "key": plan.key,
                "key_parts": {"fn": stage.fn, "args": stage.args, "params": plan.params, "upstream": plan.upstream},
                "files": hash_folder(scratch), "summary": {k: float(v) for k, v in summary.items()},
            }
            run = {"provenance": plan.provenance, "profile": plan.profile, "device": device, "host": platform.node(),
                   "params_sha256": canonical_sha256(plan.params),  # with profile: what estimates match on
                   "timing": {"started": started, "seconds": round(seconds, 3)}, "environment": environment,
                   "upstream_environments": upstream_environments(ctx.inputs)}
            store.commit(scratch, manifest, run)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
            _restore_threads(threads)
    return manifest | {"run": run}, False


def upstream_environments(inputs: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """Stage -> environment of every stage upstream of a stage, from its inputs' run.json (each holds its own and its
    upstream stages'): a result's entry then describes every stage behind it."""
    found: dict[str, dict[str, Any]] = {}
    for name, folder in inputs.items():
        run = read_run(folder)
        found.update(run.get("upstream_environments") or {})
        if run.get("environment"):
            found[name] = run["environment"]
    return found


def read_run(entry: Path) -> dict[str, Any]:
    """An entry's run.json ({} when it has none: an entry from before run.json, or a damaged one)."""
    try:
        run = read_json(entry / RUN_FILE)
    except (OSError, ValueError):
        return {}
    return run if isinstance(run, dict) else {}


def round_floats(value: Any, digits: int = 6) -> Any:
    """Every float in a JSON value rounded to ``digits`` significant digits (so float noise does not churn git)."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: round_floats(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [round_floats(v, digits) for v in value]
    return value


def metrics_doc(pipeline: Pipeline, entry: Path, profile: str, key: str) -> dict[str, Any]:
    """The document ``publish_metrics`` writes for the metrics stage's store entry (reads the entry, writes nothing):
    its ``metrics.json`` with paper, title, profile, key, the verdict counts and the stages' ``environment``."""
    from paperdag.environment import summarise

    body = read_json(entry / METRICS_FILE)
    claims = body.get("claims", [])
    n = counts(claims)
    verdicts = {"headline": headline(n), **n,
                "regime_reached": n["preconditions_holding"] == n["preconditions_total"],
                "verdicts": {c["id"]: c["verdict"] for c in claims},
                "holds": {c["id"]: int(c["verdict"] == "holds") for c in claims}}
    run = read_run(entry)
    stages = {**(run.get("upstream_environments") or {}), pipeline.metrics_stage: run.get("environment")}
    environment = summarise({stage: env for stage, env in stages.items() if env})
    return round_floats({"paper": pipeline.slug, "title": pipeline.title, "profile": profile, "key": key,
                         **verdicts, **body, "environment": environment})


def publish_metrics(project: Project, pipeline: Pipeline, entry: Path, profile: str, key: str) -> dict[str, Any]:
    """Copy the metrics stage's ``metrics.json`` to ``metrics/<slug>.json`` (another profile's to
    ``metrics/profiles/<profile>/``, and to ``metrics/<slug>.json`` only while no result is published there: a
    new paper's first smoke run), adding paper, title, profile, key and the verdicts (``verdicts.counts``, the
    ``headline`` line, ``regime_reached``, ``verdicts`` id -> verdict, ``holds`` id -> 0/1), and its flat DVC summary
    (counts, ``claim.<id>`` 1 holds / 0 fails / -1 inconclusive, the pipeline's headline metrics) next to it under
    ``summary/``; floats to 6 significant digits. ``environment`` is the environment of the stages behind the
    result (``environment.summarise`` of what the entry's run.json records): a function of the entry, so a cached
    or pulled result publishes the same bytes on every machine."""
    doc = metrics_doc(pipeline, entry, profile, key)
    claims = doc.get("claims", [])
    numbers = {k: doc["metrics"][k] for k in pipeline.headline if k in doc.get("metrics", {})}
    summary = {**counts(claims), "regime_reached": int(doc["regime_reached"]),
               "claim": {c["id"]: VERDICT_CODE[c["verdict"]] for c in claims}, **numbers}
    targets = [profile]
    if profile != DEFAULT_PROFILE and not project.metrics_path(pipeline.slug).exists():
        targets.append(DEFAULT_PROFILE)  # a new paper's first results: there is nothing published to replace yet
    for where in targets:
        write_json_atomic(project.metrics_path(pipeline.slug, where), doc)
        write_json_atomic(project.summary_path(pipeline.slug, where), summary)
    return doc
