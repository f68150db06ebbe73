"""A Prefect task that runs one stage on Ray; the scheduling loop in the driver records it (materialise, MLflow).

Prefect's own caching is off (``NO_CACHE``): the content-addressed store is the cache, shared with ``dvc repro``
and the CLI. Retries belong to the loop (each attempt is its own task run). Only small plan objects and manifests
cross the task boundary, never tensors.
"""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from paperdag.engine import StagePlan
from paperdag.ray_exec import RayExecutor
from paperdag.store import Store


@task(cache_policy=NO_CACHE, retries=0)
def run_stage(store: Store, plan: StagePlan, inputs: dict[str, str], executor: RayExecutor) -> tuple[dict, bool]:
    """Execute ``plan`` on Ray; returns ``(manifest, cache_hit)`` (a hit if a concurrent run produced it). Its
    outcome goes to the task run's log, which the Prefect UI shows."""
    log = get_run_logger()
    log.info("%s: key %s, resources %s", plan.label, plan.key[:12], plan.resources)
    manifest, hit = executor.run(store, plan, inputs)
    timing = manifest.get("run", {}).get("timing", {})
    log.info("%s: %s; files %s; summary %s", plan.label,
             "served from the store" if hit else f"computed in {timing.get('seconds', 0):.1f}s on "
             f"{manifest.get('run', {}).get('device', '?')}", sorted(manifest["files"]), manifest.get("summary"))
    return manifest, hit
