"""`paperdag report` renders claims and plots offline; `paperdag serve`'s deployments carry their cron schedules."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, paperdag
from paperdag.errors import ParamsError, UsageError
from paperdag.runs import Execution, drive


def test_report_lists_claims_with_verdicts(toy_project):
    drive(Execution.open(["toy"], track=False))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    page = (toy_project.root / "reports/index.html").read_text()
    assert "Toy pipeline" in page and "b is twice a" in page and "<span class='holds'>holds</span>" in page
    assert "not run yet" in page  # toy_cluster has no metrics
    assert "<td>evidence holds / fails / inconclusive</td>" in page.replace("<th>", "<td>").replace("</th>", "</td>")
    assert "Regime reached: all 1 preconditions hold." in page and "<svg" in page
    summary = (toy_project.root / "reports/summary.md").read_text()
    assert "| holds | `ratio` b is twice a | 2 | 2 | exact |" in summary
    assert "| toy | 1 / 0 / 0 | - | 0/0 | 1/1 | yes | - | no gpu run committed yet | default |" in summary
    assert (toy_project.root / "reports/plots/verdicts.svg").read_text().startswith("<svg")


def test_report_shows_inconclusive_evidence_with_the_failed_precondition(toy_project):
    drive(Execution.open(["toy"], track=False))
    path = toy_project.metrics_path("toy")
    doc = json.loads(path.read_text())
    pre, ev = doc["claims"]
    pre |= {"verdict": "fails", "holds": False, "reason": "sum_abs_a 0 is not above 0"}
    ev |= {"verdict": "inconclusive", "holds": False, "reason": "precondition a_is_nonzero fails",
           "cause": "precondition"}
    path.write_text(json.dumps(doc | {"evidence_holding": 0, "evidence_inconclusive": 1, "preconditions_holding": 0}))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    page = (toy_project.root / "reports/index.html").read_text()
    assert "<span class='inconclusive'>inconclusive</span>" in page and "Regime not reached: a_is_nonzero fails" in page
    summary = (toy_project.root / "reports/summary.md").read_text()
    assert ("| toy | 0 / 0 / 1 | 1 precondition | 0/0 | 0/1 | no: 0/1 hold (a_is_nonzero) | - | no gpu run committed "
            "yet | default |") in summary
    assert "| _inconclusive_ | `ratio` b is twice a — precondition a_is_nonzero fails |" in summary


def test_report_shows_units_plans_ladders_and_whether_each_verdict_replicated(toy_project):
    drive(Execution.open(["toy"], track=False))
    path = toy_project.metrics_path("toy")
    doc = json.loads(path.read_text())
    pre, ev = doc["claims"]
    plan = {"planned_n": 10, "basis": "budget", "pilot_n": 0, "looks": 2}
    ev |= {"rule": "superiority", "unit": "seed", "n": 10, "plan": plan}
    pre |= {"baseline": "KN 4-gram", "ladder": [{"baseline": "KN 4-gram", "value": 1.42},
                                                {"baseline": "KN 3-gram", "value": 1.84}]}
    params = toy_project.params_path
    params.write_text(params.read_text().replace("      n: 10\n", "      n: 10\n    replicate:\n      seed: 1\n", 1))
    assert paperdag("run", "toy", "--replicate", "--local", cwd=toy_project.root).returncode == 0
    path.write_text(json.dumps(doc))
    replicate = toy_project.metrics_path("toy", "replicate")
    again = json.loads(replicate.read_text())  # the replicate of this code: its key is the one --replicate computes
    replicate.write_text(json.dumps(again | {"claims": [pre, ev | {"verdict": "inconclusive"}]}))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    summary = (toy_project.root / "reports/summary.md").read_text()
    assert "| holds (replicated: no (replicate: inconclusive)) | `ratio` b is twice a | 2 | 2 | " \
           "10 seeds (plan 10, budget; 2 looks) |" in summary
    assert "(vs KN 4-gram 1.42; next KN 3-gram 1.84)" in summary and "holds (replicated: yes)" in summary
    assert "| yes | 1/2 | no gpu run committed yet | default |" in summary  # the row counts the replicated verdicts
    # a replicate of other code or params (another metrics key) is not compared with today's verdicts
    replicate.write_text(json.dumps(again | {"key": "0" * len(again["key"]), "claims": [pre, ev]}))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    summary = (toy_project.root / "reports/summary.md").read_text()
    assert "replicated:" not in summary and "| yes | - | no gpu run committed yet | default |" in summary


def test_report_shows_the_gpu_verdicts_beside_the_default_ones(toy_project):
    """metrics/profiles/gpu/<paper>.json, where committed, is a column of the summary and a line per paper: evidence,
    preconditions, regime and device, marked stale once the gpu profile's code or params moved on; elsewhere the
    column says no gpu run is committed yet."""
    drive(Execution.open(["toy"], track=False))
    params = toy_project.params_path
    params.write_text(params.read_text().replace("      n: 10\n", "      n: 10\n    gpu:\n      n: 20\n", 1))
    key = next(p.key for p in Execution.open(["toy"], profile="gpu", track=False).plans if p.name == "evaluate")
    gpu = toy_project.metrics_path("toy", "gpu")
    gpu.parent.mkdir(parents=True)
    doc = json.loads(toy_project.metrics_path("toy").read_text()) | {"key": key}  # as a gpu run would publish it
    gpu.write_text(json.dumps(doc | {"profile": "gpu", "evidence_holding": 0, "evidence_inconclusive": 1,
                                     "preconditions_holding": 0, "environment": {"device": "NVIDIA H200"}}))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    summary = (toy_project.root / "reports/summary.md").read_text()
    shown = "evidence 0 / 0 / 1; preconditions 0/1, regime not reached; device NVIDIA H200"
    assert f"| toy | 1 / 0 / 0 | - | 0/0 | 1/1 | yes | - | {shown} | default |" in summary
    assert f"GPU profile: {shown}." in summary and f"GPU profile: {shown}." in (
        toy_project.root / "reports/index.html").read_text()
    assert "| toy_cluster | - | - | - | - | - | - | no gpu run committed yet |" in summary
    gpu.write_text(json.dumps(doc | {"environment": {"device": {"train": "NVIDIA H200", "evaluate": "cpu"}}}))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    assert "preconditions 1/1, regime reached; device NVIDIA H200, cpu |" in (
        toy_project.root / "reports/summary.md").read_text()
    params.write_text(params.read_text().replace("      n: 20\n", "      n: 30\n"))  # the gpu overlay edited since
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    assert "device NVIDIA H200, cpu (stale: run on other code or params than this commit's: paperdag run toy -p gpu) |" \
        in (toy_project.root / "reports/summary.md").read_text()
    gpu.write_text("[1, 2]")
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    assert "metrics/profiles/gpu/toy.json is unreadable (AttributeError): paperdag run toy -p gpu |" in (
        toy_project.root / "reports/summary.md").read_text()


def test_report_shows_the_plots_of_the_published_run_after_a_smoke_run(toy_project):
    """A smoke run materialises under artifacts/profiles/smoke/ and publishes under metrics/profiles/smoke/: the
    default's views and the report keep showing the plots of the run behind metrics/toy.json, not the smoke run's."""
    from toy_pipeline.stages import grey_png

    drive(Execution.open(["toy"], track=False))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    copy = toy_project.root / "reports/plots/toy-n.png"
    assert copy.read_bytes() == grey_png(50)
    drive(Execution.open(["toy"], profile="smoke", track=False))
    assert (toy_project.view("toy", "evaluate", "smoke") / "n.png").read_bytes() == grey_png(10)
    assert (toy_project.view("toy", "evaluate") / "n.png").read_bytes() == grey_png(50)
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    assert copy.read_bytes() == grey_png(50)
    assert base64.b64encode(grey_png(50)).decode() in (toy_project.root / "reports/index.html").read_text()


def test_a_plot_the_metrics_do_not_depend_on_is_the_default_profiles(toy_project, monkeypatch):
    """A stage the metrics do not depend on shows its view's plot only while the view holds a default result: a smoke
    run fills a view that holds no default result (so DVC's outs show the latest run), and the report then keeps its
    copy of the default's figure. ``_entry_folders`` is stubbed to make the toy's evaluate such a stage."""
    from paperdag import report
    from toy_pipeline.stages import grey_png

    def plots() -> list:
        (toy,) = [r for r in report.results(toy_project) if r.pipeline.slug == "toy"]
        return [file for _, _, file in toy.plots]

    monkeypatch.setattr(report, "_entry_folders", lambda *args: {})
    view = toy_project.view("toy", "evaluate")
    drive(Execution.open(["toy"], profile="smoke", track=False))
    assert (view / "n.png").read_bytes() == grey_png(10)
    assert plots() == []
    copy = toy_project.root / "reports/plots/toy-n.png"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(grey_png(50))
    assert plots() == [copy]
    drive(Execution.open(["toy"], track=False))
    assert plots() == [view / "n.png"]


def test_report_of_a_fresh_clone_keeps_the_facts_of_the_same_metrics(toy_project):
    """A clone has the committed metrics and reports/ but no store: the report keeps each paper's commit and date
    from reports/runs.json while the metrics carry the key they were written with, and drops them once not."""
    drive(Execution.open(["toy"], track=False))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    summary = toy_project.root / "reports/summary.md"
    row = next(line for line in summary.read_text().splitlines() if line.startswith("| toy |"))
    assert not row.endswith("| - | - |")
    shutil.rmtree(toy_project.artifacts)
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    assert row in summary.read_text().splitlines()
    metrics = json.loads(toy_project.metrics_path("toy").read_text())
    toy_project.metrics_path("toy").write_text(json.dumps(metrics | {"key": "0" * 64}))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    assert "| toy | 1 / 0 / 0 | - | 0/0 | 1/1 | yes | - | no gpu run committed yet | default | - | - |" \
        in summary.read_text()


def test_report_keeps_the_published_runs_facts_and_figures_beside_another_recompute_of_its_key(toy_project):
    """The published metrics came from another machine's run of the same key, with other numbers: this machine's
    entry of that key is not the run behind them, so the report keeps reports/runs.json's facts and its copy of that
    run's figure instead of the local entry's."""
    from toy_pipeline.stages import grey_png

    drive(Execution.open(["toy"], track=False))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    runs_file, copy = toy_project.root / "reports/runs.json", toy_project.root / "reports/plots/toy-n.png"
    runs = json.loads(runs_file.read_text())
    assert runs["toy"]["date"] != "-" and copy.read_bytes() == grey_png(50)
    published = json.loads(toy_project.metrics_path("toy").read_text())
    other = published | {"metrics": {**published["metrics"], "ratio": 2.5}}  # the other machine's numbers
    toy_project.metrics_path("toy").write_text(json.dumps(other, indent=2, sort_keys=True) + "\n")
    runs_file.write_text(json.dumps({"toy": runs["toy"] | {"commit": "abcdef0", "date": "2026-01-02 03:04"}}))
    copy.write_bytes(grey_png(77))  # the other machine's figure, as committed with its metrics
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    summary = (toy_project.root / "reports/summary.md").read_text()
    assert "abcdef0" in summary and "2026-01-02 03:04" in summary
    assert copy.read_bytes() == grey_png(77)
    page = (toy_project.root / "reports/index.html").read_text()
    assert base64.b64encode(grey_png(77)).decode() in page and base64.b64encode(grey_png(50)).decode() not in page
    toy_project.metrics_path("toy").write_text(json.dumps(published, indent=2, sort_keys=True) + "\n")
    assert paperdag("report", cwd=toy_project.root).returncode == 0  # the entry's own result: its facts again
    assert json.loads(runs_file.read_text())["toy"] == runs["toy"] and copy.read_bytes() == grey_png(50)


def test_report_survives_a_corrupt_metrics_file(toy_project):
    drive(Execution.open(["toy"], track=False))
    toy_project.metrics_path("toy").write_text('{"claims": [')
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    assert "toy.json is unreadable (JSONDecodeError" in (toy_project.root / "reports/index.html").read_text()


def test_measured_values_are_short_and_never_cut_inside_a_number():
    from paperdag.report import fmt

    assert fmt({"estimate": 0.123456789, "ci95": [0.1, 0.15]}) == "estimate 0.1235; ci95 [0.1, 0.15]"
    long = fmt(list(range(1000)))
    assert len(long) < 200 and long.endswith("(957 more)]") and ", 42, ..." in long


def test_deployments_from_the_schedules_file():
    from flows.deployments import build_deployments

    deployments = build_deployments(REPO / "schedules.yaml")
    assert [d.name for d in deployments] == ["nightly-all", "hourly-smoke-influence"]
    assert deployments[0].schedules[0].schedule.cron == "0 3 * * *"
    assert deployments[1].parameters == {"papers": ["influence_newton"], "profile": "smoke", "ray_address": None,
                                         "trigger": "schedule"}


def test_bad_schedules_file(tmp_path):
    from flows.deployments import load_specs

    bad = tmp_path / "s.yaml"
    bad.write_text("deployments:\n  - name: x\n    papers: [nope]\n    cron: '* * * * *'\n")
    with pytest.raises(UsageError, match="unknown paper 'nope'"):
        load_specs(bad)
    bad.write_text("deployments:\n  - name: x\n")
    with pytest.raises(ParamsError, match="invalid deployments"):
        load_specs(bad)


def test_serve_without_a_prefect_api_refuses_in_one_line(toy_project):
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    result = subprocess.run([sys.executable, "-c", "from paperdag.cli import main; main()", "serve", "--config",
                             str(REPO / "schedules.yaml")], cwd=toy_project.root, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "needs a Prefect API" in result.stderr
