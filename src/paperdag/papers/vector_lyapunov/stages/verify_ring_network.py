"""Stage ``verify_ring_<system>``: the monolithic baselines that share the compositional certificate's function
(networks/ring.py) on every ring of monolithic.n_grid at the first delay: (R) max_i V(x_i) as one ring-wide query
under N times the per-property budget, (Q) the whole-ring quadratic Razumikhin LMI."""

from __future__ import annotations

from paperdag.io import read_json, write_json
from paperdag.stage import StageContext

from ..networks.certify import constants, load_network_cert
from ..networks.model import make_network
from ..networks.ring import razumikhin_lmi, verify_ring
from ..params import NetworkCertificateParams, Params
from .prepare import NETWORKS_FILE
from .train_network import NETWORK_CERTS_DIR, NETWORK_TRAIN_FILE

RING_FILE = "ring.json"  # {"rows": [{"n", "ring": (R) outcome and work, "lmi": (Q) outcome and work}]}


def verify(ctx: StageContext[Params], system: str) -> dict[str, float]:
    """ring.json; returns each N's (R) verdict."""
    p = ctx.params
    tau = p.delays.taus[0]
    draws = read_json(ctx.input("prepare", NETWORKS_FILE))[system]
    arch = NetworkCertificateParams(**read_json(ctx.input(f"train_{system}", NETWORK_TRAIN_FILE))["arch"]).at(tau)
    rows = []
    for n in ctx.progress(p.monolithic.n_grid, desc=f"{system} ring-wide"):
        net = make_network(p.networks, p.dt, system, n, tau, draws)
        nc = load_network_cert(ctx.input(f"train_{system}", f"{NETWORK_CERTS_DIR}/tau{tau}.safetensors"), arch,
                               net.box)
        rows.append({"n": n, "ring": verify_ring(nc, net, p.network_budget, constants(nc, net)),
                     "lmi": razumikhin_lmi(net, nc.rho, p.ring.lmi_multipliers, p.ring.lmi_max_iter)})
    write_json(ctx.output(RING_FILE), {"rows": rows})
    return {f"ring_{r['n']}_verified": float(r["ring"]["verified"]) for r in rows}
