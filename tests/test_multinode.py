"""A two-node local Ray cluster (`ray start --head` + a worker node with a custom resource): a stage that asks for
that resource, run through `paperdag run --ray-address`, lands on the worker node."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

from conftest import paperdag

pytestmark = pytest.mark.slow
RAY = str(Path(sys.executable).with_name("ray"))


def _stop_cluster(temp_dir: str) -> None:
    """Kill this cluster's processes only: those started with ``temp_dir`` in their command line, and their
    children (the workers). `ray stop` would kill every Ray instance on the machine, a user's running pipelines
    included."""
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def two_node_cluster():
    port = _free_port()
    short_tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_TMPDIR": short_tmp}
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    head = [RAY, "start", "--head", "--port", str(port), "--include-dashboard", "false", *common]
    worker = [RAY, "start", "--address", f"127.0.0.1:{port}", "--resources", '{"special_node": 1}', *common]
    token = [RAY, "get-auth-token", "--generate"]  # Ray 2.59+: `ray start` clusters require token authentication
    try:
        for cmd in (token, head, worker):
            subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=120)
        yield f"127.0.0.1:{port}", env
    finally:
        _stop_cluster(short_tmp)
        shutil.rmtree(short_tmp, ignore_errors=True)


def test_stage_with_custom_resource_lands_on_the_worker_node(toy_project, two_node_cluster):
    address, env = two_node_cluster
    client_env = {k: v for k, v in env.items() if k != "RAY_AUTH_MODE"}  # paperdag must detect token auth itself
    result = paperdag("run", "toy_cluster", "--ray-address", address, cwd=toy_project.root, env=client_env)
    assert result.returncode == 0, result.stderr[-3000:]
    node_id = json.loads((toy_project.root / "artifacts/toy_cluster/evaluate/node.json").read_text())["node_id"]
    nodes = subprocess.run([sys.executable, "-c", (
        "import json, ray; ray.init(address=%r, logging_level='ERROR');"
        "print(json.dumps([[n['NodeID'], n['Resources']] for n in ray.nodes() if n['Alive']]))") % address],
        env=env, capture_output=True, text=True, timeout=120, check=True).stdout.strip().splitlines()[-1]
    special = [nid for nid, res in json.loads(nodes) if res.get("special_node")]
    assert special == [node_id]


def test_unreachable_ray_address_is_a_one_line_error(toy_project):
    result = paperdag("run", "toy", "--ray-address", f"127.0.0.1:{_free_port()}", cwd=toy_project.root)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "unreachable" in result.stderr
    assert not (toy_project.root / "artifacts").exists() and "Traceback" not in result.stderr
