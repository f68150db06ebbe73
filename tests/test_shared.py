"""A team shares one store, end to end against real servers on loopback, started and stopped by the tests: an
S3-protocol server (moto's standalone server), an MLflow tracking server, a Prefect server and a two-node Ray
cluster. Clone A computes a paper there; a fresh clone B pulls it and computes nothing, `dvc status` is clean,
`paperdag verify` re-checks the pulled certificate and the tracking server lists A's runs; `compare` names the
environment fields in which a recompute whose bytes differ was computed otherwise. Faults: the S3 server
going away mid-run, a missing bucket, refused credentials, an endpoint that does not answer."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from ruamel.yaml import YAML

from conftest import BIN, REPO, executions, free_port, paperdag, ray_cluster
from paperdag.params import PROFILES_KEY, deep_merge, read_params_file

pytestmark = pytest.mark.slow
PAPER = "a2rbench"  # a certificate `paperdag verify` re-checks; run at its smoke sizes (clone)
STAGES = ("prepare", "train", "verify", "export", "evaluate")
DVC_YAML = YAML(typ="safe")  # YAML 1.2, as DVC reads its files: `off` stays a string (PyYAML's 1.1 makes it False)


def root_uri(endpoint: str, prefix: str = "shared") -> str:
    return f"s3://team/{prefix}?endpoint_override={endpoint}&scheme=http&region=us-east-1"


def _own(stages: dict) -> dict:
    """PAPER's entries of a dvc.yaml or dvc.lock ``stages`` mapping."""
    return {name: stage for name, stage in stages.items() if name.startswith(f"{PAPER}-")}


def clone(tmp: Path, name: str, lock: Path | None = None) -> Path:
    """A fresh clone as CI makes one: the committed dvc.yaml and dvc.lock (or ``lock``) cut to PAPER's stages, and
    the DVC config, in a git repository, the sources at src/ (dvc.yaml's deps), no artifacts; params.yaml with
    PAPER's smoke overlay merged into its default values (the same keys, so the same stages, params and DVC entries,
    in seconds: its real default takes minutes). The cut changes nothing DVC does for PAPER's stages; it spares the
    test DVC's round-trip rewrite of the whole dvc.lock for every stage `dvc commit` records (~16 s a stage at the
    repository's ~250 stages)."""
    folder = tmp / name
    folder.mkdir()
    shutil.copy(REPO / ".dvcignore", folder / ".dvcignore")
    pipeline = DVC_YAML.load(REPO / "dvc.yaml")
    pipeline = {"stages": _own(pipeline["stages"]),
                "plots": [p for p in pipeline["plots"] if str(p if isinstance(p, str) else next(iter(p)))
                          .startswith(f"artifacts/{PAPER}/")]}
    DVC_YAML.dump(pipeline, folder / "dvc.yaml")
    data = read_params_file(REPO / "params.yaml")
    section = data[PAPER]
    data[PAPER] = {**deep_merge({k: v for k, v in section.items() if k != PROFILES_KEY},
                                section[PROFILES_KEY]["smoke"]), PROFILES_KEY: section[PROFILES_KEY]}
    (folder / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    locked = DVC_YAML.load(lock or REPO / "dvc.lock")
    DVC_YAML.dump({**locked, "stages": _own(locked["stages"])}, folder / "dvc.lock")
    (folder / ".dvc").mkdir()
    shutil.copy(REPO / ".dvc" / "config", folder / ".dvc" / "config")
    (folder / "src").symlink_to(REPO / "src", target_is_directory=True)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    return folder


def _dvc(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "dvc"), *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"})


def test_a_fresh_clone_pulls_what_another_computed_and_computes_nothing(tmp_path, team_servers):
    s3_server, mlflow_server = team_servers["s3"], team_servers["mlflow"]
    shared = {**s3_server["env"], "PAPERDAG_ARTIFACT_ROOT": root_uri(s3_server["endpoint"])}
    env_a = {**shared, "MLFLOW_TRACKING_URI": mlflow_server, "PAPERDAG_TRACKING": "on",
             "PREFECT_API_URL": team_servers["prefect"], "PAPERDAG_EXTRA_PIPELINES": ""}
    a = clone(tmp_path, "a")
    with ray_cluster(s3_server["env"]) as (address, _):
        ran = paperdag("run", PAPER, "--ray-address", address, cwd=a, env=env_a, timeout=900)
    assert ran.returncode == 0, ran.stderr[-3000:]
    names = [f"{PAPER}-{s}" for s in STAGES]
    assert _dvc("commit", "-f", *names, cwd=a, env=env_a).returncode == 0  # A commits its dvc.lock

    b = clone(tmp_path, "b", lock=a / "dvc.lock")
    env_b = {**shared, "PAPERDAG_EXTRA_PIPELINES": ""}
    pulled = paperdag("pull", PAPER, cwd=b, env=env_b)
    assert pulled.returncode == 0, pulled.stderr
    assert f"{PAPER}: {len(STAGES)} pulled" in pulled.stderr, pulled.stderr
    status = _dvc("status", *names, cwd=b, env=env_b)
    assert status.returncode == 0 and "up to date" in status.stdout, status.stdout + status.stderr
    again = paperdag("run", PAPER, "--local", cwd=b, env=env_b)
    assert again.returncode == 0 and f"0 to run, {len(STAGES)} cached" in again.stderr, again.stderr
    assert json.loads((b / "metrics" / f"{PAPER}.json").read_text())["key"] == \
        json.loads((a / "metrics" / f"{PAPER}.json").read_text())["key"]
    verified = paperdag("verify", PAPER, cwd=b, env=env_b)
    assert verified.returncode == 0 and "VERIFIED" in verified.stdout, verified.stdout + verified.stderr
    compared = paperdag("compare", PAPER, cwd=b, env=env_b)
    assert compared.returncode == 0 and "not in both stores" in compared.stdout  # b computed nothing locally

    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_server)
    runs = client.search_runs([client.get_experiment_by_name(PAPER).experiment_id])
    assert {r.data.tags.get("mlflow.runName") for r in runs} >= set(STAGES), "A's stage runs on the server"
    train = next(r for r in runs if r.data.tags.get("mlflow.runName") == "train")
    assert client.list_artifacts(train.info.run_id), "artifacts through the server's proxy"


class _Proxy:
    """A TCP relay on 127.0.0.1 to ``target``: the shared root as a client sees it, until ``stop`` cuts it."""

    def __init__(self, target: tuple[str, int]):
        self.target, self.sock = target, socket.create_server(("127.0.0.1", 0))
        self.port, self.open = self.sock.getsockname()[1], []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stop(self) -> None:
        self.sock.close()
        for s in self.open:
            try:
                s.close()
            except OSError:
                pass


def test_the_shared_root_going_away_mid_run_is_one_line_and_nothing_counts(toy_project, tmp_path, s3_server):
    params = toy_project.params_path
    params.write_text(params.read_text().replace("sleep: 0.0", "sleep: 3.0"))
    host, port = s3_server["endpoint"].split(":")
    proxy = _Proxy((host, int(port)))
    env = {**s3_server["env"], "PAPERDAG_ARTIFACT_ROOT": root_uri(f"127.0.0.1:{proxy.port}", "faulty"),
           "PAPERDAG_STORE_TIMEOUT_S": "2"}
    proc = subprocess.Popen([sys.executable, "-c", "from paperdag.cli import main; main()", "run", "toy", "--local",
                             "--retries", "0"], cwd=toy_project.root, env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import time

    end = time.monotonic() + 120
    while not executions(tmp_path / "log", "prepare") and time.monotonic() < end:
        time.sleep(0.1)
    proxy.stop()  # the server is gone while prepare computes: its upload must fail
    _, err = proc.communicate(timeout=300)
    lines = err.strip().splitlines()
    assert proc.returncode in (1, 2) and "Traceback" not in err
    assert lines[-1].startswith("error: ") and "s3://team/faulty" in lines[-1], err
    import pyarrow.fs as pafs

    fs = pafs.S3FileSystem(endpoint_override=s3_server["endpoint"], scheme="http", region="us-east-1")
    found = fs.get_file_info(pafs.FileSelector("team/faulty/.store", recursive=True, allow_not_found=True))
    assert not [f.path for f in found if f.path.endswith("manifest.json")], "an entry counts after the failure"


@pytest.mark.parametrize("case", ["missing bucket", "refused credentials", "silent endpoint", "unknown option"])
def test_a_bad_shared_root_is_one_line_and_exit_2(toy_project, s3_server, case):
    endpoint = s3_server["endpoint"]
    env = {**s3_server["env"], "PAPERDAG_STORE_TIMEOUT_S": "2"}
    listener = None
    if case == "missing bucket":
        env["PAPERDAG_ARTIFACT_ROOT"] = root_uri(endpoint).replace("s3://team/", "s3://no-such-bucket/")
        words = "does not exist"
    elif case == "refused credentials":
        env["PAPERDAG_ARTIFACT_ROOT"] = root_uri(f"127.0.0.1:{_forbidding_server()}")
        words = "credentials were refused"
    elif case == "silent endpoint":
        listener = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
        env["PAPERDAG_ARTIFACT_ROOT"] = root_uri(f"127.0.0.1:{listener.getsockname()[1]}")
        words = "does not answer"
    else:
        env["PAPERDAG_ARTIFACT_ROOT"] = root_uri(endpoint) + "&colour=blue"
        words = "unknown option 'colour'"
    try:
        result = paperdag("run", "toy", "--local", cwd=toy_project.root, env=env, timeout=120)
    finally:
        if listener is not None:
            listener.close()
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and words in lines[0], result.stderr
    assert not (toy_project.root / "artifacts" / "toy").exists()


def _forbidding_server() -> int:
    """An HTTP server on 127.0.0.1 that answers every S3 request 403 AccessDenied (what wrong credentials get)."""
    import http.server

    class Forbid(http.server.BaseHTTPRequestHandler):
        def _deny(self) -> None:
            body = b"<Error><Code>InvalidAccessKeyId</Code><Message>wrong key</Message></Error>"
            self.send_response(403)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = do_PUT = do_POST = _deny

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Forbid)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_port


def test_compare_names_the_environment_fields_that_differ_where_bytes_differ(toy_project, s3_server, monkeypatch):
    """The toy paper computed locally and pushed: every stage is byte-identical and no environment line is
    printed; once the local train_a entry holds other bytes computed with another numpy on a CPU with one more ISA
    extension (a recompute elsewhere), compare names exactly those two fields on that stage."""
    from importlib.metadata import version

    from paperdag.project import Project
    from paperdag.runs import Execution, drive
    from paperdag.share import compare, comparison_table, push
    from paperdag.store import sha256_file

    drive(Execution.open(["toy"], profile="smoke", track=False))
    monkeypatch.setenv("PAPERDAG_ARTIFACT_ROOT", root_uri(s3_server["endpoint"], "env"))
    project = Project.find()
    push(project, ["toy"], "smoke", [])
    lines = comparison_table(compare(project, ["toy"], "smoke", []))
    assert "4/4 compared stages byte-identical" in lines[-1] and not any("environment" in l for l in lines), lines
    entry = next((toy_project.artifacts / ".store" / "toy" / "train_a").iterdir())
    for name in ("model.parquet", "manifest.json", "run.json"):
        (entry / name).chmod(0o644)
    (entry / "model.parquet").write_bytes(b"other bytes")
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["files"]["model.parquet"] = {"sha256": sha256_file(entry / "model.parquet"), "bytes": 11}
    (entry / "manifest.json").write_text(json.dumps(manifest))
    run = json.loads((entry / "run.json").read_text())
    run["environment"]["packages"]["numpy"] = "0.0.1"
    run["environment"]["cpu"]["isa"].append("amx_fp8")
    (entry / "run.json").write_text(json.dumps(run))
    lines = comparison_table(compare(project, ["toy"], "smoke", []))
    row = next(i for i, l in enumerate(lines) if l.startswith("toy.train_a"))
    assert "1 differ" in lines[row] and lines[row + 1].startswith("    environment: ")
    notes = lines[row + 1].removeprefix("    environment: ").split("; ")
    assert notes == ["cpu.isa -amx_fp8", f"packages.numpy 0.0.1 -> {version('numpy')}"], notes
