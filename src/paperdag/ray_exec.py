"""Ray executes stages: an embedded local Ray started on demand, or an existing cluster by address.

Each stage is one ``ray.remote`` call with the stage's resources (``num_cpus``, ``num_gpus``, ``memory``, custom
resources). A stage asking for GPUs gets them only where the cluster has GPUs; otherwise it runs on the CPU and
its device is "cpu". Workers only compute and commit to the store; they never talk to Prefect or MLflow.

The embedded Ray is local-only: every Ray process listens on 127.0.0.1 (Ray's single-machine mode,
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``) and no dashboard is served, so nothing on the network can submit work to
it. Joining a cluster (``--ray-address``/``RAY_ADDRESS``) first checks, within a few seconds, that a Ray head (a
gRPC server) answers at the address, then connects with a bounded wait and token authentication where a token
is at hand; every failure is one line saying what was found there.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import tempfile
import threading
from typing import Any, Iterator

from paperdag.engine import StagePlan, execute_stage
from paperdag.errors import PaperdagError, UsageError, env_seconds
from paperdag.store import Store

_CONNECT_LOCK = threading.Lock()
PROBE_TIMEOUT_S = 3.0
CONNECT_TIMEOUT_S = 60.0  # default of PAPERDAG_RAY_CONNECT_TIMEOUT_S
# HTTP/2 client connection preface + an empty SETTINGS frame: a gRPC server (a Ray GCS or Ray Client server)
# answers with its own SETTINGS frame (frame type 4), anything else with something else or nothing.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_STDERR: list[int] = []  # the real stderr while ``_stderr_to`` redirects file descriptor 2
_PROXY_VARS = ("grpc_proxy", "https_proxy", "http_proxy", "GRPC_PROXY", "HTTPS_PROXY", "HTTP_PROXY")


class RayUnavailable(UsageError):
    """The Ray address given does not lead to a Ray cluster this driver can join (exit code 2)."""


def _proxy_hint() -> str:
    proxies = [v for v in _PROXY_VARS if os.environ.get(v)]
    if not proxies:
        return ""
    return (f"; note {proxies[0]} is set and Ray's gRPC connects through it (add the head's host to no_proxy/"
            f"no_grpc_proxy to bypass it)")


def _describe(answer: bytes) -> str:
    text = answer.split(b"\n", 1)[0].strip()
    printable = text.decode("ascii", "replace")
    if text and all(32 <= b < 127 for b in text):
        return f"it answered {printable[:60]!r}"
    return f"it answered {len(answer)} bytes that are not HTTP/2 ({answer[:8].hex()}...)"


def check_reachable(address: str, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Fail fast (one line, within ~2 x ``timeout`` s) unless a Ray head answers at ``host:port``: something must
    accept a TCP connection there and answer an HTTP/2 preface as gRPC servers do. With TLS (``RAY_USE_TLS``) only
    the TCP connection is checked."""
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    host = host.strip("[]")
    port_number = int(port) if port.isdigit() else 0
    if not host or not 1 <= port_number <= 65535:
        raise RayUnavailable(f"Ray address {address!r} is not host:port with a port in 1-65535 (e.g. 10.0.0.5:6379, "
                             "ray://10.0.0.5:10001, or auto for the cluster `ray start` runs on this machine)")
    try:
        sock = socket.create_connection((host, port_number), timeout=timeout)
    except socket.gaierror as e:
        raise RayUnavailable(f"Ray address {address!r}: unknown host {host!r} ({e.strerror})") from None
    except TimeoutError:
        raise RayUnavailable(f"Ray address {address!r} is unreachable: no answer to a TCP connection within "
                             f"{timeout:.0f}s") from None
    except OSError as e:
        raise RayUnavailable(f"Ray address {address!r} is unreachable: {e.strerror or e} (no Ray head listening "
                             f"there)") from None
    with sock:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return
        try:
            sock.sendall(_H2_PREFACE)
            answer = sock.recv(64)
        except TimeoutError:
            raise RayUnavailable(f"Ray address {address!r}: something accepted the connection but did not answer "
                                 f"like a Ray head (gRPC) within {timeout:.0f}s") from None
        except OSError as e:
            raise RayUnavailable(f"Ray address {address!r}: the connection was reset ({e.strerror or e}); not a "
                                 f"Ray head") from None
    if len(answer) < 9 or answer[3] != 4:
        what = _describe(answer) if answer else "it closed the connection without answering"
        raise RayUnavailable(f"Ray address {address!r} is not a Ray head: {what}")


def connect(address: str | None = None) -> dict[str, float]:
    """Start (or join) Ray once per process; returns the cluster's resources.

    ``address`` (or ``RAY_ADDRESS``) joins an existing cluster; none starts an embedded local Ray sized to this
    machine, listening on 127.0.0.1 only.
    """
    address = resolve_address(address or os.environ.get("RAY_ADDRESS"))
    if os.environ.get("RAY_ADDRESS"):  # Ray prefers the variable to its argument: make them agree
        os.environ["RAY_ADDRESS"] = address or "local"
    if address:
        _use_token_auth_if_available()
    with _CONNECT_LOCK, (contextlib.nullcontext() if address else _local_only()):
        import ray

        if not ray.is_initialized():
            _init(address)
    return ray.cluster_resources()


def resolve_address(address: str | None) -> str | None:
    """The cluster to join (None: an embedded Ray): ``local`` is None, ``auto`` the cluster ``ray start`` runs on
    this machine (``local_cluster``); a cluster is checked in seconds (``check_reachable``), and
    ``PAPERDAG_RAY_CONNECT_TIMEOUT_S`` is validated before anything starts."""
    env_seconds("PAPERDAG_RAY_CONNECT_TIMEOUT_S", CONNECT_TIMEOUT_S)
    if not address or address == "local":
        return None
    if address == "auto":
        address = local_cluster()
    check_reachable(address)
    return address


def local_cluster() -> str:
    """``auto``: the address of the cluster that ``ray start`` last started on this machine (Ray's own address
    file), never another process's embedded Ray; one line when there is none."""
    from ray._private.utils import read_ray_address

    found = read_ray_address()
    if not found:
        raise RayUnavailable("Ray address 'auto': no cluster started with `ray start` on this machine (start one, "
                             "give its host:port, or unset RAY_ADDRESS for an embedded Ray)")
    return found


@contextlib.contextmanager
def _local_only() -> Iterator[None]:
    """Ray's single-machine mode while the embedded Ray starts: the node's address is 127.0.0.1, so GCS, raylet,
    object manager, agents and workers (which inherit the setting) bind the loopback interface only. Ray reads it
    when imported, so the module constant is set too where Ray is already imported."""
    import sys

    saved = os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:
        constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
        else:
            os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = saved


def _use_token_auth_if_available() -> None:
    """Ray >= 2.59 clusters started with ``ray start`` require token authentication, and a client left in the
    default mode retries for ~20 s and fails: use token mode whenever a token is at hand (set before importing ray,
    which reads the mode once)."""
    token_file = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser("~/.ray/auth_token")
    if "RAY_AUTH_MODE" not in os.environ and (os.environ.get("RAY_AUTH_TOKEN") or os.path.isfile(token_file)):
        os.environ["RAY_AUTH_MODE"] = "token"


@contextlib.contextmanager
def _stderr_to(path: str) -> Iterator[None]:
    """Send file descriptor 2 (where Ray's C++ core logs its retries) to ``path`` for the duration."""
    import sys

    sys.stderr.flush()
    saved = os.dup(2)
    _STDERR.append(saved)
    try:
        with open(path, "ab") as log:
            os.dup2(log.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        _STDERR.remove(saved)
        os.close(saved)


def _init(address: str | None) -> None:
    """``ray.init``: the embedded Ray, or a cluster with Ray's own messages kept in a log file and the wait bounded
    (``PAPERDAG_RAY_CONNECT_TIMEOUT_S``; in the CLI the process ends with one line if Ray does not return)."""
    import ray

    from paperdag import lifetime

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    where = address or "a new local cluster"
    log = os.path.join(tempfile.gettempdir(), f"paperdag-ray-connect-{os.getpid()}.log")
    guard = None
    wait = env_seconds("PAPERDAG_RAY_CONNECT_TIMEOUT_S", CONNECT_TIMEOUT_S)
    if address and lifetime.cli_driver():
        def give_up() -> None:
            lifetime.fail_now(f"error: Ray at {address} did not accept this driver within {wait:.0f}s "
                              f"(Ray's messages: {log}){_proxy_hint()}", 2, _STDERR[-1] if _STDERR else 2)

        guard = threading.Timer(wait, give_up)
        guard.daemon = True
        guard.start()
    try:
        with _stderr_to(log) if address else contextlib.nullcontext():
            ray.init(address=address or "local", include_dashboard=False, logging_level=logging.ERROR,
                     log_to_driver=True, configure_logging=True, ignore_reinit_error=True)
    except Exception as e:  # noqa: BLE001 - ray raises many types for a bad address
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        more = f"; Ray's messages: {log}" if address else ""
        raise PaperdagError(f"cannot connect to Ray at {where}: {detail}{more}{_proxy_hint() if address else ''}") \
            from None
    finally:
        if guard is not None:
            guard.cancel()
        lifetime.restore_handlers()  # ray.init installs a SIGTERM handler that exits with status 15
    if address:
        with contextlib.suppress(OSError):
            os.remove(log)


def _run_remote(store_root: str, local_dir: str, plan: StagePlan, inputs: dict[str, str],
                use_gpu: bool) -> tuple[dict, bool]:
    import ray

    device = "cuda" if use_gpu and ray.get_gpu_ids() else "cpu"
    return execute_stage(Store(store_root, local_dir), plan, inputs, device)


class RayExecutor:
    """Runs one stage at a time per call (callers run many calls concurrently, e.g. Prefect's threads); ``cancel``
    stops every stage in flight (the scheduling loop calls it when interrupted)."""

    def __init__(self, address: str | None = None):
        import ray

        joined = address or os.environ.get("RAY_ADDRESS")
        self.embedded = not joined or joined == "local"  # this machine only: its CPUs and GPUs are all there is
        self.resources = connect(address)
        self._remote = ray.remote(_run_remote)
        self._inflight: set[Any] = set()
        self._lock = threading.Lock()
        self.cancelled = False

    def gpus(self, plan: StagePlan) -> float:
        """The GPUs a stage gets: what it asks for where the cluster has that many, else none (it runs on the CPU)."""
        r = plan.resources
        return r.gpus if r.gpus > 0 and self.resources.get("GPU", 0) >= r.gpus else 0

    def fits(self, plan: StagePlan, running: list[StagePlan]) -> bool:
        """Whether ``plan``'s CPUs and GPUs are free beside the ``running`` stages, on the embedded Ray (a fixed
        machine: starting a stage only when it fits keeps the pipeline's declaration order, which Ray's own queue does
        not, and makes "started" mean started). On a joined cluster always: its autoscaler sizes it to the queue."""
        if not self.embedded:
            return True
        cpus = sum(p.resources.cpus for p in running) + plan.resources.cpus
        gpus = sum(self.gpus(p) for p in running) + self.gpus(plan)
        return cpus <= self.resources.get("CPU", 0) and gpus <= self.resources.get("GPU", 0)

    def options(self, plan: StagePlan) -> dict[str, Any]:
        """Ray resource options for a stage; GPUs only where the cluster has enough of them."""
        r = plan.resources
        opts: dict[str, Any] = {"num_cpus": r.cpus, "num_gpus": self.gpus(plan), "max_retries": 0}
        if r.memory_gb:
            opts["memory"] = int(r.memory_gb * 2**30)
        if r.custom:
            missing = {k: v for k, v in r.custom.items() if self.resources.get(k, 0) < v}
            if missing:
                raise PaperdagError(f"{plan.label} needs resources {missing} that no Ray node offers")
            opts["resources"] = dict(r.custom)
        return opts

    def run(self, store: Store, plan: StagePlan, inputs: dict[str, str]) -> tuple[dict, bool]:
        """Execute the stage on a Ray worker and wait for it; a worker's exception is re-raised as itself, carrying
        the worker's traceback as ``paperdag_traceback`` (for the stage's log file)."""
        import ray

        opts = self.options(plan)
        with self._lock:
            if self.cancelled:
                raise StageCancelled(f"{plan.label} was not started: the run was interrupted")
            ref = self._remote.options(**opts).remote(store.root, str(store.local_dir), plan, inputs,
                                                      opts["num_gpus"] > 0)
            self._inflight.add(ref)
        try:
            return ray.get(ref)
        except ray.exceptions.TaskCancelledError:
            raise StageCancelled(f"{plan.label} was cancelled: the run was interrupted") from None
        except ray.exceptions.RayTaskError as e:
            cause = e.cause if isinstance(e.cause, BaseException) else None
            error = cause or RuntimeError(str(e).strip().splitlines()[-1])
            with contextlib.suppress(AttributeError, TypeError):
                error.paperdag_traceback = getattr(e, "traceback_str", None) or str(e)
            raise error from None
        finally:
            with self._lock:
                self._inflight.discard(ref)

    def cancel(self, grace_s: float = 1.0) -> int:
        """Stop every stage in flight: a KeyboardInterrupt in each (its scratch folder is removed as it unwinds),
        then, for those still running after ``grace_s``, their worker processes are killed (a killed stage leaves a
        scratch folder that never counts and is swept by the next run). Returns how many were in flight."""
        import ray

        with self._lock:
            self.cancelled = True
            refs = list(self._inflight)
        if not refs:
            return 0
        count = len(refs)
        for ref in refs:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=False)
        with contextlib.suppress(Exception):
            _, refs = ray.wait(refs, num_returns=len(refs), timeout=grace_s)
        for ref in refs:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        return count


class StageCancelled(PaperdagError):
    """A stage stopped because the run was interrupted."""
