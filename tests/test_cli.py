"""The command line: one-line errors with the right exit codes, nothing written on bad input; dvc.yaml in sync;
the science packages free of orchestration imports and cheap to declare."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, paperdag

PAPERS = REPO / "src" / "paperdag" / "papers"
ORCHESTRATION = {"prefect", "ray", "mlflow", "dvc", "tasks", "flows"}


def _one_line_error(result, code: int) -> str:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("args, code, words", [
    (["run", "no_such_paper"], 2, "unknown paper 'no_such_paper'"),
    (["run", "toy", "--profile", "nope"], 2, "no profile 'nope'"),
    (["run", "toy", "--only", "nope"], 2, "has no stage 'nope'"),
    (["stage", "toy", "nope"], 2, "has no stage 'nope'"),
    (["verify", "toy"], 1, "no certificate"),
    (["run"], 2, "Missing argument"),
    (["run", "toy", "--bogus-option"], 2, "No such option: --bogus-option"),
    (["run", "toy", "--retries", "-1"], 2, "--retries"),
    (["frobnicate"], 2, "No such command 'frobnicate'"),
    (["dvc"], 2, "exactly one of --write, --check or --commit"),
    (["dvc", "--write", "--check"], 2, "exactly one of --write, --check or --commit"),
    (["dvc", "--check", "toy"], 2, "papers are named only with --commit"),
    (["new", "Bad-Slug"], 2, "lowercase Python identifier"),
    (["new", "match"], 2, "not a Python keyword"),
    (["new", "all"], 2, "reserved"),
    (["new", "normuon"], 2, "paper 'normuon' already exists"),
    (["new", "demo", "--title", "two\nlines"], 2, "one non-empty line"),
    (["new", "demo"], 2, "has no src/paperdag/papers"),
    (["list", "toy"], 2, "unexpected extra argument"),
    (["ui", "--port", "0"], 2, "--port"),
])
def test_bad_input_is_a_one_line_error(toy_project, args, code, words):
    assert words in _one_line_error(paperdag(*args, cwd=toy_project.root), code)
    assert not (toy_project.root / "artifacts").exists()


def test_version_and_exit_codes_of_commands(toy_project):
    version = paperdag("--version", cwd=toy_project.root)
    assert version.returncode == 0 and version.stdout.startswith("paperdag ")
    assert paperdag("run", "toy", "--local", cwd=toy_project.root, env={"TOY_FAIL": "evaluate"}).returncode == 1


@pytest.mark.parametrize("bad, words", [
    ("  n: not-a-number", "toy.n: Input should be a valid integer"),
    ("  n: -3", "toy.n: Input should be greater than or equal to 1"),
    ("  n: 50\n  nn: 3", "toy.nn: Extra inputs are not permitted"),
    ("  n: [1", "invalid YAML"),
])
def test_bad_params_exit_2_and_write_nothing(toy_project, bad, words):
    params = toy_project.params_path
    params.write_text(params.read_text().replace("  n: 50", bad, 1))
    line = _one_line_error(paperdag("run", "toy", cwd=toy_project.root), 2)
    assert words in line and "params.yaml" in line
    assert not (toy_project.root / "artifacts").exists() and not (toy_project.root / "metrics").exists()


def test_bad_profile_overlay_is_named(toy_project):
    params = toy_project.params_path
    params.write_text(params.read_text().replace("      n: 10", "      n: ten"))
    assert "toy.profiles.smoke.n" in _one_line_error(paperdag("run", "toy", "-p", "smoke", cwd=toy_project.root), 2)


@pytest.mark.parametrize("old, new, words", [
    ("    smoke:\n      n: 10\n", "    smoke:\n", "toy.profiles.smoke is empty"),
    ("    smoke:\n      n: 10\n", "    smoke: {}\n", "toy.profiles.smoke is empty"),
    ("toy:\n  seed: 0\n  n: 50\n  scale_a: 1.0\n  scale_b: 2.0\n  sleep: 0.0\n", "toy:\n",
     "section for paper 'toy' sets no params"),
])
def test_an_empty_overlay_or_section_is_an_error_not_a_full_run(toy_project, old, new, words):
    params = toy_project.params_path
    assert old in params.read_text()
    params.write_text(params.read_text().replace(old, new))
    assert words in _one_line_error(paperdag("run", "toy", "-p", "smoke", cwd=toy_project.root), 2)
    assert not (toy_project.root / "artifacts").exists()


def test_an_empty_paper_section_is_an_error(toy_project):
    params = toy_project.params_path
    params.write_text("toy:\ntoy_cluster:\n  seed: 0\n")
    assert "section for paper 'toy' is empty" in _one_line_error(paperdag("run", "toy", cwd=toy_project.root), 2)


GARBAGE = ("meta.json", "summary.json", "weights.safetensors", "counterexamples.parquet", "designs_verified.parquet",
           "certificates.parquet", "certificate.json", "theorems.parquet", "proofs.parquet", "verified.parquet",
           "models/p0.safetensors")  # every file name a paper's certificate folder uses, each holding random bytes


@pytest.mark.parametrize("paper", ["vector_lyapunov", "pepmirror", "a2rbench", "scp_delta", "sketchrefine"])
def test_verify_on_a_folder_of_garbage_is_refused_in_one_line_with_exit_1(tmp_path, paper):
    from paperdag.extras import missing_packages

    if missing_packages(paper):
        pytest.skip(f"paperdag[{paper}] is not installed")
    garbage = tmp_path / "garbage"
    (garbage / "models").mkdir(parents=True)
    for name in GARBAGE:
        (garbage / name).write_bytes(os.urandom(512))
    (garbage / "meta.json").write_text('{"kind": ')
    env = {k: v for k, v in os.environ.items() if k != "PAPERDAG_EXTRA_PIPELINES"}
    result = subprocess.run([sys.executable, "-c", "from paperdag.cli import main; main()", "verify", paper,
                             str(garbage)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = [l for l in (result.stdout + result.stderr).splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("REFUSED ") and "nothing was verified" in lines[0], lines


def _closed_port() -> int:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


@pytest.mark.parametrize("args, env, words", [
    (["run", "toy", "--local"], {"PAPERDAG_INTERRUPT_GRACE_S": "abc"}, "PAPERDAG_INTERRUPT_GRACE_S='abc'"),
    (["list"], {"PAPERDAG_INTERRUPT_GRACE_S": "-1"}, "not a positive number of seconds"),
    (["run", "toy", "--ray-address", "127.0.0.1:6379"], {"PAPERDAG_RAY_CONNECT_TIMEOUT_S": "abc"},
     "PAPERDAG_RAY_CONNECT_TIMEOUT_S"),
    (["run", "toy", "--local"], {"PAPERDAG_TRACKING_TIMEOUT_S": "0", "PAPERDAG_TRACKING": "on"},
     "PAPERDAG_TRACKING_TIMEOUT_S"),
    (["run", "toy"], {"RAY_ADDRESS": "garbage"}, "is not host:port"),
    (["run", "toy", "--ray-address", "127.0.0.1"], {}, "is not host:port"),
    (["run", "toy", "--ray-address", "127.0.0.1:99999"], {}, "port in 1-65535"),
    (["run", "toy"], {"RAY_ADDRESS": "auto", "RAY_TMPDIR": "/nonexistent-paperdag"}, "no cluster started with"),
    (["run", "toy"], {"PREFECT_API_URL": "http://127.0.0.1:CLOSED/api"}, "is unreachable"),
    (["serve"], {"PREFECT_API_URL": "http://127.0.0.1:CLOSED/api"}, "is unreachable"),
])
def test_a_broken_environment_is_one_line_and_exit_2(toy_project, args, env, words):
    env = {k: v.replace("CLOSED", str(_closed_port())) for k, v in env.items()}
    assert words in _one_line_error(paperdag(*args, cwd=toy_project.root, env=env), 2)
    assert not (toy_project.root / "artifacts" / ".store").exists()


def test_an_unreachable_tracking_server_is_one_warning_and_the_run_goes_on(toy_project):
    assert paperdag("run", "toy", "--local", cwd=toy_project.root).returncode == 0
    env = {"PAPERDAG_TRACKING": "on", "MLFLOW_TRACKING_URI": f"http://127.0.0.1:{_closed_port()}"}
    t0 = time.monotonic()
    result = paperdag("run", "toy", "--local", cwd=toy_project.root, env=env)
    took = time.monotonic() - t0
    assert result.returncode == 0, result.stderr
    warnings = [l for l in result.stderr.splitlines() if l.startswith("warning: MLflow tracking off")]
    assert len(warnings) == 1 and "no tracking server answers" in warnings[0], result.stderr
    assert took < 60, f"{took:.0f}s: MLflow's own retries were not bounded"  # they took ~4 minutes


def test_a_server_that_is_not_prefect_is_named(toy_project):
    import http.server
    import threading

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {"PREFECT_API_URL": f"http://127.0.0.1:{server.server_port}/api"}
        assert "is not a Prefect API" in _one_line_error(paperdag("serve", cwd=toy_project.root, env=env), 2)
    finally:
        server.shutdown()


def test_ui_on_a_port_in_use_is_refused(toy_project):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = str(busy.getsockname()[1])
        assert "cannot serve on 127.0.0.1:" in _one_line_error(paperdag("ui", "--port", port, cwd=toy_project.root), 2)


def test_reports_that_is_a_file_is_one_line(toy_project):
    (toy_project.root / "reports").write_text("not a folder")
    assert "is not a folder" in _one_line_error(paperdag("report", cwd=toy_project.root), 2)


@pytest.mark.parametrize("text, words", [
    (b"toy:\n  seed: \xff\n", "not UTF-8 text"),
    (b"toy:\n  seed: 0\n  seed: 1\n", "duplicate key 'seed'"),
    (b"toy:\n  seed: 0\ntoyy:\n  seed: 0\n", "section 'toyy' is no paper; did you mean 'toy'?"),
])
def test_params_file_problems_are_named(toy_project, text, words):
    toy_project.params_path.write_bytes(text)
    assert words in _one_line_error(paperdag("run", "toy", cwd=toy_project.root), 2)


def test_a_yaml_alias_bomb_gives_a_short_line(toy_project):
    bomb = "  a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"  {n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, n in zip("abcdefgh", "bcdefghi"))
    text = toy_project.params_path.read_text()
    toy_project.params_path.write_text(text.replace("toy:\n", "toy:\n" + bomb, 1))  # 9^9 leaves behind "i"
    line = _one_line_error(paperdag("run", "toy", cwd=toy_project.root), 2)
    assert line.startswith("error: ") and "toy." in line and len(line) <= 320


def test_a_declaration_that_does_not_parse_names_its_paper(toy_project, tmp_path):
    broken = tmp_path / "broken_pkg"
    broken.mkdir()
    (broken / "__init__.py").write_text("")
    (broken / "pipeline.py").write_text('PIPELINE = Pipeline(title="A "quoted" title")\n')
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "PAPERDAG_EXTRA_PIPELINES": os.environ.get("PAPERDAG_EXTRA_PIPELINES", "") + ",broken_pkg.pipeline"}
    line = _one_line_error(paperdag("list", cwd=toy_project.root, env=env), 2)
    assert "does not parse" in line and "pipeline.py line 1" in line


def test_outside_a_project(tmp_path):
    assert "no params.yaml" in _one_line_error(paperdag("list", cwd=tmp_path), 2)


def test_dvc_yaml_matches_the_declarations():
    env = {k: v for k, v in os.environ.items() if k != "PAPERDAG_EXTRA_PIPELINES"}
    result = subprocess.run([sys.executable, "-c", "from paperdag.cli import main; main()", "dvc", "--check"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_dvc_check_detects_drift(toy_project):
    assert paperdag("dvc", "--write", cwd=toy_project.root).returncode == 0
    assert paperdag("dvc", "--check", cwd=toy_project.root).returncode == 0
    dvc_yaml = toy_project.root / "dvc.yaml"
    dvc_yaml.write_text(dvc_yaml.read_text().replace("toy.scale_a", "toy.scale_z"))
    assert "out of date" in _one_line_error(paperdag("dvc", "--check", cwd=toy_project.root), 1)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    return {n.split(".")[0] for n in names}


def test_science_packages_import_no_orchestration():
    offenders = {str(p.relative_to(REPO)): _imports(p) & ORCHESTRATION for p in PAPERS.rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_report_warns_on_stderr_and_in_the_row_of_an_unreadable_or_pre_v2_metrics_file(toy_project):
    """A truncated metrics file and one whose interval claims carry no unit, n and plan (pre-v2) are each a
    ``warning:`` line on stderr naming the file and the command that regenerates it; their rows say the same, and
    the report is still written (exit 0). A v2 file or a paper not run yet warns nothing."""
    import json

    metrics = toy_project.root / "metrics"
    metrics.mkdir()
    (metrics / "toy.json").write_text('{"claims": [')
    claim = {"id": "gain", "kind": "evidence", "rule": "superiority", "verdict": "holds", "statement": "s"}
    (metrics / "toy_cluster.json").write_text(json.dumps({"key": "k", "claims": [claim]}))
    result = paperdag("report", cwd=toy_project.root)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: metrics/toy.json is unreadable (JSONDecodeError); regenerate it: paperdag run toy",
                        "warning: metrics/toy_cluster.json is pre-v2 (claims without unit, n and plan); regenerate "
                        "it: paperdag run toy_cluster"], result.stderr
    summary = (toy_project.root / "reports" / "summary.md").read_text()
    for line in warnings:
        assert line.removeprefix("warning: ") in summary
    (metrics / "toy_cluster.json").write_text(json.dumps(
        {"key": "k", "claims": [claim | {"unit": "seed", "n": 10, "plan": {"planned_n": 10}}]}))
    (metrics / "toy.json").unlink()
    assert "warning:" not in paperdag("report", cwd=toy_project.root).stderr


def test_a_long_verification_reports_progress_from_a_thread_and_stops_at_its_budget():
    """Progress lines come from a thread at the set interval (so a single long step still reports), naming the unit
    and the count; the budget stops the re-check before its next unit, naming itself."""
    from paperdag.verification import BudgetSpent, Work

    lines: list[str] = []
    with Work("demo verify", budget=3, every=0.05, echo=lines.append) as work:
        work.doing("re-deriving the constants")
        time.sleep(0.25)  # one long step: still reported
        done = []
        with pytest.raises(BudgetSpent, match=r"--budget 3 spent: 3 of 5 proofs re-checked"):
            for item in work.each(range(5), "proofs"):
                time.sleep(0.25)
                done.append(item)
    assert done == [0, 1, 2]
    assert lines[0].startswith("[demo verify] re-deriving the constants (")
    assert any(line.startswith("[demo verify] proofs 1/5 (") for line in lines), lines
    count = len(lines)
    time.sleep(0.2)
    assert len(lines) == count  # the thread ends with the re-check
