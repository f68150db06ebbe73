"""The Prefect flow that runs papers' DAGs: one Prefect task per stale stage, scheduled by ``paperdag.runs.drive``.

Independent stages (and different papers) run at the same time: Prefect's thread pool waits on Ray, which runs
each stage with its declared resources; on the embedded Ray a ready stage is submitted once its resources are free,
in the pipelines' declaration order (``RayExecutor.fits``). Cached stages are recorded without a task. A failed
stage is retried by the loop (each attempt is a task run), then reported; its upstream outputs stay cached and its
descendants do not run. The CLI plans once and hands its opened ``Execution`` to the flow (``run_execution``); a
scheduled deployment opens its own.

Interrupted (SIGINT/SIGTERM, see ``paperdag.lifetime``), the loop cancels the Ray tasks in flight and the flow
ends within seconds. Without a configured Prefect API, the CLI's run uses a temporary API server that paperdag
starts: on 127.0.0.1, in a session of its own (a Ctrl-C in the terminal reaches paperdag, which then stops the
server, instead of killing the server under a running flow) and killed by the kernel if paperdag dies. During a
CLI run Prefect's own console lines about flow and task runs are left out (paperdag prints one line per stage and
one summary; the full traceback of a failed stage is in its log file); they still reach the Prefect API and UI.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import Future

from prefect import flow, tags
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

    def cancel(self) -> int:
        """Stop the stages in flight (the loop calls this when interrupted); their Prefect tasks then end."""
        return self.ray.cancel()

    def fits(self, plan: StagePlan, running: list[StagePlan]) -> bool:
        """Whether ``plan`` can start now beside ``running`` (RayExecutor.fits)."""
        return self.ray.fits(plan, running)

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


def _flow_run_name() -> str:
    """``<papers> · <profile> · <trigger>``, from the flow run's parameters (CLI runs and deployments alike)."""
    from prefect.runtime import flow_run

    p = flow_run.parameters
    return f"{'+'.join(p.get('papers') or [])} · {p.get('profile', DEFAULT_PROFILE)} · {p.get('trigger', 'schedule')}"


VERDICT_MARK = {"holds": "holds", "fails": "**fails**", "inconclusive": "_inconclusive_"}


def _cell(text: object, limit: int = 240) -> str:
    s = " ".join(str(text).split()).replace("|", "\\|")
    return s if len(s) <= limit else s[: limit - 3] + "..."


def claims_markdown(doc: dict) -> str:
    """A paper's published verdicts (its metrics file) as Markdown with where to look next (a Prefect artifact):
    the headline, the failed preconditions, then one row per claim, preconditions first."""
    order = {"precondition": 0, "evidence": 1, "check": 2}
    claims = sorted(doc["claims"], key=lambda c: order.get(c.get("kind"), 3))
    failed = [c["id"] for c in claims if c.get("kind") == "precondition" and c.get("verdict") != "holds"]
    rows = [f"| {c.get('kind')} | {VERDICT_MARK.get(c.get('verdict'), c.get('verdict'))} | `{c['id']}` | "
            f"{_cell(c.get('statement'), 110)} | {_cell(c.get('reason') if c.get('verdict') != 'holds' else '', 160)} |"
            for c in claims]
    regime = "regime reached" if not failed else f"regime not reached: {', '.join(failed)} failed"
    return "\n".join([f"### {doc['title']}", "", f"**{doc['headline']}** (profile {doc['profile']}; {regime}).", "",
                      "| kind | verdict | claim | statement | why not |", "|---|---|---|---|---|", *rows, "",
                      f"Full table: `metrics/{doc['paper']}.json` (default profile), `reports/index.html`; runs: "
                      "`paperdag ui`."])


def _publish_claims(execution: Execution) -> None:
    """A Markdown artifact per paper with its verdicts (the flow run's Artifacts tab), and a log line each."""
    from prefect import get_run_logger
    from prefect.artifacts import create_markdown_artifact

    log = get_run_logger()
    for slug, doc in execution.verdicts.items():
        log.info("%s: %s", slug, doc["headline"])
        create_markdown_artifact(markdown=claims_markdown(doc), key=f"claims-{slug.replace('_', '-')}",
                                 description=f"{slug}: {doc['headline']} (profile {execution.profile})")


@flow(name="paperdag", task_runner=ThreadPoolTaskRunner(max_workers=32), flow_run_name=_flow_run_name)
def run_papers(papers: list[str], profile: str = DEFAULT_PROFILE, force: bool = False, only: list[str] | None = None,
               ray_address: str | None = None, retries: int = 1, trigger: str = "schedule",
               opened: str | None = None) -> dict[str, bool]:
    """Run papers' pipelines; returns ``{"paper.stage": cache_hit}`` for every stage recorded.

    ``opened`` names an execution already planned by ``run_execution`` (the CLI's); otherwise the flow opens one.
    """
    execution = _OPENED.pop(opened) if opened else Execution.open(papers, profile=profile, trigger=trigger,
                                                                  force=force, only=only or ())
    _announce()
    executor = PrefectRayExecutor(ray_address) if execution.pending() else None
    try:
        drive(execution, executor, retries)
    finally:
        _publish_claims(execution)
    return dict(execution.done)


def _announce() -> None:
    """With a Prefect server configured (not the temporary one), say where this flow run is in its UI."""
    from prefect.runtime import flow_run
    from prefect.settings import PREFECT_UI_URL

    if PREFECT_UI_URL.value() and os.environ.get("PREFECT_API_URL"):
        print(f"Prefect flow run: {flow_run.ui_url}", file=sys.stderr, flush=True)


def run_execution(execution: Execution, ray_address: str | None = None, retries: int = 1) -> dict[str, bool]:
    """Run an opened execution under the ``paperdag`` flow, without planning it again."""
    token = uuid.uuid4().hex
    _OPENED[token] = execution
    try:
        with _quiet_run_logs():
            start_api_server()
            try:
                slugs = [p.slug for p in execution.pipelines]
                with tags(*(f"paper:{s}" for s in slugs), f"profile:{execution.profile}", f"trigger:{execution.trigger}"):
                    return run_papers(slugs, profile=execution.profile, ray_address=ray_address, retries=retries,
                                      trigger=execution.trigger, opened=token)
            finally:
                _drain()
    finally:
        _OPENED.pop(token, None)


def _drain(timeout_s: float = 3.0) -> None:
    """Send Prefect's queued logs and events now, while the API server is up (it stops at exit, possibly before
    Prefect's own exit-time drain, which then prints connection errors)."""
    try:
        from prefect.events.worker import EventsWorker
        from prefect.logging.handlers import APILogWorker

        APILogWorker.drain_all(timeout=timeout_s)
        EventsWorker.drain_all(timeout=timeout_s)
    except Exception:  # noqa: BLE001 - best effort: the run's outcome is already decided
        pass


class _RunLogFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(("prefect.flow_runs", "prefect.task_runs"))


class _ServerNoticeFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "prefect" and record.levelno < logging.WARNING)


@contextlib.contextmanager
def _quiet_run_logs() -> Iterator[None]:
    """Leave Prefect's flow- and task-run records out of the console (its API handler still sends them)."""
    from prefect.logging.handlers import PrefectConsoleHandler

    quiet = _RunLogFilter()
    handlers = [h for name in ("", "prefect") for h in logging.getLogger(name).handlers
                if isinstance(h, PrefectConsoleHandler)]
    for handler in handlers:
        handler.addFilter(quiet)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(quiet)


def _die_with_parent() -> None:  # runs in the forked child, before exec
    if _PRCTL is not None:
        _PRCTL(1, 9)  # PR_SET_PDEATHSIG, SIGKILL


try:
    import ctypes

    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _PRCTL = None


API_STARTUP_TIMEOUT_S = 120


API_CHECK_TIMEOUT_S = 5.0


def check_api(url: str, timeout: float = API_CHECK_TIMEOUT_S) -> None:
    """One line (exit 2) unless a Prefect API answers ``GET <url>/health`` with ``true`` within ``timeout``
    seconds: a closed port or a server that is not Prefect's is named before any flow starts."""
    import urllib.error
    import urllib.request

    from paperdag.errors import EnvironmentProblem

    where = f"PREFECT_API_URL={url}"
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/health", timeout=timeout) as answer:
            body = answer.read(200)
    except urllib.error.HTTPError as e:
        raise EnvironmentProblem(f"{where} is not a Prefect API: GET /health answered HTTP {e.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise EnvironmentProblem(f"{where} is unreachable ({getattr(reason, 'strerror', None) or reason}); start "
                                 "the server or unset PREFECT_API_URL for a temporary one") from None
    if body.strip() != b"true":
        raise EnvironmentProblem(f"{where} is not a Prefect API: GET /health answered {body[:60]!r}")


def check_configured_api() -> None:
    """``check_api`` on the configured Prefect API, if there is one (else a temporary API will be started)."""
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():
        check_api(PREFECT_API_URL.value())


def launch_api_server() -> None:
    """Start the temporary Prefect API's process now, without waiting for it, unless an API is configured; the
    later ``start_api_server`` adopts it and waits until it answers, so its start-up overlaps whatever this process
    does in between (the CLI starts the embedded Ray there)."""
    from prefect.settings import PREFECT_API_URL

    if not PREFECT_API_URL.value():
        _loopback_server().launch()


def start_api_server() -> str | None:
    """Start the temporary Prefect API this process's flows will use (or adopt the one ``launch_api_server``
    started) and wait until it answers, unless an API is configured (then checked with ``check_api``); returns its
    URL."""
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():
        check_api(PREFECT_API_URL.value())
        return None
    from prefect.logging.handlers import PrefectConsoleHandler

    for handler in (h for name in ("", "prefect") for h in logging.getLogger(name).handlers):
        if isinstance(handler, PrefectConsoleHandler):  # its start/stop notices (the stop comes at exit)
            handler.addFilter(_ServerNoticeFilter())
    server = _loopback_server()
    # Prefect's 20 s default start-up wait (counted in sleeps) is too short on a loaded laptop; its own setting wins
    server.start(None if "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS" in os.environ else API_STARTUP_TIMEOUT_S)
    return server.api_url


@functools.cache
def _loopback_server():  # noqa: ANN202 - a SubprocessASGIServer, imported late (the server modules are heavy)
    """Prefect's own temporary server (one per process: Prefect's clients find it by its class registry), started
    the way paperdag needs it (see the module docstring); ``launch`` starts its process ahead of ``start``."""
    from prefect.server.api.server import SubprocessASGIServer

    for var in ("no_proxy", "NO_PROXY"):  # an HTTP proxy in the environment must not carry loopback calls
        hosts = [h for h in os.environ.get(var, "").split(",") if h]
        os.environ[var] = ",".join(hosts + [h for h in ("127.0.0.1", "localhost") if h not in hosts])

    class LoopbackServer(SubprocessASGIServer):
        launched: subprocess.Popen | None = None

        def launch(self) -> None:
            """Start the process now; ``start`` adopts it (its first ``_run_uvicorn_command``) and waits."""
            if not self.running and self.launched is None:
                self.port = self.port or self.find_available_port()
                self.launched = self._spawn()

        def _run_uvicorn_command(self) -> subprocess.Popen:
            launched, self.launched = self.launched, None
            return launched or self._spawn()

        def _spawn(self) -> subprocess.Popen:
            import prefect
            from prefect.settings import get_current_settings

            return subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent), "--factory",
                 "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(self.port),
                 "--log-level", "error", "--lifespan", "on"],
                env={**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
                     "PREFECT__SERVER_FINAL": "1",
                     **get_current_settings().to_environment_variables(exclude_unset=True)},
                start_new_session=True, preexec_fn=_die_with_parent,
            )

    return LoopbackServer()
