"""`paperdag report` renders claims and plots offline; `paperdag serve`'s deployments carry their cron schedules."""

from __future__ import annotations

import pytest

from conftest import REPO, paperdag
from paperdag.errors import ParamsError, UsageError
from paperdag.runs import Execution, drive


def test_report_lists_claims_with_verdicts(toy_project):
    drive(Execution.open(["toy"], track=False))
    assert paperdag("report", cwd=toy_project.root).returncode == 0
    page = (toy_project.root / "reports/index.html").read_text()
    assert "Toy pipeline" in page and "b is twice a" in page and '<span class="yes">yes</span>' in page
    assert "Not run yet" in page  # toy_cluster has no metrics
    summary = (toy_project.root / "reports/summary.md").read_text()
    assert "| ratio | b is twice a | 2 | 2 | yes |" in summary


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
