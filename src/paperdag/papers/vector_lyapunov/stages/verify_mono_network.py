"""Stage ``verify_mono_<system>``: the monolithic certificate of every N verified by the same verifier and budget
as the compositional one (N times its per-property budget), up to its first undecided cell; rings too small for the
compositional certificate's prefix (N < 3, a different degree) get the compositional certificate verified on them
here too."""

from __future__ import annotations

import numpy as np

from paperdag.io import load_tensors, read_json, write_json
from paperdag.stage import StageContext

from ..networks.certify import WORK, load_network_cert, verify_network
from ..networks.model import make_network
from ..networks.monolithic import MonoNetCert, verify_mono_network
from ..params import NetworkCertificateParams, Params
from .prepare import NETWORKS_FILE
from .train_mono_network import MONO_FILE
from .train_network import NETWORK_CERTS_DIR, NETWORK_TRAIN_FILE

MONO_RESULTS_FILE = "monolithic.json"  # {"monolithic": rows per N, "compositional": rows for N < 3}


def verify(ctx: StageContext[Params], system: str) -> dict[str, float]:
    """monolithic.json; returns each N's monolithic verdict."""
    p = ctx.params
    tau = p.delays.taus[0]
    draws = read_json(ctx.input("prepare", NETWORKS_FILE))[system]
    tensors = load_tensors(ctx.input(f"train_mono_{system}", MONO_FILE))
    arch = NetworkCertificateParams(**read_json(ctx.input(f"train_{system}", NETWORK_TRAIN_FILE))["arch"]).at(tau)
    mono, comp = [], []
    for n in ctx.progress(p.monolithic.n_grid, desc=f"{system} monolithic"):
        net = make_network(p.networks, p.dt, system, n, tau, draws)
        mc = MonoNetCert(net, p.network_certificate.at(tau))
        mc.load_state_dict({k.split(".", 1)[1]: v for k, v in tensors.items() if k.startswith(f"n{n}.")})
        mono.append(verify_mono_network(mc, net, p.network_budget))
        if n < 3:
            nc = load_network_cert(ctx.input(f"train_{system}", f"{NETWORK_CERTS_DIR}/tau{tau}.safetensors"), arch,
                                   net.box)
            res = verify_network(nc, net, True, p.network_budget)
            per = res["summary"]["per_subsystem"]
            comp.append({"n": n, "verified": res["summary"]["verified"],
                         **{k: int(np.sum([q[k] for q in per])) for k in WORK},
                         "seconds": res["timing"]["constants_seconds"] + sum(res["timing"]["seconds"])})
    write_json(ctx.output(MONO_RESULTS_FILE), {"monolithic": mono, "compositional": comp})
    return {f"mono_{r['n']}_verified": float(r["verified"]) for r in mono}
