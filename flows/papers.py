"""The Prefect flow that runs papers' DAGs: one Prefect task per stale stage, scheduled by ``paperdag.runs.drive``.

Independent stages (and different papers) run at the same time: Prefect's thread pool waits on Ray, which runs
each stage with its declared resources. Cached stages are recorded without a task. A failed stage is retried by the
loop (each attempt is a task run), then reported; its upstream outputs stay cached and its descendants do not run.
The CLI plans once and hands its opened ``Execution`` to the flow (``run_execution``); a scheduled deployment opens
its own.
"""

from __future__ import annotations

import uuid
from concurrent.futures import Future

from prefect import flow
from prefect.futures import PrefectFuture
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import quote

from paperdag.engine import StagePlan
from paperdag.params import DEFAULT_PROFILE
from paperdag.ray_exec import RayExecutor
from paperdag.runs import Execution, drive
from tasks.stage import run_stage

_OPENED: dict[str, Execution] = {}  # executions handed over by run_execution, by token (flow params stay JSON)


class PrefectRayExecutor:
    """Submits each stage as a Prefect task (thread runner) that executes it on Ray."""

    def __init__(self, ray_address: str | None = None):
        self.ray = RayExecutor(ray_address)

    def submit(self, execution: Execution, plan: StagePlan) -> Future[tuple[dict, bool]]:
        settled: Future[tuple[dict, bool]] = Future()
        task = run_stage.with_options(name=plan.label, task_run_name=plan.label)
        submitted = task.submit(quote(execution.store), quote(plan), quote(execution.inputs(plan)), quote(self.ray))
        submitted.add_done_callback(lambda f: _settle(f, settled))
        return settled


def _settle(future: PrefectFuture, settled: Future) -> None:
    try:
        settled.set_result(future.result())
    except BaseException as e:  # noqa: BLE001 - the stage's own exception, re-raised by drive()
        settled.set_exception(e)


@flow(name="paperdag", task_runner=ThreadPoolTaskRunner(max_workers=32))
def run_papers(papers: list[str], profile: str = DEFAULT_PROFILE, force: bool = False, only: list[str] | None = None,
               ray_address: str | None = None, retries: int = 1, trigger: str = "schedule",
               opened: str | None = None) -> dict[str, bool]:
    """Run papers' pipelines; returns ``{"paper.stage": cache_hit}`` for every stage recorded.

    ``opened`` names an execution already planned by ``run_execution`` (the CLI's); otherwise the flow opens one.
    """
    execution = _OPENED.pop(opened) if opened else Execution.open(papers, profile=profile, trigger=trigger,
                                                                  force=force, only=only or ())
    executor = PrefectRayExecutor(ray_address) if execution.pending() else None
    drive(execution, executor, retries)
    return dict(execution.done)


def run_execution(execution: Execution, ray_address: str | None = None, retries: int = 1) -> dict[str, bool]:
    """Run an opened execution under the ``paperdag`` flow, without planning it again."""
    token = uuid.uuid4().hex
    _OPENED[token] = execution
    try:
        return run_papers([p.slug for p in execution.pipelines], profile=execution.profile,
                          ray_address=ray_address, retries=retries, trigger=execution.trigger, opened=token)
    finally:
        _OPENED.pop(token, None)
