"""Stages side by side on one machine without Ray: ``paperdag run --local --jobs N``.

``ProcessExecutor`` is the local counterpart of Ray's scheduling, for a GPU node where Ray is not installed (README
"On a GPU node without a package index"): each ready stage runs in a child Python process of its own, as many at a
time as their declared CPUs (``Resources.cpus``) fit in ``N``, in the loop's declaration order. A child only computes
(``run_child``: it re-plans its one stage, checks that the key is the one the driver planned, and calls
``execute_stage``, which commits the output atomically under the output's lock); the driver records, materialises,
tracks and publishes exactly as with ``LocalExecutor``. Every child sees the machine's device as ``--local`` does
(``device.visible``), so GPU shares are not enforced: stages on one GPU share it.

Lifetime: children start in sessions of their own (a Ctrl-C reaches the driver only, which then stops them through
``cancel``), and carry the driver's ``PAPERDAG_LIFETIME`` tag, so the watchdog ends them should the driver die
(``lifetime.start_watchdog``). A child's progress lines pass through to the driver's stderr; its traceback, if it
fails, becomes the stage's log (``paperdag_traceback``), as a Ray worker's does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING

from paperdag.errors import StageFailed

if TYPE_CHECKING:
    from paperdag.engine import StagePlan
    from paperdag.runs import Execution

TRACEBACK = "\x00paperdag-traceback"  # the line after which a child's stderr is its traceback
CHILD = "from paperdag.process_exec import run_child; run_child()"


class ProcessExecutor:
    """Runs each stage in a child process; ``fits`` admits a stage while the running stages' CPUs and its own add
    up to at most ``cpus`` (one stage always runs, whatever it declares)."""

    def __init__(self, cpus: int) -> None:
        from paperdag.lifetime import start_watchdog

        self.cpus = cpus
        self._children: dict[int, subprocess.Popen] = {}
        self._lock = threading.Lock()
        start_watchdog()

    def fits(self, plan: StagePlan, running: list[StagePlan]) -> bool:
        return sum(p.resources.cpus for p in running) + plan.resources.cpus <= self.cpus

    def submit(self, execution: Execution, plan: StagePlan) -> Future[tuple[dict, bool]]:
        future: Future[tuple[dict, bool]] = Future()
        args = [plan.paper, plan.name, plan.profile, plan.key, "force" if plan.force else "reuse",
                json.dumps(plan.provenance)]  # the driver's one look at git, which the child's run.json records
        child = subprocess.Popen([sys.executable, "-c", CHILD, *args], stdin=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
        with self._lock:
            self._children[child.pid] = child
        threading.Thread(target=self._follow, args=(execution, plan, child, future), daemon=True).start()
        return future

    def _follow(self, execution: Execution, plan: StagePlan, child: subprocess.Popen, future: Future) -> None:
        """Pass the child's stderr through until its traceback starts; settle the future when it exits."""
        trace: list[str] = []
        assert child.stderr is not None
        for line in child.stderr:
            if trace or line.rstrip("\n") == TRACEBACK:
                trace.append(line)
            else:
                sys.stderr.write(line)
                sys.stderr.flush()
        code = child.wait()
        with self._lock:
            self._children.pop(child.pid, None)
        if code == 0:
            # the child hashed every file when it committed: read the manifest back, do not hash the outputs again
            found = execution.store.lookup(plan.paper, plan.name, plan.key, verify=False, outputs=plan.stage.outputs)
            if found is not None:
                if not found.get("run"):  # a remote root: lookup reads the manifest alone
                    found["run"] = execution.store.run_facts(plan.paper, plan.name, plan.key)
                future.set_result((found, False))
                return
        text = "".join(trace[1:])
        last = text.strip().splitlines()[-1] if text.strip() else f"the stage's process exited with code {code}"
        error = StageFailed(last if code else f"the stage's process exited 0 but left no output under key "
                                              f"{plan.key[:12]}")
        error.paperdag_traceback = text or None  # type: ignore[attr-defined]
        future.set_exception(error)

    def cancel(self) -> None:
        """Stop every child still running: SIGTERM (the child unwinds, removing its scratch folder), then SIGKILL after
        3 s (a killed child's scratch is swept by the next run's ``Store.prepare``)."""
        with self._lock:
            children = list(self._children.values())
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=3)
            except subprocess.TimeoutExpired:
                child.kill()


def run_child() -> None:
    """A child's whole life: ``<paper> <stage> <profile> <key> force|reuse <provenance JSON>`` from argv; plan that
    stage alone, refuse a key other than the driver's (code or params edited since it planned), take the driver's
    provenance of its inputs (as the in-process and Ray executors do), compute it into the store."""
    import traceback

    from paperdag.device import visible
    from paperdag.engine import execute_stage
    from paperdag.runs import Execution

    paper, stage, profile, key, mode, prov = sys.argv[1:7]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the driver's cancel: unwind, so no scratch is left
    try:
        execution = Execution.open([paper], profile=profile, force=mode == "force", only=[stage], track=False)
        plan = next(p for p in execution.plans if p.name == stage)
        if plan.key != key:
            raise StageFailed(f"{plan.label}: its key changed since the run was planned ({key[:12]} -> "
                              f"{plan.key[:12]}): code or params were edited meanwhile; run again")
        plan.provenance = json.loads(prov)
        execute_stage(execution.store, plan, execution.inputs(plan), visible())
    except BaseException as e:  # noqa: BLE001 - everything, SIGTERM's SystemExit too, ends as a traceback and code 1
        sys.stderr.write(f"{TRACEBACK}\n{''.join(traceback.format_exception(e))}")
        sys.stderr.flush()
        os._exit(1)
