"""How a ``paperdag`` process ends: a signal becomes one exception and one line, and nothing it started outlives it.

Signals. ``install_signal_handlers`` (called by the CLI's ``main``) makes SIGINT and SIGTERM raise ``Interrupted``
in the main thread, which unwinds the scheduling loop (in-flight Ray tasks are cancelled, finished stages stay
cached) and ends in one ``interrupted: ...`` line with exit code 130 / 143. Python runs a signal handler only when
the main thread returns to the interpreter, which a blocking call inside Ray or Prefect may not do for minutes, so
the signal is also written to a wakeup socket (``signal.set_wakeup_fd``) that a thread watches: if the process has
not ended ``GRACE_S`` seconds after the first signal, that thread prints the line and ends it at once (the
watchdog below then stops whatever it had started).

Helpers. ``start_watchdog`` tags this process's environment with ``PAPERDAG_LIFETIME=<id>`` (every process it
starts inherits it: Prefect's temporary API server, Ray's GCS, raylet, agents and workers) and starts a small
watchdog process in a session of its own. When the driver is gone, however it ended (SIGKILL included), the
watchdog terminates every process that still carries the tag, then exits. Linux only (it reads ``/proc``);
elsewhere it does nothing.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from paperdag.errors import Interrupted, env_seconds

TAG = "PAPERDAG_LIFETIME"
GRACE_S = [6.0]  # PAPERDAG_INTERRUPT_GRACE_S, read (and validated) when the handlers are installed
SIGNALS = (signal.SIGINT, signal.SIGTERM)

_received: list[int] = []  # the first interrupting signal (recorded by the handler or the wakeup thread)
_seen = threading.Event()  # set when it is recorded
_announced = threading.Event()  # the ``interrupted:`` line was printed
_installed = False
_raised = False  # the handler raised ``Interrupted`` once already (later signals do not interrupt the unwinding)
_keep: list[socket.socket] = []  # the wakeup socket pair
_stderr_fd: list[int] = []  # a duplicate of the stderr this process started with


def received(wait_s: float = 0.0) -> int | None:
    """The first interrupting signal this process received, if any (waiting up to ``wait_s`` for the wakeup thread
    to record one that arrived while a library's handler was installed)."""
    if not _received and wait_s > 0 and _installed:
        _seen.wait(wait_s)
    return _received[0] if _received else None


def interrupted_line(signum: int) -> str:
    name = signal.Signals(signum).name
    return (f"interrupted: {name}; finished stages stay cached, unfinished ones were stopped and count for nothing "
            f"(rerun to continue)")


def announce(signum: int) -> None:
    """Print the ``interrupted:`` line, once per process (to the stderr the process started with, even while a
    library has file descriptor 2 redirected)."""
    if not _announced.is_set():
        _announced.set()
        try:
            sys.stderr.flush()
            os.write(_stderr_fd[0] if _stderr_fd else 2, (interrupted_line(signum) + "\n").encode())
        except (OSError, ValueError):
            pass


def _hard_exit(signum: int) -> None:
    announce(signum)
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    os._exit(128 + signum)


def _handler(signum: int, frame: object) -> None:
    global _raised
    if not _received:
        _received.append(signum)
        _seen.set()
    if _raised:
        return  # already unwinding; the wakeup thread ends the process if that takes too long
    _raised = True
    raise Interrupted(received() or signum)


def _watch_wakeups(sock: socket.socket) -> None:
    """Runs in a daemon thread: sees each signal as it arrives, even while the main thread is stuck in C code, and
    ends the process if the graceful path takes longer than ``GRACE_S``."""
    deadline = None
    while True:
        sock.settimeout(None if deadline is None else max(0.01, deadline - time.monotonic()))
        try:
            data = sock.recv(64)
        except TimeoutError:
            _hard_exit(received() or signal.SIGTERM)
            return
        except OSError:
            return
        for signum in data:
            if signum in SIGNALS:
                if not _received:
                    _received.append(signum)
                    _seen.set()
                if deadline is None:
                    deadline = time.monotonic() + GRACE_S[0]


def install_signal_handlers() -> None:
    """SIGINT (unless the parent made this process ignore it) and SIGTERM raise ``Interrupted``; a signal the
    process does not act on within ``GRACE_S`` seconds ends it. Main thread only; once per process."""
    global _installed
    GRACE_S[0] = env_seconds("PAPERDAG_INTERRUPT_GRACE_S", GRACE_S[0])
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    _installed = True
    try:
        _stderr_fd.append(os.dup(2))
    except OSError:
        pass
    for signum in SIGNALS:
        if signum == signal.SIGINT and signal.getsignal(signum) == signal.SIG_IGN:
            continue
        signal.signal(signum, _handler)
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    try:
        signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except (ValueError, OSError):
        return
    _keep.extend((reader, writer))
    threading.Thread(target=_watch_wakeups, args=(reader,), name="paperdag-signals", daemon=True).start()



def exit_interrupted(signum: int) -> None:
    """End an interrupted process: the ``interrupted:`` line, the exit hooks (Ray's shutdown, Prefect's server
    stop), then exit 128 + signum without the interpreter's slow teardown (seconds with Ray's core worker loaded)."""
    import atexit

    announce(signum)
    try:
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - leaving anyway; the watchdog stops what a failed hook left running
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(128 + signum)


def cli_driver() -> bool:
    """True in a process whose signals the CLI handles (so it may end the process when a call cannot be bounded)."""
    return _installed


def fail_now(line: str, code: int, fd: int = 2) -> None:
    """Write one line to ``fd`` (stderr) and end the process at once (for a library call that blocks beyond any
    bound)."""
    try:
        sys.stdout.flush()
        os.write(fd, (line + "\n").encode())
    except (OSError, ValueError):
        pass
    os._exit(code)


def restore_handlers() -> None:
    """Reinstall the interrupt handlers where a library replaced them (``ray.init`` installs a SIGTERM handler that
    exits with status 15)."""
    if _installed and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _handler)


# -- helper processes ----------------------------------------------------------------------------------------------
def _stat(pid: int | str) -> tuple[int, str, str] | None:
    """(parent pid, start time in clock ticks, state) from /proc/<pid>/stat; pid plus start time names one process,
    even after its pid is reused."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[19], fields[0]


def _start_ticks(pid: int) -> str | None:
    stat = _stat(pid)
    return None if stat is None else stat[1]


def _alive(pid: int, ticks: str | None = None) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[2] != "Z" and (ticks is None or stat[1] == ticks)


def _table() -> dict[int, tuple[int, str, str]]:
    """Every process: pid -> (parent pid, start ticks, state)."""
    table = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (stat := _stat(entry.name)) is not None:
            table[int(entry.name)] = stat
    return table


def _descendants(roots: set[int], table: dict[int, tuple[int, str, str]]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def tagged(tag: str) -> list[int]:
    """Pids of the live processes whose environment carries ``PAPERDAG_LIFETIME=tag`` (same user only)."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = Path(entry.path, "environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0") and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def start_watchdog() -> str | None:
    """Tag this process's environment and start the watchdog that stops this process's helpers once it is gone.
    Returns the tag (None where there is no /proc). Idempotent."""
    if TAG in os.environ and os.environ.get("PAPERDAG_LIFETIME_PID") == str(os.getpid()):
        return os.environ[TAG]
    ticks = _start_ticks(os.getpid())
    if ticks is None:
        return None
    tag = uuid.uuid4().hex
    os.environ[TAG] = tag
    os.environ["PAPERDAG_LIFETIME_PID"] = str(os.getpid())
    subprocess.Popen([sys.executable, "-m", "paperdag.lifetime", str(os.getpid()), ticks, tag],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True)
    return tag


def _terminate(victims: dict[int, str], wait_s: float = 3.0) -> None:
    """SIGTERM each (pid, start ticks) still alive, SIGKILL what is left after ``wait_s``."""
    for sig, pause in ((signal.SIGTERM, wait_s), (signal.SIGKILL, 0.0)):
        for pid, ticks in victims.items():
            if _alive(pid, ticks):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        end = time.monotonic() + pause
        while time.monotonic() < end and any(_alive(p, t) for p, t in victims.items()):
            time.sleep(0.1)


def watch(driver: int, ticks: str, tag: str, poll_s: float = 0.2, snapshot_s: float = 1.0) -> None:
    """The watchdog. While the driver lives, remember its descendants (Ray's agents are started by the raylet
    without the driver's environment, so the tag alone does not find them); once it is gone, stop every remembered
    process still alive, every process carrying the tag, and their descendants (repeated for processes that were
    starting while a pass ran)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    seen: dict[int, str] = {}
    last = 0.0
    while _alive(driver, ticks):
        if time.monotonic() - last >= snapshot_s:
            last = time.monotonic()
            table = _table()
            for pid in _descendants({driver}, table) - {os.getpid()}:
                seen.setdefault(pid, table[pid][1])
        time.sleep(poll_s)
    for _ in range(3):
        table = _table()
        roots = {p for p, t in seen.items() if p in table and table[p][1] == t} | set(tagged(tag))
        victims = {p: table[p][1] for p in roots | _descendants(roots, table)
                   if p in table and p != os.getpid() and table[p][2] != "Z"}
        if not victims:
            return
        _terminate(victims)
        time.sleep(0.5)


if __name__ == "__main__":
    watch(int(sys.argv[1]), sys.argv[2], sys.argv[3])
