"""The platform on its first real user, influence_newton's smoke profile: the claims contract, an all-hit re-run,
and a param change that re-runs exactly the dependent stages."""

from __future__ import annotations

import pytest
import yaml

from paperdag.project import Project
from paperdag.runs import Execution, drive
from paperdag.testing import run_stages

pytestmark = pytest.mark.slow
SLUG = "influence_newton"


@pytest.fixture(scope="module")
def smoke_project(tmp_path_factory) -> Project:
    """A project of its own (the last test edits its params.yaml) with the whole smoke profile run once."""
    return run_stages(SLUG, root=tmp_path_factory.mktemp("influence") / "proj").project


def _rerun(project: Project) -> Execution:
    return drive(Execution.open([SLUG], profile="smoke", project=project, track=False), retries=0)


def test_smoke_metrics_follow_the_claims_contract(smoke_runs):
    runs = smoke_runs(SLUG)
    metrics = runs.metrics()
    assert metrics["paper"] == SLUG and metrics["profile"] == "smoke" and metrics["title"]
    assert {"ns_error_exponent_k", "if_ns_ratio_exponent", "group_ns_tracks_actual"} <= {c["id"] for c in metrics["claims"]}
    assert all(c["kind"] in ("evidence", "check", "precondition") and c["verdict"] in ("holds", "fails", "inconclusive")
               and "statement" in c and "measured" in c for c in metrics["claims"])
    assert metrics["metrics"]["cells_failed_certificate"] == 0
    assert metrics["metrics"]["max_refit_grad_norm"] < 1e-9
    for plot in ("scaling.png", "ratio_heatmap.png", "group_effects.png"):
        assert (runs["evaluate"] / plot).read_bytes()[:4] == b"\x89PNG"


def test_identical_rerun_is_all_cache_hits(smoke_project):
    done = _rerun(smoke_project).done
    assert len(done) == 5 and all(done.values())


def test_param_change_reruns_only_dependent_stages(smoke_project):
    params = yaml.safe_load(smoke_project.params_path.read_text())
    params[SLUG]["cert_min_eig"] = 2 * params[SLUG]["cert_min_eig"]  # read only by verify
    smoke_project.params_path.write_text(yaml.safe_dump(params))
    rerun = _rerun(smoke_project)
    assert {label for label, hit in rerun.done.items() if not hit} == {f"{SLUG}.verify", f"{SLUG}.evaluate"}
