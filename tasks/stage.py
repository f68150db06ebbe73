"""A Prefect task that runs one stage on Ray and records it (materialise, MLflow) in the driver.

Prefect's own caching is off (``NO_CACHE``): the content-addressed store is the cache, shared with ``dvc repro``
and the CLI. Only small plan objects and manifests cross the task boundary, never tensors.
"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from paperdag.engine import StagePlan
from paperdag.ray_exec import RayExecutor
from paperdag.runs import Execution


@task(cache_policy=NO_CACHE, retries=1)
def run_stage(execution: Execution, plan: StagePlan, executor: RayExecutor) -> str:
    """Execute ``plan`` on Ray (a cache hit if a concurrent run already produced it), then record it."""
    manifest, hit = executor.run(execution.store, plan, execution.inputs(plan))
    execution.finish(plan, manifest, hit)
    return plan.key
