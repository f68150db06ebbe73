"""Stage ``control_<system>`` (drones, microgrid): the control study of networks/control.py on the ring of
delays.tau_n at the first delay. The uncertified controller is tuned on training scenarios; the certified one is the
first proved point of the path back to the nominal controller, saved as the certificate folder
``certificates/<system>_control`` that ``paperdag verify`` re-checks; the ladder's bound is the LQR of the
delay-augmented ring (its gain K stored as controller ``lqr``); all are compared on held-out scenarios (load steps for
the systems in network_control.load_steps).
"""

from __future__ import annotations

import numpy as np
import torch

from paperdag.io import read_json, write_json
from paperdag.stage import StageContext

from ..networks.certify import write_network_certificate
from ..networks.control import GAINS, certify_path, cost, lqr_cost, lqr_of, scenarios, tune
from ..networks.model import make_network
from ..params import Params
from ..runtime import torch_generator
from .prepare import NETWORKS_FILE

CONTROL_FILE = "control.json"  # gains and held-out cost of each controller, the certified alpha and every attempt
CONTROL_DIR = "certificates"  # <system>_control: the certified controller's certificate folder


def control(ctx: StageContext[Params], system: str) -> dict[str, float]:
    """control.json and certificates/<system>_control/; returns each controller's held-out cost J."""
    p, c = ctx.params, ctx.params.network_control
    gen = torch_generator(ctx.rng)
    draws = read_json(ctx.input("prepare", NETWORKS_FILE))[system]
    n, tau = p.delays.tau_n, p.delays.taus[0]
    net = make_network(p.networks, p.dt, system, n, tau, draws)
    window = c.load_step_window if system in c.load_steps else None
    train = scenarios(net, c.scenarios, c.horizon, gen, window)
    held_out = scenarios(net, p.evaluation.n_sims, p.evaluation.sim_steps, gen, window)
    tuned = tune(net, p.networks, draws, *train, c.effort, c.steps, c.lr,
                 lambda J, step: ctx.log_metric(f"{system}_control_train_J", J, step))
    nominal = {k: np.asarray(draws[k][:n]) for k in GAINS[system]}
    arch = p.network_certificate.at(tau)
    found = certify_path(p.networks, p.dt, system, n, tau, draws, nominal, tuned, c.alphas, arch, p.network_cegis,
                         p.network_budget, gen, ctx.log_metric)
    controllers = {"nominal": nominal, "uncertified": tuned} | ({"certified": found.gains} if found.gains else {})
    rows = {}
    with torch.no_grad():
        for name, gains in controllers.items():
            perf = cost(net, p.networks, draws, {k: torch.as_tensor(v) for k, v in gains.items()}, *held_out, c.effort)
            rows[name] = {"gains": {k: list(map(float, v)) for k, v in gains.items()},
                          **{k: float(v) for k, v in perf.items()}}
    law = lqr_of(net, p.networks, draws, c.effort)
    rows["lqr"] = {"K": law.K.tolist(), **lqr_cost(net, p.networks, draws, law.K, *held_out, c.effort)}
    if found.cert is not None:
        write_network_certificate(ctx.output(f"{CONTROL_DIR}/{system}_control"), found.cert, found.net, arch,
                                  p.network_budget, found.result)
    else:
        ctx.output(CONTROL_DIR).mkdir()
    write_json(ctx.output(CONTROL_FILE), {"system": system, "n": n, "tau": tau, "effort": c.effort,
                                          "load_step_window": window,
                                          "certified_alpha": found.alpha, "attempts": found.attempts,
                                          "controllers": rows})
    return {f"{name}_J": r["J"] for name, r in rows.items()} | {
        "certified_alpha": -1.0 if found.alpha is None else found.alpha}
