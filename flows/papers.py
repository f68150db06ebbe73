"""The Prefect flow that runs papers' DAGs: one task per stale stage, wired by the declared upstream stages.

Independent stages (and different papers) run at the same time: Prefect's thread pool waits on Ray, which runs
each stage with its declared resources. Cached stages are recorded without a task. A failed stage (after its
retries) leaves its upstream outputs cached and its downstream stages not run (Prefect state NotReady).
"""

from __future__ import annotations

from prefect import flow
from prefect.futures import wait
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import quote

from paperdag.params import DEFAULT_PROFILE
from paperdag.ray_exec import RayExecutor
from paperdag.runs import Execution
from tasks.stage import run_stage


@flow(name="paperdag", task_runner=ThreadPoolTaskRunner(max_workers=32))
def run_papers(papers: list[str], profile: str = DEFAULT_PROFILE, force: bool = False, only: str | None = None,
               ray_address: str | None = None, retries: int = 1, trigger: str = "schedule") -> dict[str, bool]:
    """Run papers' pipelines; returns ``{"paper.stage": cache_hit}`` for every stage recorded."""
    execution = Execution.open(papers, profile=profile, trigger=trigger, force=force, only=only)
    futures = {}
    executor = RayExecutor(ray_address) if execution.pending() else None
    for plan in execution.plans:
        if not plan.run:
            continue
        if plan.cached:
            execution.finish(plan, plan.manifest, hit=True)
            continue
        upstream = [futures[f"{plan.paper}.{u}"] for u in plan.upstream if f"{plan.paper}.{u}" in futures]
        futures[plan.label] = run_stage.with_options(name=plan.label, retries=retries).submit(
            quote(execution), quote(plan), quote(executor), wait_for=upstream)  # quote: Prefect need not walk them
    wait(list(futures.values()))
    for label, future in futures.items():
        state = future.state
        if state.is_failed():
            execution.fail(execution.plan(*label.split(".", 1)), _error(future))
    execution.close()
    return dict(execution.done)


def _error(future) -> str:  # noqa: ANN001 - a PrefectFuture
    try:
        future.result()
    except Exception as e:  # noqa: BLE001 - the stage's own exception
        return f"{type(e).__name__}: {e}"
    return "failed"
