"""Stage ``prepare``: the settings (mean fields, noise models, x*, Jacobians, exact limit covariances), as JSON."""

from __future__ import annotations

import hashlib
import json

import numpy as np

from paperdag.io import write_json
from paperdag.stage import StageContext

from .params import Params
from .problems import build_problems

SETTINGS_FILE = "settings.json"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """settings.json (one Problem per setting) and provenance.json (procedural; sha256 of the settings)."""
    problems = build_problems(ctx.params.problems)
    write_json(ctx.output(SETTINGS_FILE), {name: pr.to_json() for name, pr in problems.items()})
    digest = hashlib.sha256(ctx.output(SETTINGS_FILE).read_bytes()).hexdigest()
    write_json(ctx.output("provenance.json"), {
        "source": "procedural (no download): mean fields and noise laws from params.yaml; steady states simulated "
                  "by torch (seeded from (seed, stage)) in the train stages",
        "limit": "Sigma from scipy.linalg.solve_continuous_lyapunov(A, Gamma_LR)",
        "seed": ctx.params.seed, "sha256": digest,
        "settings": json.loads(ctx.output(SETTINGS_FILE).read_text()),
    })
    gaussian = [pr for pr in problems.values() if pr.drift != "quartic"]
    return {"settings": float(len(problems)),
            "max_sigma_trace": max(float(np.trace(np.array(pr.sigma))) for pr in gaussian)}
