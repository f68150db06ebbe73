"""Reliability probes (issues 12 and 55), repeatable: bad inputs and broken environments, damage to the store that
the next run must heal, signals to running runs, and a hash check of every store entry they left. Prints the counts and exits 1 if any probe failed. Run from the project
root with the environment active:

    python benchmarks/reliability.py           # everything (about 2-5 minutes on 2 cores: Prefect + Ray runs)
    python benchmarks/reliability.py --quick   # without the Prefect + Ray signal probes (under a minute)

Everything runs on the toy pipeline of the test suite (tests/toy_pipeline) in throwaway projects, except
``paperdag verify`` on garbage, foreign and greedy folders, which needs the real papers. Counts:

- inputs tried / one-line errors: the expected non-zero exit code, no traceback, the last stderr line the only
  ``error: ...`` line, at most a few lines before it, and nothing written where the input was refused up front;
  ``paperdag verify`` on a folder that is no certificate of its problem: exit 1 and one ``REFUSED`` line naming the
  field (nothing on stderr); ``paperdag report`` over an unreadable or pre-v2 metrics file: exit 0 and one
  ``warning:`` line naming the file and the command that regenerates it.
- damages to the store / healed: a truncated, deleted, replaced or extra view file, a manifest that lists no files
  or has no ``files``; healed = the next run exits 0 and every view is exactly its (whole) entry again.
- new / tracking (counted with the inputs): ``paperdag new`` with quotes and backslashes in the title loads; a cached
  run tracking to a closed loopback port ends within 15 s with one warning.
- signals / clean exits / orphans: SIGINT, SIGTERM, a terminal's Ctrl-C (SIGINT to the process group) and SIGKILL
  while a stage runs or while Ray and Prefect start; clean = exit 130/143 within 10 s with one ``interrupted:``
  line (SIGKILL: exit -9); orphans = processes of the run's tree still alive 15 s later.
- store entries checked / bad: every entry with a manifest must match its file hashes; scratch left after the
  next run's sweep also counts as bad.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from paperdag.testing import NotARayHead

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
PAPERDAG = [sys.executable, "-c", "from paperdag.cli import main; main()"]
TOY = """\
toy:
  seed: 0
  n: 50
  scale_a: 1.0
  scale_b: 2.0
  sleep: SLEEP
  profiles:
    smoke:
      n: 10
toy_cluster:
  seed: 0
"""
ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
       "PAPERDAG_EXTRA_PIPELINES": "toy_pipeline.pipeline,toy_pipeline.cluster", "PAPERDAG_TRACKING": "off",
       "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", "RAY_USAGE_STATS_ENABLED": "0"}
WORK = Path(tempfile.mkdtemp(prefix="pd-reliability-"))
PROJECTS: list[Path] = []


def project(sleep: float = 0.0, params: str | None = None) -> Path:
    folder = WORK / f"p{len(PROJECTS)}"
    folder.mkdir()
    (folder / "params.yaml").write_text(params if params is not None else TOY.replace("SLEEP", str(sleep)))
    (folder / "log").mkdir()
    PROJECTS.append(folder)
    return folder


def env(folder: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, **ENV, "TOY_LOG": str(folder / "log"), **extra}


# -- bad inputs ----------------------------------------------------------------------------------------------------
def params_variant(old: str, new: str) -> str:
    text = TOY.replace("SLEEP", "0.0")
    assert old in text, old
    return text.replace(old, new)


def bad_inputs() -> list[tuple[str, list[str], dict, int, str | None, bool]]:
    """(name, args, env overrides or {"params": text, "cwd": path, "readonly": True}, expected exit, words,
    nothing-written expected)."""
    ssh, http, silent, h2 = NotARayHead("ssh"), NotARayHead("http"), NotARayHead("silent"), NotARayHead("h2")
    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    cases = [
        ("no paper", ["run"], {}, 2, "Missing argument", True),
        ("unknown option", ["run", "toy", "--bogus"], {}, 2, "No such option", True),
        ("negative retries", ["run", "toy", "--retries", "-1"], {}, 2, "--retries", True),
        ("unknown command", ["frobnicate"], {}, 2, "No such command", True),
        ("dvc without flag", ["dvc"], {}, 2, "exactly one", True),
        ("dvc both flags", ["dvc", "--write", "--check"], {}, 2, "exactly one", True),
        ("list with a paper", ["list", "toy"], {}, 2, "unexpected extra argument", True),
        ("unknown paper", ["run", "nope"], {}, 2, "unknown paper", True),
        ("unknown profile", ["run", "toy", "-p", "nope"], {}, 2, "no profile", True),
        ("unknown stage", ["run", "toy", "--only", "nope"], {}, 2, "no stage", True),
        ("unknown stage (dvc)", ["stage", "toy", "nope"], {}, 2, "no stage", True),
        ("--only with two papers", ["run", "toy", "toy_cluster", "--only", "prepare"], {}, 2, "exactly one", True),
        ("bad slug for new", ["new", "Bad-Slug"], {}, 2, "identifier", True),
        ("ui port 0", ["ui", "--port", "0"], {}, 2, "--port", True),
        ("verify without certificate", ["verify", "toy"], {}, 1, "no certificate", True),
        ("param of wrong type", ["run", "toy"], {"params": params_variant("  n: 50", "  n: fifty")}, 2, "toy.n", True),
        ("param out of range", ["run", "toy"], {"params": params_variant("  n: 50", "  n: -1")}, 2, "toy.n", True),
        ("unknown param", ["run", "toy"], {"params": params_variant("  n: 50", "  n: 50\n  m: 1")}, 2, "toy.m",
         True),
        ("missing param", ["run", "toy"], {"params": params_variant("  n: 50\n", "")}, 2, "toy.n", True),
        ("invalid YAML", ["run", "toy"], {"params": params_variant("  n: 50", "  n: [50")}, 2, "invalid YAML", True),
        ("bad overlay value", ["run", "toy", "-p", "smoke"], {"params": params_variant("      n: 10", "      n: x")},
         2, "toy.profiles.smoke.n", True),
        ("empty smoke overlay", ["run", "toy", "-p", "smoke"],
         {"params": params_variant("    smoke:\n      n: 10\n", "    smoke:\n")}, 2, "is empty", True),
        ("empty paper section", ["run", "toy"], {"params": "toy:\ntoy_cluster:\n  seed: 0\n"}, 2, "is empty", True),
        ("section of only profiles", ["run", "toy"],
         {"params": params_variant("  seed: 0\n  n: 50\n  scale_a: 1.0\n  scale_b: 2.0\n  sleep: 0.0\n", "")},
         2, "sets no params", True),
        ("params.yaml a list", ["run", "toy"], {"params": "- 1\n- 2\n"}, 2, "mapping", True),
        ("no params.yaml", ["list"], {"cwd": WORK}, 2, "no params.yaml", True),
        ("unknown artifact scheme", ["run", "toy"], {"PAPERDAG_ARTIFACT_ROOT": "foo://b/p"}, 2, "unknown scheme",
         True),
        ("read-only artifacts/", ["run", "toy", "--local"], {"readonly": True}, 2, "not writable", True),
        ("ray: closed port", ["run", "toy", "--ray-address", f"127.0.0.1:{closed_port}"], {}, 2, "unreachable",
         True),
        ("ray: silent listener", ["run", "toy", "--ray-address", f"127.0.0.1:{silent.port}"], {}, 2,
         "did not answer", True),
        ("ray: SSH server", ["run", "toy", "--ray-address", f"127.0.0.1:{ssh.port}"], {}, 2, "SSH-2.0", True),
        ("ray: HTTP server", ["run", "toy"], {"RAY_ADDRESS": f"127.0.0.1:{http.port}"}, 2, "HTTP/1.1", True),
        ("ray: not host:port", ["run", "toy", "--ray-address", "127.0.0.1:abc"], {}, 2, "host:port", True),
        ("ray: unknown host", ["run", "toy", "--ray-address", "no-such-host.invalid:6379"], {}, 2, "unknown host",
         True),
        ("ray: gRPC that never joins", ["run", "toy", "--ray-address", f"127.0.0.1:{h2.port}"],
         {"PAPERDAG_RAY_CONNECT_TIMEOUT_S": "4"}, 2, "did not accept this driver", False),
        ("ray: no port", ["run", "toy", "--ray-address", "127.0.0.1"], {}, 2, "host:port", True),
        ("ray: RAY_ADDRESS garbage", ["run", "toy"], {"RAY_ADDRESS": "garbage"}, 2, "host:port", True),
        ("ray: port out of range", ["run", "toy", "--ray-address", "127.0.0.1:99999"], {}, 2, "1-65535", True),
        ("ray: auto without a cluster", ["run", "toy"], {"RAY_ADDRESS": "auto", "RAY_TMPDIR": str(WORK / "no-ray")},
         2, "no cluster started", True),
        ("ray: connect timeout not a number", ["run", "toy", "--ray-address", f"127.0.0.1:{closed_port}"],
         {"PAPERDAG_RAY_CONNECT_TIMEOUT_S": "abc"}, 2, "PAPERDAG_RAY_CONNECT_TIMEOUT_S", True),
        ("grace not a number", ["list"], {"PAPERDAG_INTERRUPT_GRACE_S": "abc"}, 2, "PAPERDAG_INTERRUPT_GRACE_S",
         True),
        ("tracking timeout not a number", ["run", "toy", "--local"],
         {"PAPERDAG_TRACKING_TIMEOUT_S": "x", "PAPERDAG_TRACKING": "on"}, 2, "PAPERDAG_TRACKING_TIMEOUT_S", True),
        ("prefect API at a closed port (run)", ["run", "toy"],
         {"PREFECT_API_URL": f"http://127.0.0.1:{closed_port}/api"}, 2, "unreachable", True),
        ("prefect API at a closed port (serve)", ["serve"],
         {"PREFECT_API_URL": f"http://127.0.0.1:{closed_port}/api"}, 2, "unreachable", True),
        ("prefect API at a non-Prefect server (serve)", ["serve"],
         {"PREFECT_API_URL": f"http://127.0.0.1:{http.port}/api"}, 2, "not a Prefect API", True),
        ("params.yaml not UTF-8", ["run", "toy"], {"params_bytes": b"toy:\n  seed: \xff\n"}, 2, "UTF-8", True),
        ("duplicate params key", ["run", "toy"], {"params": params_variant("  n: 50", "  n: 50\n  n: 60")}, 2,
         "duplicate key", True),
        ("misspelt paper section", ["run", "toy"], {"params": TOY.replace("SLEEP", "0.0") + "toyy:\n  seed: 0\n"},
         2, "did you mean 'toy'", True),
        ("YAML alias bomb", ["run", "toy"], {"params": ALIAS_BOMB}, 2, "toy.", True),
        ("reports/ is a file", ["report"], {"setup": _reports_file}, 2, "not a folder", False),
        ("ui on a port in use", ["ui", "--port", str(BUSY.getsockname()[1])], {}, 2, "cannot serve", True),
        ("new all", ["new", "all"], {}, 2, "reserved", True),
        ("new an existing paper", ["new", "normuon"], {}, 2, "already exists", True),
        ("new with a two-line title", ["new", "demo", "--title", "a\nb"], {}, 2, "one non-empty line", True),
        ("failing stage (local)", ["run", "toy", "--local", "--retries", "0"], {"TOY_FAIL": "train_b"}, 1,
         "traceback: artifacts/.logs/toy/train_b.log", False),
        ("stage with missing upstream", ["stage", "toy", "evaluate"], {}, 1, "not built", False),
    ]
    garbage = WORK / "garbage"  # random bytes under every file name a paper's certificate folder uses
    (garbage / "models").mkdir(parents=True, exist_ok=True)
    for name in ("summary.json", "weights.safetensors", "counterexamples.parquet", "designs_verified.parquet",
                 "certificates.parquet", "certificate.json", "theorems.parquet", "proofs.parquet", "verified.parquet",
                 "models/p0.safetensors"):
        (garbage / name).write_bytes(os.urandom(512))
    (garbage / "meta.json").write_text('{"kind": ')
    real = {"cwd": ROOT, "real": True}
    for paper in ("vector_lyapunov", "pepmirror", "a2rbench", "scp_delta", "sketchrefine"):
        cases.append((f"verify {paper} on garbage", ["verify", paper, str(garbage)], real, 1,
                      "REFUSED nothing was verified", False))
    import pyarrow as pa
    import pyarrow.parquet as pq

    greedy = WORK / "greedy"  # an a2rbench certificate asking for depth 6: minutes of enumeration if not refused
    greedy.mkdir(exist_ok=True)
    pq.write_table(pa.table({"task_id": ["t"], "accepted": [True], "alphabet": [8], "max_depth": [6],
                             "property_samples": [16]}), greedy / "certificates.parquet")
    foreign = WORK / "foreign"  # another paper's table under the same file name
    foreign.mkdir(exist_ok=True)
    pq.write_table(pa.table({"seed": [0], "prompt": ["p"], "k": [0.5]}), foreign / "certificates.parquet")
    cases += [
        ("verify a2rbench beyond its budget", ["verify", "a2rbench", str(greedy)], real, 1,
         "REFUSED max_depth: the certificate asks for max_depth 6, beyond the paper's budget", False),
        ("verify a2rbench on another paper's table", ["verify", "a2rbench", str(foreign)], real, 1,
         "REFUSED task_id, accepted", False),
        ("verify scp_delta on another paper's table", ["verify", "scp_delta", str(foreign)], real, 1,
         "REFUSED certificate.json: missing", False),
        ("verify with a budget of 0", ["verify", "a2rbench", str(greedy), "--budget", "0"], real, 2, "--budget", True),
        ("verify pepmirror within a budget on garbage", ["verify", "pepmirror", str(garbage), "--budget", "1"], real,
         1, "REFUSED", False),
    ]
    repo_params = (ROOT / "params.yaml").read_text()
    cases += [
        ("normuon n_head not dividing d_model", ["run", "normuon"],
         {"params": repo_params.replace("    n_head: 4", "    n_head: 5", 1), "real": True}, 2, "n_head", True),
        ("corrupt metrics file (report)", ["report"], {"setup": _corrupt_metrics}, "warning",
         "metrics/toy.json is unreadable (JSONDecodeError); regenerate it: paperdag run toy", False),
        ("pre-v2 metrics file (report)", ["report"], {"setup": _pre_v2_metrics}, "warning",
         "metrics/toy.json is pre-v2 (claims without unit, n and plan); regenerate it: paperdag run toy", False),
        ("truncated mlflow.db, all cached", ["run", "toy", "--local"],
         {"setup": _truncated_mlflow, "PAPERDAG_TRACKING": "on"}, "ok-or-error", None, False),
    ]
    return cases


BUSY = socket.create_server(("127.0.0.1", 0))  # a port in use for the `ui` probe
ALIAS_BOMB = TOY.replace("SLEEP", "0.0").replace("toy:\n", "toy:\n  a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"  {n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, n in zip("abcdefgh", "bcdefghi")), 1)


def _reports_file(folder: Path) -> None:
    (folder / "reports").write_text("a file where the reports folder goes")


def _corrupt_metrics(folder: Path) -> None:
    subprocess.run([*PAPERDAG, "run", "toy", "--local"], cwd=folder, env=env(folder), capture_output=True, timeout=300)
    (folder / "metrics" / "toy.json").write_text('{"claims": [{"id": ')


def _pre_v2_metrics(folder: Path) -> None:
    """A metrics file as verdict model v1 wrote it: an interval claim without unit, n and plan."""
    (folder / "metrics").mkdir()
    claim = {"id": "gain", "kind": "evidence", "rule": "superiority", "verdict": "holds", "statement": "b beats a"}
    (folder / "metrics" / "toy.json").write_text(json.dumps({"key": "k", "claims": [claim]}))


def _truncated_mlflow(folder: Path) -> None:
    subprocess.run([*PAPERDAG, "run", "toy", "--local"], cwd=folder, env=env(folder, PAPERDAG_TRACKING="on"),
                   capture_output=True, timeout=300)
    db = folder / "mlflow.db"
    db.write_bytes(db.read_bytes()[:4096])


OUTCOMES = ("VERIFIED ", "REFUTED ", "REFUSED ", "UNDECIDED ")  # `paperdag verify`'s one result line (stdout)


def one_line(result: subprocess.CompletedProcess, code: int | str | None, words: str | None) -> str | None:
    """None when ``result`` is a proper one-line answer, else what is wrong with it. An ``error: ...`` line on
    stderr with exit ``code`` (None: any non-zero); ``words`` starting with an outcome (``REFUSED ...``): one
    ``paperdag verify`` result line on stdout with that outcome and the rest of ``words`` in it, nothing on stderr;
    ``code`` "warning": exit 0 with exactly one ``warning: ...`` line holding ``words``; "ok-or-error": exit 0
    without a traceback (a one-line warning at most) also passes."""
    err = result.stderr.strip()
    lines = err.splitlines()
    if code == "warning":
        warned = [l for l in lines if l.startswith("warning: ")]
        if result.returncode or "Traceback" in err or len(warned) != 1 or (words or "") not in warned[0]:
            return f"exit {result.returncode}, warnings {warned}"
        return None
    if code == "ok-or-error":
        if result.returncode == 0:
            return "traceback" if "Traceback" in err else None
        code = result.returncode
    if (code is None and result.returncode == 0) or (code is not None and result.returncode != code):
        return f"exit {result.returncode}, want {code or 'non-zero'}"
    if "Traceback" in err:
        return "traceback"
    if words and words.startswith(OUTCOMES):
        outcome, _, rest = words.partition(" ")
        shown = [l for l in result.stdout.splitlines() if l.startswith(OUTCOMES)]
        if len(shown) != 1 or not shown[0].startswith(outcome + " ") or err:
            return f"result lines {shown}, stderr {err[:200]!r}"
        return None if all(w in shown[0] for w in rest.split(": ")) else f"{rest!r} not in {shown[0]!r}"
    errors = [l for l in lines if l.startswith("error: ")]
    if len(errors) != 1 or lines[-1] != errors[0]:
        return f"{len(errors)} error lines, last: {lines[-1] if lines else ''!r}"
    if len(lines) > 12:
        return f"{len(lines)} lines of stderr"
    if len(errors[0]) > 320:
        return f"an error line of {len(errors[0])} characters"
    if words and words not in errors[0]:
        return f"{words!r} not in {errors[0]!r}"
    return None


def run_bad_inputs() -> tuple[int, int, list[str]]:
    tried = good = 0
    problems = []
    for name, args, extra, code, words, untouched in bad_inputs():
        extra = dict(extra)
        folder = project(params=extra.pop("params", None))
        if raw := extra.pop("params_bytes", None):
            (folder / "params.yaml").write_bytes(raw)
        if setup := extra.pop("setup", None):
            setup(folder)
        cwd = extra.pop("cwd", folder)
        real, readonly = extra.pop("real", False), extra.pop("readonly", False)
        run_env = env(folder, **extra)
        if real:
            run_env.pop("PAPERDAG_EXTRA_PIPELINES", None)
        command = [*PAPERDAG, *args]
        if readonly:
            (folder / "artifacts").mkdir()
            if os.geteuid() == 0:
                if not shutil.which("unshare"):
                    continue
                command = ["unshare", "-rm", "sh", "-c", 'mount --bind artifacts artifacts && mount -o remount,bind,'
                           'ro artifacts && exec "$@"', "sh", *command]
            else:
                (folder / "artifacts").chmod(0o555)
        tried += 1
        result = subprocess.run(command, cwd=cwd, env=run_env, capture_output=True, text=True, timeout=300)
        if readonly and os.geteuid() != 0:
            (folder / "artifacts").chmod(0o755)
        problem = one_line(result, code, words)
        if problem is None and untouched and cwd == folder and not readonly and (folder / "artifacts").exists():
            problem = "wrote artifacts/"
        if problem is None:
            good += 1
        else:
            problems.append(f"{name}: {problem}")
        print(f"  {'ok ' if problem is None else 'BAD'} {name}" + (f" ({problem})" if problem else ""), flush=True)
    return tried, good, problems


# -- signals -------------------------------------------------------------------------------------------------------
def descendants(pid: int, seen: dict[int, float]) -> None:
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return
    for kid in kids:
        try:
            seen.setdefault(kid.pid, kid.create_time())
        except psutil.Error:
            pass


def alive(seen: dict[int, float]) -> list[str]:
    found = []
    for pid, created in seen.items():
        try:
            p = psutil.Process(pid)
            if p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE:
                found.append(f"{pid}:{p.name()}")
        except psutil.Error:
            pass
    return found


def signal_probe(how: str, when: str, local: bool) -> tuple[bool, int, str]:
    """Start a run, signal it (``how``: SIGINT, SIGTERM, ctrl-c, SIGKILL) ``when`` (``stage``: once a stage runs;
    ``startup:<s>``: that many seconds after start); returns (clean exit, orphans, note)."""
    folder = project(sleep=3.0)
    args = ["run", "toy", *(["--local"] if local else [])]
    err = open(folder / "stderr.txt", "w")
    proc = subprocess.Popen([*PAPERDAG, *args], cwd=folder, env=env(folder), stdout=subprocess.DEVNULL, stderr=err,
                            start_new_session=True)
    seen: dict[int, float] = {}
    try:
        if when == "stage":
            end = time.monotonic() + 240
            while not any((folder / "log").glob("prepare.*")) and time.monotonic() < end and proc.poll() is None:
                descendants(proc.pid, seen)
                time.sleep(0.2)
            time.sleep(0.5)
        else:
            end = time.monotonic() + float(when.split(":")[1])
            while time.monotonic() < end:
                descendants(proc.pid, seen)
                time.sleep(0.1)
        descendants(proc.pid, seen)
        signum = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "ctrl-c": signal.SIGINT,
                  "SIGKILL": signal.SIGKILL}[how]
        t0 = time.monotonic()
        (os.killpg if how == "ctrl-c" else os.kill)(proc.pid, signum)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        took = time.monotonic() - t0
    finally:
        err.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = (folder / "stderr.txt").read_text()
    end = time.monotonic() + 15
    while (left := alive(seen)) and time.monotonic() < end:
        time.sleep(0.5)
    for pid in seen:  # leave nothing behind, whatever the result
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            pass
    if how == "SIGKILL":
        clean = code == -9
    else:
        lines = [l for l in stderr.splitlines() if l.startswith("interrupted: ")]
        clean = code == 128 + signum and took < 10 and len(lines) == 1 and "Traceback" not in stderr
    note = f"exit {code} after {took:.1f}s, {len(seen)} helper processes"
    return clean, len(left), note


def run_signals(quick: bool) -> tuple[int, int, int, list[str]]:
    probes = [("SIGINT", "stage", True), ("SIGTERM", "stage", True), ("ctrl-c", "stage", True)]
    if not quick:
        probes += [("SIGINT", "stage", False), ("SIGTERM", "stage", False), ("ctrl-c", "stage", False),
                   ("SIGKILL", "stage", False), ("SIGTERM", "startup:3", False), ("SIGINT", "startup:6", False),
                   ("SIGKILL", "startup:5", False)]
    sent = clean = orphans = 0
    problems = []
    for how, when, local in probes:
        ok, left, note = signal_probe(how, when, local)
        sent += 1
        clean += ok
        orphans += left
        name = f"{how} {'local' if local else 'Prefect+Ray'} at {when}"
        print(f"  {'ok ' if ok and not left else 'BAD'} {name}: {note}, {left} orphans", flush=True)
        if not ok or left:
            problems.append(f"{name}: {note}, {left} orphans")
    return sent, clean, orphans, problems


# -- healing ---------------------------------------------------------------------------------------------------------
def _damage(folder: Path, how: str) -> None:
    """Damage a computed toy project's store the way users and crashes do."""
    view = folder / "artifacts" / "toy"
    target = view / "prepare" / "data.parquet"
    if how == "truncated view file":
        target.chmod(0o644)
        os.truncate(target, 7)
    elif how == "deleted view file":
        (view / "train_a" / "model.parquet").unlink()
    elif how == "view file replaced":
        data = (view / "evaluate" / "metrics.json").read_bytes()
        (view / "evaluate" / "metrics.json").unlink()
        (view / "evaluate" / "metrics.json").write_bytes(data.replace(b"twice a", b"twice A"))
    elif how == "extra file in a view":
        (view / "prepare" / "notes.txt").write_text("not the stage's")
    else:
        manifest = view / "prepare" / "manifest.json"
        doc = json.loads(manifest.read_text())
        doc = doc | {"files": {}} if how == "manifest lists no files" else {k: v for k, v in doc.items() if k != "files"}
        manifest.chmod(0o644)
        manifest.write_text(json.dumps(doc))  # the view's manifest is the entry's (a hard link)


def run_heals() -> tuple[int, int, list[str]]:
    """Each damage in a fresh computed project, then a run: it must exit 0 and leave every view exactly its entry
    (the same files, hard links) and every entry whole; returns (damages tried, healed, problems)."""
    from paperdag.store import MANIFEST, Store, manifest_problem, view_differences

    damages = ["truncated view file", "deleted view file", "view file replaced", "extra file in a view",
               "manifest lists no files", "manifest without files"]
    healed, problems = 0, []
    for how in damages:
        folder = project()
        subprocess.run([*PAPERDAG, "run", "toy", "--local"], cwd=folder, env=env(folder), capture_output=True,
                       timeout=300)
        _damage(folder, how)
        result = subprocess.run([*PAPERDAG, "run", "toy", "--local"], cwd=folder, env=env(folder),
                                capture_output=True, text=True, timeout=300)
        store, wrong = Store(folder / "artifacts", folder / "artifacts"), []
        for view in sorted((folder / "artifacts" / "toy").iterdir()):
            manifest = json.loads((view / MANIFEST).read_text())
            entry = store.local_path("toy", view.name, manifest["key"])
            if manifest_problem(manifest, manifest["key"]) or store.lookup("toy", view.name, manifest["key"]) is None:
                wrong.append(f"{view.name}: entry not whole")
            wrong += [f"{view.name}: {d}" for d in view_differences(entry, view, manifest.get("files", {}))]
        ok = result.returncode == 0 and not wrong
        healed += ok
        note = f"exit {result.returncode}" + (f", {'; '.join(wrong[:3])}" if wrong else "")
        print(f"  {'ok ' if ok else 'BAD'} {how}: {note}", flush=True)
        if not ok:
            problems.append(f"heal {how}: {note}")
    return len(damages), healed, problems


def run_new_with_any_title() -> tuple[int, int, list[str]]:
    """``paperdag new`` with quotes and backslashes in the title, in a copy of the project: the package it writes
    must load (``list`` exits 0 and shows the title as given)."""
    copy = WORK / "newproj"
    for name in ("src", "tests"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(ROOT / "params.yaml", copy / "params.yaml")
    title = 'A "quoted" \\ title with \'\'\' and """'
    run_env = {**os.environ, "PYTHONPATH": str(copy / "src"), "PAPERDAG_TRACKING": "off"}
    new = subprocess.run([*PAPERDAG, "new", "demo_paper", "--title", title], cwd=copy, env=run_env,
                         capture_output=True, text=True, timeout=120)
    shown = subprocess.run([sys.executable, "-c", "from paperdag.dag import get_pipeline; "
                            "print(get_pipeline('demo_paper').title, end='')"], cwd=copy, env=run_env,
                           capture_output=True, text=True, timeout=120)
    ok = new.returncode == 0 and shown.stdout == title
    note = f"new exit {new.returncode}, title read back {shown.stdout!r}"
    print(f"  {'ok ' if ok else 'BAD'} new with a quoted title: {note}", flush=True)
    return 1, int(ok), [] if ok else [f"new with a quoted title: {note}"]


def run_tracking_unreachable() -> tuple[int, int, list[str]]:
    """A cached run tracking to a closed loopback port: exit 0 within 15 s with one warning line."""
    folder = project()
    subprocess.run([*PAPERDAG, "run", "toy", "--local"], cwd=folder, env=env(folder), capture_output=True, timeout=300)
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    t0 = time.monotonic()
    result = subprocess.run([*PAPERDAG, "run", "toy", "--local"], cwd=folder, capture_output=True, text=True,
                            env=env(folder, PAPERDAG_TRACKING="on", MLFLOW_TRACKING_URI=f"http://127.0.0.1:{port}"),
                            timeout=600)
    took = time.monotonic() - t0
    warnings = [l for l in result.stderr.splitlines() if l.startswith("warning: ")]
    ok = result.returncode == 0 and len(warnings) == 1 and took < 15
    note = f"exit {result.returncode} after {took:.1f}s, {len(warnings)} warning lines"
    print(f"  {'ok ' if ok else 'BAD'} cached run, tracking server at a closed port: {note}", flush=True)
    return 1, int(ok), [] if ok else [f"tracking unreachable: {note}"]


# -- the store -----------------------------------------------------------------------------------------------------
def check_store() -> tuple[int, int, list[str]]:
    """After a sweeping run in each probe project, hash-check every entry and count leftover scratch."""
    from paperdag.store import MANIFEST, Store

    checked = bad = 0
    problems = []
    for folder in PROJECTS:
        base = folder / "artifacts" / ".store"
        if not base.is_dir():
            continue
        store = Store(folder / "artifacts", folder / "artifacts")
        store.sweep()  # what the next run does first
        for stage_dir in base.glob("*/*"):
            for entry in stage_dir.iterdir():
                checked += 1
                if entry.name.startswith("."):
                    bad += 1
                    problems.append(f"scratch left: {entry}")
                elif (entry / MANIFEST).is_file() and store.lookup(stage_dir.parent.name, stage_dir.name,
                                                                   entry.name) is None:
                    bad += 1
                    problems.append(f"entry does not match its manifest: {entry}")
    return checked, bad, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the Prefect + Ray signal probes")
    quick = parser.parse_args().quick
    t0 = time.monotonic()
    try:
        print("bad inputs:", flush=True)
        tried, good, p1 = run_bad_inputs()
        print("healing:", flush=True)
        damages, healed, p4 = run_heals()
        print("new, tracking:", flush=True)
        others = [run_new_with_any_title(), run_tracking_unreachable()]
        tried += sum(o[0] for o in others)
        good += sum(o[1] for o in others)
        p1 += [p for o in others for p in o[2]]
        print("signals:", flush=True)
        sent, clean, orphans, p2 = run_signals(quick)
        checked, bad, p3 = check_store()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    print(f"\ninputs tried / one-line errors:          {tried} / {good}")
    print(f"damages to the store / healed:           {damages} / {healed}")
    print(f"signals / clean exits / orphans:         {sent} / {clean} / {orphans}")
    print(f"store entries checked / bad:             {checked} / {bad}")
    print(f"({time.monotonic() - t0:.0f} s)")
    for problem in p1 + p4 + p2 + p3:
        print(f"  {problem}")
    return 1 if p1 or p2 or p3 or p4 else 0


if __name__ == "__main__":
    sys.exit(main())
