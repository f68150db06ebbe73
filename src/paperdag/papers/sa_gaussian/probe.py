"""Stage ``probe_<setting>`` (2-D i.i.d.-noise settings): where the sweep never reaches the explicit bound's content,
simulate the chains at the largest stepsize of the halving ladder below the sweep at which the bound lies under the
trivial coupling bound (bound.content_threshold), and measure the exact W1 there on disjoint groups of the chains
(transport.py), with the relative standard error of the chains' second moment beside their drift (stationarity.py)."""

from __future__ import annotations

import numpy as np
import torch

from paperdag.io import read_json, write_json
from paperdag.stage import StageContext

from .bound import constants, content_threshold
from .dynamics import simulate
from .params import Params
from .prepare import SETTINGS_FILE
from .problems import Problem
from .stationarity import moment_se
from .transport import Grid, group_w1

PROBE_FILE = "probe.json"


def probe(ctx: StageContext[Params], setting: str) -> dict[str, float]:
    """probe.json: the stepsize, the steady state's drift check (with the second moment's relative standard error),
    and the exact W1 of the groups with its floor (t-intervals over ``repeats`` groups)."""
    p = ctx.params
    pr = Problem.from_json(read_json(ctx.input("prepare", SETTINGS_FILE))[setting])
    alpha = content_threshold(constants(pr), p.sim.alphas[0])
    gen = torch.Generator(device=ctx.device).manual_seed(int(ctx.rng.integers(2**62)))
    st = simulate(pr, alpha, p.probe.chains, p.sim.burn_in_nats, p.sim.start_offset, gen, ctx.device)
    y = st.y.double().cpu().numpy()
    chol = np.linalg.cholesky(np.array(pr.sigma))
    grid = Grid.for_limit(np.array(pr.sigma), p.transport.bins, p.transport.span)
    w, floor, m = group_w1(y, lambda k: ctx.rng.standard_normal((k, pr.dim)) @ chol.T, p.transport.subsample,
                           p.transport.repeats, grid, ctx.rng)
    drift = abs(st.m2_end - st.m2_three_quarters) / st.m2_end
    write_json(ctx.output(PROBE_FILE), {"setting": setting, "alpha": alpha, "chains": p.probe.chains,
                                        "steps": st.steps, "drift": drift, "m2_se": moment_se(y),
                                        "w1": [w.mean, w.lo, w.hi], "floor": [floor.mean, floor.lo, floor.hi],
                                        "repeats": p.transport.repeats, "subsample": m})
    return {"alpha": alpha, "w1": w.mean, "drift": drift}
