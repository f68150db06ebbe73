"""Ray executes stages: an embedded local Ray started on demand, or an existing cluster by address.

Each stage is one ``ray.remote`` call with the stage's resources (``num_cpus``, ``num_gpus``, ``memory``, custom
resources). A stage asking for GPUs gets them only where the cluster has GPUs; otherwise it runs on the CPU and
its device is "cpu". Workers only compute and commit to the store; they never talk to Prefect or MLflow.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Any

from paperdag.engine import StagePlan, execute_stage
from paperdag.errors import PaperdagError, UsageError
from paperdag.store import Store

_CONNECT_LOCK = threading.Lock()


def check_reachable(address: str, timeout: float = 3.0) -> None:
    """Fail fast (one line) when ``host:port`` does not accept TCP connections."""
    hostport = address.removeprefix("ray://")
    if address in ("auto", "local") or ":" not in hostport:
        return
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            return
    except (OSError, ValueError):
        raise UsageError(f"Ray address {address!r} is unreachable (no Ray head listening there)") from None


def connect(address: str | None = None) -> dict[str, float]:
    """Start (or join) Ray once per process; returns the cluster's resources.

    ``address`` (or ``RAY_ADDRESS``) joins an existing cluster; none starts an embedded local Ray sized to this
    machine.
    """
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        check_reachable(address)
        _use_token_auth_if_available()
    import ray

    with _CONNECT_LOCK:
        if not ray.is_initialized():
            _init(address)
    return ray.cluster_resources()


def _use_token_auth_if_available() -> None:
    """Ray >= 2.59 clusters started with ``ray start`` require token authentication, and a client left in the
    default mode retries for ~20 s and fails: use token mode whenever a token is at hand (set before importing ray,
    which reads the mode once)."""
    token_file = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser("~/.ray/auth_token")
    if "RAY_AUTH_MODE" not in os.environ and (os.environ.get("RAY_AUTH_TOKEN") or os.path.isfile(token_file)):
        os.environ["RAY_AUTH_MODE"] = "token"


def _init(address: str | None) -> None:
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        ray.init(address=address or "local", include_dashboard=False, logging_level=logging.ERROR, log_to_driver=True,
                 configure_logging=True, ignore_reinit_error=True)
    except Exception as e:  # noqa: BLE001 - ray raises many types for a bad address
        raise PaperdagError(f"cannot connect to Ray at {address or 'a new local cluster'}: {e}") from None


def _run_remote(store_root: str, local_dir: str, plan: StagePlan, inputs: dict[str, str],
                use_gpu: bool) -> tuple[dict, bool]:
    import ray

    device = "cuda" if use_gpu and ray.get_gpu_ids() else "cpu"
    return execute_stage(Store(store_root, local_dir), plan, inputs, device)


class RayExecutor:
    """Runs one stage at a time per call (callers run many calls concurrently, e.g. Prefect's threads)."""

    def __init__(self, address: str | None = None):
        import ray

        self.resources = connect(address)
        self._remote = ray.remote(_run_remote)

    def options(self, plan: StagePlan) -> dict[str, Any]:
        """Ray resource options for a stage; GPUs only where the cluster has enough of them."""
        r = plan.resources
        use_gpu = r.gpus > 0 and self.resources.get("GPU", 0) >= r.gpus
        opts: dict[str, Any] = {"num_cpus": r.cpus, "num_gpus": r.gpus if use_gpu else 0, "max_retries": 0}
        if r.memory_gb:
            opts["memory"] = int(r.memory_gb * 2**30)
        if r.custom:
            missing = {k: v for k, v in r.custom.items() if self.resources.get(k, 0) < v}
            if missing:
                raise PaperdagError(f"{plan.label} needs resources {missing} that no Ray node offers")
            opts["resources"] = dict(r.custom)
        return opts

    def run(self, store: Store, plan: StagePlan, inputs: dict[str, str]) -> tuple[dict, bool]:
        """Execute the stage on a Ray worker and wait for it; a worker's exception is re-raised as itself."""
        import ray

        opts = self.options(plan)
        ref = self._remote.options(**opts).remote(store.root, str(store.local_dir), plan, inputs, opts["num_gpus"] > 0)
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as e:
            cause = e.cause if isinstance(e.cause, BaseException) else None
            raise (cause or RuntimeError(str(e).splitlines()[-1])) from None
