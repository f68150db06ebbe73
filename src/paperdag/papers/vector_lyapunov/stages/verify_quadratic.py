"""Stage ``verify_quadratic_<system>``: the quadratic baseline V_P checked exactly on condition (N) by
networks/quadratic.py, per delay for two P: the LMI's (the verify stage's lmi.json) and the S-procedure LMI of (N)'s
invariance (quadratic.multiplier_step), each with the SOCP budget of one neural unit's MILP nodes
(network_budget.max_milp x milp_nodes per subsystem and piece)."""

from __future__ import annotations

import time

import numpy as np

from paperdag.io import read_json, write_json
from paperdag.stage import StageContext

from ..networks.model import make_network
from ..networks.quadratic import check_class
from ..params import NetworkCertificateParams, Params
from .prepare import NETWORKS_FILE
from .train_network import NETWORK_TRAIN_FILE
from .verify_network import LMI_FILE

QUADRATIC_FILE = "quadratic.json"  # [{"tau", "n", "outcome", "verified", "runs": {P: check_exact}, "invariance"}]


def verify(ctx: StageContext[Params], system: str) -> dict[str, float]:
    """quadratic.json; returns each delay's exact verdict of V_P."""
    p = ctx.params
    draws = read_json(ctx.input("prepare", NETWORKS_FILE))[system]
    rho = NetworkCertificateParams(**read_json(ctx.input(f"train_{system}", NETWORK_TRAIN_FILE))["arch"]).rho
    nodes = p.network_budget.max_milp * p.network_budget.milp_nodes
    rows = []
    for lmi in ctx.progress(read_json(ctx.input(f"verify_{system}", LMI_FILE)), desc=f"{system} quadratic"):
        net = make_network(p.networks, p.dt, system, lmi["n"], lmi["tau"], draws)
        t0 = time.perf_counter()
        res = ({"verified": False, "outcome": "no_P", "runs": {}, "solves": 0, "sup_bound": None}
               if lmi["P"] is None else check_class(net, np.array(lmi["P"]), rho, nodes, p.quadratic.multiplier_step))
        rows.append({"tau": lmi["tau"], "n": lmi["n"], "nodes": nodes, **res,
                     "seconds": time.perf_counter() - t0})
    write_json(ctx.output(QUADRATIC_FILE), rows)
    return {f"{system}_tau{r['tau']}_quadratic_verified": float(r["verified"]) for r in rows}
