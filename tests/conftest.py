"""Shared fixtures: throwaway projects, the toy pipelines, and environment isolation (no telemetry, no network)."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
os.environ["PAPERDAG_EXTRA_PIPELINES"] = "toy_pipeline.pipeline,toy_pipeline.cluster"
for var, value in {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", "RAY_USAGE_STATS_ENABLED": "0",
                   "DVC_NO_ANALYTICS": "1", "MLFLOW_ENABLE_TELEMETRY": "false", "PAPERDAG_TRACKING": "off"}.items():
    os.environ[var] = value
os.environ.pop("MLFLOW_TRACKING_URI", None)
# OpenMP threads that wait for work sleep instead of spinning: two pytest-xdist workers (or a test beside its own
# subprocesses) each running torch's two intra-op threads on 2 cores otherwise spin against each other (a torch
# test took 28 s beside a copy of itself against 6 s alone; 7 s with passive waiting, the same 6 s alone). Set
# before torch is imported; subprocesses inherit it; it changes no result, only how idle threads wait.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402 - after OMP_WAIT_POLICY, which OpenMP reads once

# torch in a test process runs one intra-op thread: two workers on 2 cores (stages run in-process still get their
# declared threads from the engine). Three paper test modules used to set it on import, which held for the whole
# session from collection on; here it is one policy, also for a file run alone.
torch.set_num_threads(1)

# Prefect's temporary API servers keep their database in PREFECT_HOME: one per test session (per pytest-xdist
# worker), so concurrent sessions never contend for one sqlite file and a user's ~/.prefect is left alone
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="paperdag-tests-prefect-")
atexit.register(shutil.rmtree, os.environ["PREFECT_HOME"], True)
os.environ.pop("RAY_ADDRESS", None)

TOY_PARAMS = """\
toy:
  seed: 0
  n: 50
  scale_a: 1.0
  scale_b: 2.0
  sleep: 0.0
  profiles:
    smoke:
      n: 10
toy_cluster:
  seed: 0
"""
PAPERDAG = [sys.executable, "-c", "from paperdag.cli import main; main()"]
BIN = Path(sys.executable).parent


@pytest.fixture
def toy_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A project folder holding only the toy pipelines' params; cwd is set to it."""
    from paperdag.testing import make_project

    project = make_project(tmp_path / "proj", TOY_PARAMS)
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("TOY_LOG", str(tmp_path / "log"))
    (tmp_path / "log").mkdir()
    return project


@pytest.fixture
def float64():
    """torch's default dtype float64 for the test (networks, tensors and draws), restored after."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


@pytest.fixture(scope="session")
def smoke_runs(tmp_path_factory: pytest.TempPathFactory):
    """``smoke_runs(slug)``: the paper's whole smoke profile run through the engine, once per test session (the
    contract test and the paper's own tests share it). Under pytest-xdist the workers share one project per paper:
    the first to ask computes it under a file lock, the others then find every stage in its store."""
    import fcntl

    from paperdag.testing import run_stages

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    done = {}

    def run(slug: str):
        if slug not in done:
            with open(shared / f"smoke-{slug}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                done[slug] = run_stages(slug, root=shared / f"smoke-{slug}")
        return done[slug]

    return run


def executions(log: Path, stage: str) -> int:
    """How many times a toy stage body ran (each run touches a file in $TOY_LOG)."""
    return len(list(log.glob(f"{stage}.*")))


def paperdag(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300):
    """Run the paperdag CLI in a subprocess; returns the CompletedProcess (text, both streams captured)."""
    return subprocess.run([*PAPERDAG, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


# -- servers on loopback, started and stopped by the tests that use them -----------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, proc: subprocess.Popen, what: str, seconds: float = 180) -> None:
    """Poll ``url`` until it answers (any HTTP status); fail the test if ``proc`` dies or time runs out."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"{what} did not answer at {url} within {seconds:.0f}s")


Spec = tuple[list[str], str, str, dict[str, str]]  # a server's command, the URL that answers when it is up, its name, env


@contextlib.contextmanager
def _servers(*specs: Spec):
    """Server processes, each in its own session, started together (their start-ups overlap) and each answered at
    its URL before the block runs; killed (with their groups) however the block ends."""
    procs: list[subprocess.Popen] = []
    try:
        for cmd, _, _, env in specs:
            procs.append(subprocess.Popen(cmd, env={**os.environ, **env}, start_new_session=True,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for proc, (_, url, what, _) in zip(procs, specs):
            _wait_http(url, proc, what)
        yield procs
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)


def _prefect_spec(home: Path) -> tuple[Spec, str]:
    """A Prefect server on 127.0.0.1 (its database under ``home``), as users run one for the UI; and its API URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = {"PREFECT_HOME": str(home), "PREFECT_UI_ENABLED": "false", "PREFECT_API_URL": ""}
    return ([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)], f"{url}/health",
            "prefect server", env), url


def _mlflow_spec(folder: Path) -> tuple[Spec, str]:
    """An MLflow tracking server on 127.0.0.1 (sqlite store and proxied artifacts under ``folder``); and its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [str(BIN / "mlflow"), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
           "--backend-store-uri", f"sqlite:///{folder / 'mlflow-server.db'}",
           "--artifacts-destination", str(folder / "mlflow-artifacts")]
    return (cmd, f"{url}/health", "mlflow server", {}), url


def _s3_spec() -> tuple[Spec, str]:
    """moto's standalone S3-protocol server on 127.0.0.1; and its endpoint (host:port)."""
    port = free_port()
    return ([str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)], f"http://127.0.0.1:{port}/",
            "moto_server", {}), f"127.0.0.1:{port}"


def _s3_team(endpoint: str, proc: subprocess.Popen) -> dict:
    """The bucket ``team`` on a started S3 server; the environment a client needs (dummy credentials), the endpoint
    and the server's process."""
    import pyarrow.fs as pafs

    env = {"AWS_ACCESS_KEY_ID": "team-key", "AWS_SECRET_ACCESS_KEY": "team-secret", "AWS_DEFAULT_REGION": "us-east-1"}
    os.environ.update(env)
    pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", region="us-east-1",
                      allow_bucket_creation=True).create_dir("team")
    return {"env": env, "endpoint": endpoint, "proc": proc}


@pytest.fixture
def prefect_server(tmp_path):
    """A Prefect server for one test (stopped afterwards); yields its API URL."""
    spec, url = _prefect_spec(tmp_path / "prefect-home")
    with _servers(spec):
        yield url


@pytest.fixture
def s3_server():
    """An S3-protocol server with the bucket ``team`` for one test; yields ``_s3_team``'s dict."""
    spec, endpoint = _s3_spec()
    with _servers(spec) as (proc,):
        yield _s3_team(endpoint, proc)


@pytest.fixture
def team_servers(tmp_path):
    """A team's three servers for one test, started together: S3 (``_s3_team``'s dict), MLflow and Prefect (URLs)."""
    (s3, endpoint), (mlflow, mlflow_url), (prefect, prefect_url) = (_s3_spec(), _mlflow_spec(tmp_path),
                                                                    _prefect_spec(tmp_path / "prefect-home"))
    with _servers(s3, mlflow, prefect) as (proc, _, _):
        yield {"s3": _s3_team(endpoint, proc), "mlflow": mlflow_url, "prefect": prefect_url}


def stop_cluster(temp_dir: str) -> None:
    """Kill this cluster's processes only: those started with ``temp_dir`` in their command line, and their
    children (the workers). `ray stop` would kill every Ray instance on the machine, a user's running pipelines
    included."""
    import psutil

    procs: list[psutil.Process] = []
    for p in psutil.process_iter(["cmdline"]):
        if any(temp_dir in arg for arg in p.info["cmdline"] or ()):
            try:
                procs += [p, *p.children(recursive=True)]
            except psutil.NoSuchProcess:
                pass
    for p in procs:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=30)


@contextlib.contextmanager
def ray_cluster(extra_env: dict[str, str] | None = None):
    """A Ray head and a worker node (custom resource ``special_node``) on 127.0.0.1, token-authenticated as
    ``ray start`` clusters are, their processes given ``extra_env`` (e.g. the shared store's credentials); yields
    (address, the environment the nodes run with) and stops exactly these nodes afterwards."""
    port = free_port()
    short_tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    env = {**os.environ, **(extra_env or {}), "RAY_AUTH_MODE": "token", "RAY_TMPDIR": short_tmp}
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    ray = str(BIN / "ray")
    head = [ray, "start", "--head", "--port", str(port), "--include-dashboard", "false", *common]
    worker = [ray, "start", "--address", f"127.0.0.1:{port}", "--resources", '{"special_node": 1}', *common]
    token = [ray, "get-auth-token", "--generate"]  # Ray 2.59+: `ray start` clusters require token authentication
    try:
        for cmd in (token, head, worker):
            subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=120)
        yield f"127.0.0.1:{port}", env
    finally:
        stop_cluster(short_tmp)
        shutil.rmtree(short_tmp, ignore_errors=True)


@pytest.fixture
def two_node_cluster():
    with ray_cluster() as cluster:
        yield cluster
