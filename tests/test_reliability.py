"""Reliability (issue 12): signals end a run in seconds with one line and exit 130/143, nothing outlives a run
however it ends, stale scratch is swept, a bad Ray address or artifact root is one line, the embedded Ray and
Prefect's temporary server listen on loopback only. Tests that start Ray and Prefect are marked slow."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from conftest import PAPERDAG, executions, paperdag

from paperdag.testing import NotARayHead

INTERRUPTED = "interrupted: "


# -- helpers -------------------------------------------------------------------------------------------------------
def _interruptible() -> None:
    """In the child before exec: SIGINT back to its default, as a terminal gives it. A test run started in the
    background inherits SIGINT ignored, and a Python process honours an inherited ignore (so would paperdag)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Run:
    """``paperdag ...`` started in its own session (so a group signal is a terminal's Ctrl-C), always reaped."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None):
        self.stderr_path = cwd.parent / f"stderr-{time.time_ns()}.txt"
        self._err = open(self.stderr_path, "w")
        self.proc = subprocess.Popen([*PAPERDAG, *args], cwd=cwd, env={**os.environ, **(env or {})},
                                     stdout=subprocess.DEVNULL, stderr=self._err, start_new_session=True,
                                     preexec_fn=_interruptible)
        self.seen: dict[int, float] = {}  # every descendant seen: pid -> create time

    def descendants(self) -> list[psutil.Process]:
        try:
            kids = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        for kid in kids:
            try:
                self.seen.setdefault(kid.pid, kid.create_time())
            except psutil.Error:
                pass
        return kids

    def signal(self, signum: int, group: bool = False) -> float:
        self.descendants()
        (os.killpg if group else os.kill)(self.proc.pid, signum)
        return time.monotonic()

    def wait(self, timeout: float = 60) -> tuple[int, str]:
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            self._err.close()
        return code, self.stderr_path.read_text()

    def survivors(self, within: float = 15.0) -> list[str]:
        """Descendants ever seen that are still running after ``within`` seconds (none is the goal)."""
        end = time.monotonic() + within
        while True:
            alive = []
            for pid, created in self.seen.items():
                try:
                    p = psutil.Process(pid)
                    if p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE:
                        alive.append(f"{pid} {p.name()}")
                except psutil.Error:
                    pass
            if not alive or time.monotonic() > end:
                return alive
            time.sleep(0.3)

    def cleanup(self) -> None:
        """Kill whatever is left (the test failed): the process and every descendant it was seen with."""
        if self.proc.poll() is None:
            self.descendants()
            self.proc.kill()
            self.proc.wait()
        for pid, created in self.seen.items():
            try:
                p = psutil.Process(pid)
                if p.create_time() == created:
                    p.kill()
            except psutil.Error:
                pass
        if not self._err.closed:
            self._err.close()


@pytest.fixture
def runs():
    started: list[Run] = []

    def start(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Run:
        started.append(Run(*args, cwd=cwd, env=env))
        return started[-1]

    yield start
    for run in started:
        run.cleanup()


def _wait_for(predicate, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _started(log: Path, stage: str) -> bool:
    return any(log.glob(f"{stage}.*"))


def _interrupted_once(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert [l for l in stderr.splitlines() if l.startswith(INTERRUPTED)] == [stderr.strip().splitlines()[-1]], stderr
    assert stderr.count(INTERRUPTED) == 1, stderr


def _set_sleep(project, seconds: float) -> None:
    params = project.params_path
    params.write_text(params.read_text().replace("sleep: 0.0", f"sleep: {seconds}"))


def _entries(root: Path, stage: str) -> list[str]:
    folder = root / "artifacts/.store/toy" / stage
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def _one_line_error(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    errors = [l for l in stderr.strip().splitlines() if l.startswith("error: ")]
    assert len(errors) == 1 and stderr.strip().splitlines()[-1] == errors[0], stderr
    return errors[0]


# -- signals on the local path -------------------------------------------------------------------------------------
@pytest.mark.parametrize("signum, group, code", [(signal.SIGINT, False, 130), (signal.SIGTERM, False, 143),
                                                 (signal.SIGINT, True, 130)], ids=["sigint", "sigterm", "ctrl-c"])
def test_signal_ends_a_local_run_with_one_line(toy_project, tmp_path, runs, signum, group, code):
    _set_sleep(toy_project, 1.5)
    run = runs("run", "toy", "--local", cwd=toy_project.root)
    _wait_for(lambda: _started(tmp_path / "log", "train_a"), 60, "train_a to start")
    sent = run.signal(signum, group=group)
    rc, stderr = run.wait(30)
    assert rc == code and time.monotonic() - sent < 5, stderr
    _interrupted_once(stderr)
    prepare = _entries(toy_project.root, "prepare")
    assert len(prepare) == 1 and not prepare[0].startswith("."), "the finished stage stays cached"
    assert _entries(toy_project.root, "train_a") == [], "the interrupted stage left nothing (no scratch either)"


# -- helpers outlive nothing ---------------------------------------------------------------------------------------
DRIVER = """
import os, subprocess, sys, time
from paperdag.lifetime import start_watchdog
start_watchdog()
time.sleep(0.5)
subprocess.Popen(["sleep", "300"])                                   # a helper: carries the tag
subprocess.Popen(["sh", "-c", "env -i sleep 301 & wait"])            # a helper whose child drops the environment
subprocess.Popen(["sleep", "302"], start_new_session=True)           # a helper in a session of its own
print("ready", flush=True)
time.sleep(300)
"""


def test_watchdog_stops_every_helper_after_sigkill(tmp_path):
    """What Prefect's server and Ray's processes rely on: once the driver is SIGKILLed, the watchdog stops what it
    started, found by the inherited tag or remembered as a descendant (Ray's agents start without the tag)."""
    proc = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    run = Run.__new__(Run)
    run.proc, run.seen, run._err = proc, {}, open(tmp_path / "unused", "w")
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.5)  # the watchdog remembers descendants once a second
        kids = run.descendants()
        assert len([k for k in kids if k.name() == "sleep"]) == 3, kids
        proc.kill()
        proc.wait()
        assert run.survivors(within=10) == []
    finally:
        run.cleanup()


# -- stale scratch -------------------------------------------------------------------------------------------------
def test_stale_scratch_is_swept_and_live_scratch_kept(toy_project):
    from filelock import FileLock

    from paperdag.runs import Execution, drive

    store = toy_project.store()
    stage_dir = Path(store.base) / "toy" / "prepare"
    stale = [stage_dir / ".tmp-0123456789abcdef-dead", stage_dir / ".trash-0123456789abcdef-dead",
             toy_project.artifacts / "toy" / ".train_a.tmp-fedcba9876543210-dead",
             toy_project.artifacts / "toy" / ".train_a.old-fedcba9876543210-dead"]
    live = stage_dir / ".tmp-aaaaaaaaaaaaaaaa-live"
    other = stage_dir / "not-scratch"
    for folder in [*stale, live, other]:
        folder.mkdir(parents=True)
        (folder / "weights.bin").write_bytes(b"partial")
    held = FileLock(str(toy_project.artifacts / ".locks" / f"toy.prepare.{'a' * 24}.lock"))
    (toy_project.artifacts / ".locks").mkdir(exist_ok=True)
    with held:  # a writer that is still at work
        drive(Execution.open(["toy"], profile="smoke", track=False))
        assert [p for p in stale if p.exists()] == []
        assert live.is_dir() and other.is_dir()
    assert store.sweep() == 1 and not live.exists(), "once its writer is gone, its scratch goes too"


# -- bad environments ----------------------------------------------------------------------------------------------
def test_unknown_artifact_root_scheme(toy_project):
    result = paperdag("run", "toy", cwd=toy_project.root, env={"PAPERDAG_ARTIFACT_ROOT": "foo://bucket/prefix"})
    assert result.returncode == 2
    assert "unknown scheme 'foo'" in _one_line_error(result.stderr)
    assert not (toy_project.root / "artifacts").exists()


def _read_only(folder: Path, *command: str) -> subprocess.CompletedProcess:
    """Run ``command`` with ``folder`` read-only: chmod for a normal user, a read-only bind mount in a private
    mount namespace for root (which chmod does not stop)."""
    if os.geteuid() != 0:
        for p in [folder, *folder.rglob("*")]:
            p.chmod(p.stat().st_mode & ~0o222)
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=120)
        finally:
            for p in [folder, *folder.rglob("*")]:
                p.chmod(p.stat().st_mode | 0o200)
    if not shutil.which("unshare"):
        pytest.skip("root without unshare: cannot make a folder read-only")
    script = (f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" || exit 99; '
              + " ".join(f"'{c}'" for c in command))
    result = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    if result.returncode == 99:
        pytest.skip("no private mount namespace here")
    return result


@pytest.mark.parametrize("cached", [False, True])
def test_read_only_artifacts_is_one_line(toy_project, cached):
    if cached:
        assert paperdag("run", "toy", "--local", cwd=toy_project.root).returncode == 0
    else:
        toy_project.artifacts.mkdir()
    before = sorted(p.relative_to(toy_project.root) for p in toy_project.artifacts.rglob("*"))
    result = _read_only(toy_project.artifacts, *PAPERDAG, "run", "toy", "--local")
    assert result.returncode == 2, result.stderr
    assert "is not writable" in _one_line_error(result.stderr)
    assert sorted(p.relative_to(toy_project.root) for p in toy_project.artifacts.rglob("*")) == before


@pytest.mark.parametrize("kind, words", [("silent", "did not answer like a Ray head"),
                                         ("ssh", "not a Ray head: it answered 'SSH-2.0-OpenSSH_9.6'"),
                                         ("http", "not a Ray head: it answered 'HTTP/1.1 400 Bad Request'"),
                                         ("closed", "unreachable")])
def test_ray_address_that_is_not_a_ray_head(toy_project, kind, words):
    server = NotARayHead(kind)
    port = server.port
    if kind == "closed":  # a port bound but not listening: refused, and no other process can take it meanwhile
        server.close()
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        port = server.getsockname()[1]
    try:
        t0 = time.monotonic()
        result = paperdag("run", "toy", cwd=toy_project.root, env={"RAY_ADDRESS": f"127.0.0.1:{port}"}, timeout=60)
        assert time.monotonic() - t0 < 20
    finally:
        server.close()
    assert result.returncode == 2
    assert words in _one_line_error(result.stderr)
    assert not (toy_project.root / "artifacts").exists()


@pytest.mark.slow
def test_ray_connect_time_is_bounded(toy_project):
    """A gRPC-looking server that never becomes a Ray head: ``ray.init`` would wait for minutes (and ignore
    SIGTERM meanwhile); the CLI gives up after PAPERDAG_RAY_CONNECT_TIMEOUT_S with one line."""
    server = NotARayHead("h2")
    try:
        t0 = time.monotonic()
        result = paperdag("run", "toy", "--ray-address", f"127.0.0.1:{server.port}", cwd=toy_project.root,
                          env={"PAPERDAG_RAY_CONNECT_TIMEOUT_S": "4"}, timeout=120)
        took = time.monotonic() - t0
    finally:
        server.close()
    assert result.returncode == 2 and took < 60, result.stderr
    assert "did not accept this driver within 4s" in _one_line_error(result.stderr)


# -- failing stages ------------------------------------------------------------------------------------------------
def test_failed_stage_is_a_short_summary_with_its_traceback_in_a_log(toy_project):
    result = paperdag("run", "toy", "--local", "--retries", "0", cwd=toy_project.root, env={"TOY_FAIL": "train_b"})
    assert result.returncode == 1
    line = _one_line_error(result.stderr)
    assert line.startswith("error: stage toy.train_b failed: ValueError: train_b was told to fail (traceback: ")
    log = toy_project.root / line.split("(traceback: ")[1].split(")")[0]
    assert log == toy_project.artifacts / ".logs/toy/train_b.log"
    assert "Traceback" in log.read_text() and 'raise ValueError(f"{name} was told to fail")' in log.read_text()


# -- params that would silently run something else -----------------------------------------------------------------
def test_a_model_default_is_never_used_silently(tmp_path):
    from pydantic import Field

    from paperdag.errors import ParamsError
    from paperdag.params import ParamsModel, load_params

    class Inner(ParamsModel):
        width: int = Field(8, ge=1)

    class Params(ParamsModel):
        seed: int
        inner: Inner

    data = {"p": {"seed": 0, "inner": {}}}
    with pytest.raises(ParamsError, match=r"p\.inner\.width: not set"):
        load_params(data, "p", Params, "default", tmp_path / "params.yaml")
    data["p"]["inner"]["width"] = 4
    assert load_params(data, "p", Params, "default", tmp_path / "params.yaml").inner.width == 4


# -- the paperdag ui -----------------------------------------------------------------------------------------------
def test_ui_binds_loopback_unless_told(toy_project, monkeypatch):
    from typer.testing import CliRunner

    from paperdag import cli

    calls = []
    monkeypatch.setattr(cli.os, "execvp", lambda exe, argv: calls.append(argv))
    assert CliRunner().invoke(cli.app, ["ui"]).exit_code == 0
    assert CliRunner().invoke(cli.app, ["ui", "--host", "0.0.0.0", "--port", "5001"]).exit_code == 0
    hosts = [argv[argv.index("--host") + 1] for argv in calls]
    assert hosts == ["127.0.0.1", "0.0.0.0"]


# -- Prefect + Ray -------------------------------------------------------------------------------------------------
def _listeners(procs: list[psutil.Process]) -> list[tuple[str, str, int]]:
    found = []
    for p in procs:
        try:
            for c in p.net_connections(kind="inet"):
                if c.status == psutil.CONN_LISTEN:
                    found.append((p.name(), c.laddr.ip, c.laddr.port))
        except psutil.Error:
            pass
    return found


def _loopback(ip: str) -> bool:
    return ip.startswith("127.") or ip in ("::1", "::ffff:127.0.0.1") or ip.startswith("::ffff:127.")


@pytest.mark.slow
def test_sigkill_leaves_nothing_running_and_nothing_listens_beyond_loopback(toy_project, tmp_path, runs):
    """A local Prefect + Ray run: every listener of its process tree (Ray's GCS, raylet, object manager, agents,
    workers; Prefect's temporary API server) is on 127.0.0.1; after SIGKILL of the driver none of those processes
    survives; the next run reuses the finished stage and leaves no scratch of the killed one."""
    _set_sleep(toy_project, 3.0)
    run = runs("run", "toy", cwd=toy_project.root)
    _wait_for(lambda: _started(tmp_path / "log", "train_a"), 180, "train_a to start on Ray")
    listeners = _listeners([psutil.Process(run.proc.pid), *run.descendants()])
    names = {n for n, _, _ in listeners}
    assert any("raylet" in n for n in names) and any("gcs" in n for n in names), listeners
    assert [l for l in listeners if not _loopback(l[1])] == []
    run.signal(signal.SIGKILL)
    run.wait(30)
    assert run.survivors(within=15) == []
    again = paperdag("run", "toy", "--local", "--only", "prepare", cwd=toy_project.root)
    assert again.returncode == 0 and "1 cached" in again.stderr, again.stderr
    assert not any(n.startswith(".") for n in _entries(toy_project.root, "train_a")), "stale scratch swept"


@pytest.mark.slow
@pytest.mark.parametrize("signum, group, code", [(signal.SIGTERM, False, 143), (signal.SIGINT, True, 130)],
                         ids=["sigterm", "ctrl-c"])
def test_signal_ends_a_prefect_ray_run_in_seconds(toy_project, tmp_path, runs, signum, group, code):
    _set_sleep(toy_project, 2.0)
    run = runs("run", "toy", cwd=toy_project.root)
    _wait_for(lambda: _started(tmp_path / "log", "train_a"), 180, "train_a to start on Ray")
    sent = run.signal(signum, group=group)
    rc, stderr = run.wait(60)
    took = time.monotonic() - sent
    assert rc == code and took < 8, (took, stderr)
    _interrupted_once(stderr)
    assert len(stderr.strip().splitlines()) <= 8, stderr
    assert run.survivors(within=10) == []
    assert len([n for n in _entries(toy_project.root, "prepare") if not n.startswith(".")]) == 1


@pytest.mark.slow
def test_failed_stage_on_prefect_and_ray_prints_no_traceback(toy_project):
    result = paperdag("run", "toy", "--retries", "0", cwd=toy_project.root, env={"TOY_FAIL": "train_b"})
    assert result.returncode == 1
    line = _one_line_error(result.stderr)
    assert len(result.stderr.strip().splitlines()) <= 10, result.stderr
    log = toy_project.artifacts / ".logs/toy/train_b.log"
    assert str(log.relative_to(toy_project.root)) in line
    text = log.read_text()
    assert "ray::_run_remote" in text and "train_b was told to fail" in text and "\x1b[" not in text


# -- stages side by side without Ray (--local --jobs N) --------------------------------------------------------------
def test_jobs_runs_stages_side_by_side_in_child_processes_then_cached(toy_project, tmp_path):
    env = {"TOY_RENDEZVOUS": "1"}  # the train stages wait for each other to start: a one-by-one run fails here
    first = paperdag("run", "toy", "--local", "--jobs", "2", cwd=toy_project.root, env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "[toy.train_a] a line from the stage" in first.stderr, "a child's progress reaches the driver"
    assert "toy: evidence 1 holds / 0 fails / 0 inconclusive" in first.stderr
    assert (toy_project.root / "metrics/toy.json").is_file(), "the driver publishes the metrics"
    second = paperdag("run", "toy", "--local", cwd=toy_project.root)
    assert second.returncode == 0 and "4 cached" in second.stderr, second.stderr[-2000:]
    assert executions(tmp_path / "log", "prepare") == 1 and executions(tmp_path / "log", "train_b") == 1


def test_jobs_failure_is_one_line_with_the_childs_traceback_in_the_log(toy_project):
    result = paperdag("run", "toy", "--local", "--jobs", "2", "--retries", "0", cwd=toy_project.root,
                      env={"TOY_FAIL": "train_b"})
    assert result.returncode == 1
    line = _one_line_error(result.stderr)
    assert line.startswith("error: stage toy.train_b failed: ") and "train_b was told to fail" in line, line
    log = (toy_project.artifacts / ".logs/toy/train_b.log").read_text()
    assert 'raise ValueError(f"{name} was told to fail")' in log, "the child's own traceback, not the driver's"
    assert _entries(toy_project.root, "train_b") == [] and len(_entries(toy_project.root, "train_a")) == 1


def test_jobs_needs_local(toy_project):
    result = paperdag("run", "toy", "--jobs", "2", cwd=toy_project.root)
    assert result.returncode == 2 and "--jobs" in _one_line_error(result.stderr)


def test_ctrl_c_ends_a_jobs_run_and_every_child(toy_project, tmp_path, runs):
    _set_sleep(toy_project, 30.0)
    run = runs("run", "toy", "--local", "--jobs", "2", cwd=toy_project.root)
    _wait_for(lambda: _started(tmp_path / "log", "prepare"), 60, "prepare to start")
    run.descendants()
    sent = run.signal(signal.SIGINT, group=True)  # the terminal's Ctrl-C: the children are in sessions of their own
    rc, stderr = run.wait(30)
    assert rc == 130 and time.monotonic() - sent < 8, stderr
    _interrupted_once(stderr)
    assert run.survivors(within=10) == [], "no stage process outlives the run"
    assert _entries(toy_project.root, "prepare") == [], "the interrupted stage left nothing (no scratch either)"
