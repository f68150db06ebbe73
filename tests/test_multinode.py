"""A two-node local Ray cluster (`ray start --head` + a worker node with a custom resource): a stage that asks for
that resource, run through `paperdag run --ray-address`, lands on the worker node."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import free_port, paperdag

pytestmark = pytest.mark.slow


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
    result = paperdag("run", "toy", "--ray-address", f"127.0.0.1:{free_port()}", cwd=toy_project.root)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "unreachable" in result.stderr
    assert not (toy_project.root / "artifacts").exists() and "Traceback" not in result.stderr
