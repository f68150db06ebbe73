"""The ``paperdag`` command line. Heavy imports (torch, Prefect, Ray, MLflow) happen only in the commands that
need them, so ``paperdag list`` and fully cached runs stay fast. Every user-facing error is one line on stderr
with a non-zero exit code (2 for bad input), never a traceback."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from paperdag.errors import EnvironmentProblem, Interrupted, PaperdagError, UsageError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Research papers as cached, versioned pipelines (Prefect + Ray, DVC, MLflow).")


def _version(value: bool) -> None:
    if value:
        from paperdag import __version__

        print(f"paperdag {__version__}")
        raise typer.Exit(0)


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")) -> None:
    """Research papers as cached, versioned pipelines (Prefect + Ray, DVC, MLflow)."""
console = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False)

for _var, _value in {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", "RAY_USAGE_STATS_ENABLED": "0",
                     "MLFLOW_ENABLE_TELEMETRY": "false", "DVC_NO_ANALYTICS": "1",
                     "PREFECT_LOGGING_LEVEL": "INFO",  # stage logs reach the Prefect UI; the console filters them
                     # stage output reaches the driver as it is: progress lines carry their [paper.stage] label, so no
                     # "(_run_remote pid=...)" prefix, no deduplication of repeated lines, no colour codes off a tty
                     "RAY_DISABLE_WORKER_LOG_PREFIX": "1", "RAY_DEDUP_LOGS": "0",
                     "RAY_COLOR_PREFIX": "1" if sys.stderr.isatty() else "0"}.items():
    os.environ.setdefault(_var, _value)


@app.command("list")
def list_papers(profile: str = typer.Option("default", help="Profile whose cache status is shown.")) -> None:
    """Papers, their stages, whether each stage's output is cached for the current params and code, and the
    expected time of each stage and paper on this machine from the store's past runs."""
    from paperdag.dag import known_slugs, registry
    from paperdag.engine import load_pipeline_params, plan_pipeline
    from paperdag.params import check_sections, read_params_file
    from paperdag.project import Project
    from paperdag.timings import Estimate, clock, estimates

    project = Project.find()
    data = read_params_file(project.params_path)
    check_sections(data, known_slugs(), project.params_path)
    store = project.store()
    cpus = os.cpu_count() or 1
    for pipeline in registry().values():
        values = load_pipeline_params(project, pipeline, profile, data)
        plans = plan_pipeline(pipeline, values, store)
        for plan in plans:
            plan.profile = profile
        seconds = estimates(store, plans)
        expected = Estimate(plans, seconds, cpus).paper_line({p.label for p in plans if p.cached})
        out.print(f"[bold]{pipeline.slug}[/bold]  {pipeline.title}  [dim]({expected})[/dim]", soft_wrap=True)
        width = max(len(s.name) for s in pipeline.stages)
        for plan in plans:
            stage = plan.stage
            ups = f" <- {', '.join(stage.upstream)}" if stage.upstream else ""
            state = "[green]cached[/green]" if plan.cached else "[yellow]stale[/yellow] "
            took = "-" if seconds[plan.label] is None else f"~{clock(seconds[plan.label])}"
            out.print(f"  {stage.name:<{width}} {stage.kind:<9} {state}  {plan.key[:12]} {took:>8}{ups}",
                      soft_wrap=True)


@app.command()
def run(
    papers: list[str] = typer.Argument(..., help="Paper slugs, or `all`."),
    profile: str = typer.Option("default", "--profile", "-p", help="Params profile (overlay in params.yaml)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", envvar="RAY_ADDRESS",
                                              help="Join this Ray cluster instead of starting a local one."),
    force: bool = typer.Option(False, "--force", help="Recompute even cached stages."),
    only: Optional[list[str]] = typer.Option(None, "--only", help="Run just this stage (repeatable), and any "
                                                                     "uncached upstream stages."),
    retries: int = typer.Option(1, "--retries", min=0, help="Retries per failed stage."),
    local: bool = typer.Option(False, "--local", help="Run in this process, one stage after another (no Prefect/Ray)."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="With --local: run stages side by side in child "
                             "processes, as many as their declared CPUs fit in N (a GPU node without Ray)."),
    replicate: bool = typer.Option(False, "--replicate", help="Re-run on fresh seeds at the default sizes (the "
                                   "paper's profiles.replicate: seed keys only); verdicts in metrics/profiles/replicate/."),
) -> None:
    """Run papers' pipelines: cached stages are reused, stale ones run on Ray under a Prefect flow."""
    from paperdag.extras import require_orchestration
    from paperdag.params import REPLICATE_PROFILE
    from paperdag.runs import Execution, LocalExecutor, drive, tracking_enabled

    t0 = time.perf_counter()
    if jobs > 1 and not local:
        raise UsageError("--jobs runs stages side by side with --local; without it Ray schedules them")
    if replicate:
        if profile != "default":
            raise UsageError(f"--replicate re-runs the default profile on fresh seeds; it takes no --profile "
                             f"(got {profile!r})")
        profile = REPLICATE_PROFILE
    if ray_address:
        from paperdag.ray_exec import resolve_address

        ray_address = resolve_address(ray_address)
    execution = Execution.open(papers, profile=profile, force=force, only=only or (), track=False)
    if tracking_enabled():
        require_orchestration(["mlflow"], "MLflow tracking", "set PAPERDAG_TRACKING=off")
        execution.start_tracking()  # validates PAPERDAG_TRACKING_TIMEOUT_S; opens nothing yet
    pending = execution.pending()
    if pending and not local:
        require_orchestration(["prefect", "ray"], "paperdag run without --local", "run with --local")
        from flows.papers import check_configured_api

        check_configured_api()  # a PREFECT_API_URL that is not a Prefect API: one line, nothing written
    execution.store.prepare()  # a read-only artifacts/ is one line before anything else is printed
    if pending and not local:
        execution.estimate.cpus = os.cpu_count() or 1  # the embedded Ray's CPUs (a joined cluster: this machine's)
    elif pending and jobs > 1:
        execution.estimate.cpus = jobs
    plan = execution.estimate.plan_line(sum(p.cached and p.run for p in execution.plans))
    console.print(f"[bold]paperdag run[/bold] {', '.join(p.slug for p in execution.pipelines)} "
                  f"[dim](profile {profile}: {plan})[/dim]")
    if not pending or local:
        from paperdag.process_exec import ProcessExecutor

        drive(execution, ProcessExecutor(jobs) if pending and jobs > 1 else LocalExecutor(), retries=retries)
    else:
        from paperdag.lifetime import start_watchdog
        from paperdag.ray_exec import connect

        start_watchdog()  # Ray's and Prefect's processes end with this one, however it ends (SIGKILL included)
        from flows.papers import launch_api_server, run_execution

        launch_api_server()  # the temporary Prefect API's process starts up while Ray does
        connect(ray_address)  # in the main thread (Ray's start-up wants it), before the flow waits for its API
        run_execution(execution, ray_address=ray_address, retries=retries)
    _summarise(execution, time.perf_counter() - t0)


def _summarise(execution, seconds: float) -> None:  # noqa: ANN001 - an Execution
    """The end of a run: each paper's verdict, where the results are, and a refreshed report."""
    from paperdag.report import write_report

    for slug, doc in execution.verdicts.items():
        path = execution.project.metrics_path(slug, execution.profile).relative_to(execution.project.root)
        console.print(f"  {slug}: {doc['headline']} ({path})", highlight=False)
    try:
        where = [f"report {write_report(execution.project)[0].relative_to(execution.project.root)}"]
    except Exception as e:  # noqa: BLE001 - the run is done; another paper's broken declaration must not fail it
        print(f"warning: report not refreshed ({type(e).__name__}: {_first_line(e)}); `paperdag report` retries",
              file=sys.stderr, flush=True)
        where = []
    if execution.tracker is not None and execution.tracker.parents_logged:
        where.append(f"MLflow: `paperdag ui` ({execution.tracker.uri})")
    console.print(f"[bold green]ok[/bold green] in {seconds:.1f}s; {'; '.join(where)}")


@app.command()
def stage(paper: str, stage_name: str = typer.Argument(..., metavar="STAGE"),
          profile: str = typer.Option("default", "--profile", "-p")) -> None:
    """Run one stage in this process (what ``dvc repro`` calls); upstream outputs must exist in the store."""
    from paperdag.runs import Execution, LocalExecutor, drive

    execution = Execution.open([paper], profile=profile, trigger="dvc", only=[stage_name])
    missing = [p.name for p in execution.plans if p.run and not p.cached and p.name != stage_name]
    if missing:
        raise PaperdagError(f"{paper}.{stage_name}: upstream stages {missing} are not built; run `dvc repro` or "
                            f"`paperdag run {paper}`")
    drive(execution, LocalExecutor(), retries=0)


@app.command()
def dvc(papers: list[str] = typer.Argument(None, help="With --commit: the papers, or `all` (the default)."),
        write: bool = typer.Option(False, "--write", help="Regenerate dvc.yaml from the declarations."),
        check: bool = typer.Option(False, "--check", help="Fail if dvc.yaml differs from the declarations."),
        commit: bool = typer.Option(False, "--commit", help="Record the papers' stages in dvc.lock as they are now "
                                    "(`dvc commit -f` of each, in one write of dvc.lock).")) -> None:
    """Keep dvc.yaml in sync with the pipeline declarations; record results in dvc.lock."""
    from paperdag.dvcgen import render_dvc_yaml
    from paperdag.project import Project

    if write + check + commit != 1:
        raise typer.BadParameter("give exactly one of --write, --check or --commit")
    if papers and not commit:
        raise typer.BadParameter("papers are named only with --commit")
    project = Project.find()
    if commit:
        from paperdag.dvclock import commit_stages, stage_names
        from paperdag.extras import require_orchestration

        require_orchestration(["dvc"], "paperdag dvc --commit", "run `dvc commit -f` where DVC is installed")
        names = stage_names(project.root, papers or [])
        commit_stages(project.root, names)
        console.print(f"dvc.lock records {len(names)} stages of {', '.join(papers or ['all'])}")
        return
    text = render_dvc_yaml(project.root)
    path = project.root / "dvc.yaml"
    if write:
        from paperdag.io import write_text_atomic

        write_text_atomic(path, text)
        console.print(f"wrote {path}")
    elif not path.is_file() or path.read_text() != text:
        raise PaperdagError("dvc.yaml is out of date with the pipeline declarations: run `paperdag dvc --write`")
    else:
        console.print("dvc.yaml matches the pipeline declarations")


@app.command()
def report() -> None:
    """Render every paper's claims and plots into reports/index.html and reports/summary.md."""
    from paperdag.project import Project
    from paperdag.report import write_report

    project = Project.find()
    folder = project.root / "reports"
    if folder.exists() and not folder.is_dir():
        raise EnvironmentProblem(f"{folder} is not a folder: the report is written into reports/")
    for path in write_report(project):
        console.print(f"wrote {path}")


OUTCOME_STYLE = {"VERIFIED": "green", "REFUTED": "red", "REFUSED": "red", "UNDECIDED": "yellow"}


@app.command()
def verify(paper: str, path: Optional[Path] = typer.Argument(None, help="Certificate folder (default: the paper's "
                                                                          "materialised verify output)."),
           budget: Optional[int] = typer.Option(None, "--budget", min=1,
                                                help="At most this many units of work, in the paper's own unit "
                                                     "(proofs, certificate rows, subsystems): UNDECIDED when spent.")
           ) -> None:
    """Re-check a paper's certificate from its folder alone: VERIFIED (exit 0), REFUTED, REFUSED or UNDECIDED
    (exit 1)."""
    from rich.markup import escape

    from paperdag.dag import get_pipeline
    from paperdag.project import Project
    from paperdag.verification import reverify

    if get_pipeline(paper).reverify is None:
        raise PaperdagError(f"paper {paper!r} has no certificate to re-verify")
    folder = path or Project.find().view(paper, "verify")
    if not folder.is_dir():
        raise PaperdagError(f"no certificate folder at {folder}")
    result = reverify(paper, folder, budget)
    style = OUTCOME_STYLE[result.outcome]
    out.print(f"[{style}]{result.outcome}[/{style}] " + escape(" ".join(result.message.split())), soft_wrap=True)
    raise typer.Exit(result.exit_code)


PAPERS_ARG = typer.Argument(None, help="Paper slugs, or `all` (the default).")
PROFILE_OPT = typer.Option("default", "--profile", "-p", help="Params profile (overlay in params.yaml).")
ONLY_OPT = typer.Option(None, "--only", help="Just this stage (repeatable; one paper).")


@app.command()
def pull(papers: Optional[list[str]] = PAPERS_ARG, profile: str = PROFILE_OPT,
         only: Optional[list[str]] = ONLY_OPT) -> None:
    """Materialise the shared root's outputs (PAPERDAG_ARTIFACT_ROOT) for the current keys into artifacts/, so
    `paperdag run` computes nothing and `dvc status` is clean; what the root lacks is listed."""
    from paperdag.project import Project
    from paperdag.share import pull as pull_outputs
    from paperdag.share import report_transfers

    t0 = time.perf_counter()
    done = pull_outputs(Project.find(), papers or [], profile, only or [])
    report_transfers(done, "pulled", console.print)
    console.print(f"pulled {sum(len(t.moved) for t in done)} stages, {sum(t.bytes for t in done) / 1e6:.1f} MB in "
                  f"{time.perf_counter() - t0:.1f}s")


@app.command()
def push(papers: Optional[list[str]] = PAPERS_ARG, profile: str = PROFILE_OPT,
         only: Optional[list[str]] = ONLY_OPT) -> None:
    """Upload the local store's entries (artifacts/.store) for the current keys that the shared root
    (PAPERDAG_ARTIFACT_ROOT) lacks; stages not computed locally are listed."""
    from paperdag.project import Project
    from paperdag.share import push as push_outputs
    from paperdag.share import report_transfers

    t0 = time.perf_counter()
    done = push_outputs(Project.find(), papers or [], profile, only or [])
    report_transfers(done, "pushed", console.print)
    console.print(f"pushed {sum(len(t.moved) for t in done)} stages, {sum(t.bytes for t in done) / 1e6:.1f} MB in "
                  f"{time.perf_counter() - t0:.1f}s")


@app.command()
def compare(papers: Optional[list[str]] = PAPERS_ARG, profile: str = PROFILE_OPT,
            only: Optional[list[str]] = ONLY_OPT) -> None:
    """Compare the local store (a recompute here) with the shared root's entries of the same keys: per stage
    byte-identical or not and the metric that moves most, per paper whether the verdicts are identical (exit 1
    when a verdict differs)."""
    from paperdag.project import Project
    from paperdag.share import compare as compare_stores
    from paperdag.share import comparison_table

    rows = compare_stores(Project.find(), papers or [], profile, only or [])
    for line in comparison_table(rows):
        out.print(line, soft_wrap=True, highlight=False)
    raise typer.Exit(1 if any(r.verdicts_identical is False for r in rows) else 0)


@app.command()
def new(slug: str = typer.Argument(..., help="The new paper's slug: a lowercase Python identifier."),
        title: str = typer.Option("", help="One-line title (default: the slug).")) -> None:
    """Write a new paper package from the template: it runs and passes the paper contract as generated."""
    from paperdag.project import Project
    from paperdag.scaffold import new_paper

    for path in new_paper(Project.find(), slug, title or slug):
        console.print(f"wrote {path}")
    console.print(f"next: `paperdag run {slug} --profile smoke`, then `paperdag dvc --write`; see README "
                  f"\"Adding a paper\"")


@app.command()
def ui(port: int = typer.Option(5000, min=1, max=65535, help="Port to serve on."),
       host: str = typer.Option("127.0.0.1", help="Interface to bind: this machine only unless told otherwise "
                                                  "(0.0.0.0 exposes the tracking store to the network).")) -> None:
    """Start the MLflow UI on the project's tracking store."""
    from paperdag.project import Project
    from paperdag.tracking import tracking_uri

    project = Project.find()
    uri = tracking_uri(project.root)
    import socket

    try:
        socket.create_server((host, port)).close()  # refuse a port in use here, not after mlflow has started
    except OSError as e:
        raise EnvironmentProblem(f"cannot serve on {host}:{port}: {e.strerror or e} (choose another --port)") from None
    console.print(f"MLflow UI on http://{host}:{port} (store {uri})")
    os.execvp(sys.executable, [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri,
                               "--host", host, "--port", str(port)])


@app.command()
def serve(config: Path = typer.Option(Path("schedules.yaml"), help="Deployments and their cron schedules.")) -> None:
    """Register deployments with cron schedules from the config file and serve them (needs a Prefect API)."""
    from flows.deployments import serve_deployments
    from paperdag.lifetime import start_watchdog

    start_watchdog()  # the flow runs it starts end with it
    serve_deployments(config)


@app.command()
def wheelhouse(folder: Path = typer.Argument(..., help="Folder to fill with wheels (created if missing)."),
               papers: Optional[list[str]] = typer.Argument(None, help="Papers whose extras it holds too (`all`: "
                                                                         "every paper's)."),
               python: str = typer.Option(f"{sys.version_info[0]}.{sys.version_info[1]}", "--python",
                                          help="The node's CPython version, MAJOR.MINOR."),
               platform: str = typer.Option("manylinux_2_28_x86_64", "--platform",
                                            help="The node's wheel platform tag."),
               exclude: Optional[list[str]] = typer.Option(None, "--exclude", help="Packages the node already has "
                                                           "(repeatable or comma-separated): not downloaded."),
               dry_run: bool = typer.Option(False, "--dry-run", help="List the requirements it would hold; "
                                                                     "resolve and download nothing.")) -> None:
    """Download the wheels of the core and the papers' extras for a node without a package index, never torch,
    and build paperdag's own: copied there, `pip install --no-index --find-links FOLDER 'paperdag[<paper>]'`."""
    from paperdag import wheelhouse as wh

    names = [n.strip() for item in exclude or [] for n in item.split(",") if n.strip()]
    selection = wh.requirements(papers or [], python, platform, names)
    target = f"CPython {python} on {platform}"
    if dry_run:
        out.print(f"wheelhouse {folder} for {target} (dry run: nothing resolved or downloaded)", soft_wrap=True)
        lines = wh.plan_lines(selection)
    else:
        console.print(f"[bold]paperdag wheelhouse[/bold] {folder} [dim]({target}: resolving, then downloading)[/dim]")
        lines = wh.summary_lines(wh.build(folder, selection), selection)
        extras = ",".join(group for group in selection.groups if group != "core")
        lines.append(f"on the node: pip install --no-index --find-links {folder} "
                     f"'paperdag{f'[{extras}]' if extras else ''}'")
    for line in lines:
        out.print(line, soft_wrap=True, highlight=False, markup=False)


def _click_errors() -> tuple[type[BaseException], ...]:
    """Click's usage-error base class, as bundled by Typer (``typer._click``) and as the standalone package."""
    found = {c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"}
    try:
        import click

        found.add(click.exceptions.ClickException)
    except ImportError:
        pass
    return tuple(found)


def _dispatch() -> tuple[int, str | None]:
    """Run the app; returns its exit code and the one-line error to print (if any)."""
    try:
        code = app(standalone_mode=False)
    except Interrupted as e:
        return e.exit_code, None
    except PaperdagError as e:
        return e.exit_code, f"error: {_capped(str(e))}"
    except typer.Exit as e:
        return e.exit_code, None
    except typer.Abort:
        return 130, None
    except _click_errors() as e:
        return e.exit_code, (f"error: {e.format_message()}" if e.format_message() else None)  # no_args_is_help
    except OSError as e:  # the environment: a read-only or full disk, a missing file
        where = f": {e.filename}" if e.filename else ""
        return 1, f"error: {e.strerror or e}{where}"
    except Exception as e:  # noqa: BLE001 - a bug or an unforeseen environment: one line, the traceback in a file
        if os.environ.get("PAPERDAG_DEBUG"):
            raise
        return 1, f"error: {type(e).__name__}: {_first_line(e)} (unexpected; traceback in {_save_traceback(e)})"
    return (code if isinstance(code, int) else 0), None


MAX_ERROR_CHARS = 300


def _capped(text: str) -> str:
    """An error message as one line of at most ``MAX_ERROR_CHARS`` (the location comes first in every message)."""
    line = " ".join(text.split())
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 3] + "..."


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [""])[0][:300]


def _save_traceback(e: BaseException) -> str:
    """Write an unexpected error's traceback to a file in the temp folder; returns its path."""
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="paperdag-error-", suffix=".log")
    with os.fdopen(fd, "w") as f:
        f.write(f"paperdag {' '.join(sys.argv[1:])}\n\n{''.join(traceback.format_exception(e))}")
    return path


def main() -> None:
    """Entry point: runs the app and turns known errors into one-line messages with their exit codes.

    Usage errors exit 2, a failed stage or refuted certificate 1. SIGINT and SIGTERM end the run within a few seconds
    with one ``interrupted: ...`` line and exit 130 / 143, however the run unwinds (see ``paperdag.lifetime``);
    in-flight Ray tasks are cancelled, finished stages stay cached, and helper processes never outlive this one."""
    from paperdag import lifetime

    try:
        lifetime.install_signal_handlers()
    except PaperdagError as e:  # a bad PAPERDAG_INTERRUPT_GRACE_S
        print(f"error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    try:
        code, line = _dispatch()
    except BaseException:  # noqa: BLE001 - a signal's unwinding (Prefect's TerminationSignal, Ray's SystemExit(15))
        if lifetime.received(wait_s=0.5) is None:
            raise
        code, line = 1, None
    signum = lifetime.received() or (signal.SIGINT if code == 130 else None)  # typer turns KeyboardInterrupt to 130
    if signum is not None:
        lifetime.exit_interrupted(signum)
    if line:
        print(line, file=sys.stderr)
    sys.exit(code)
