"""Stage ``verify_<system>``: verify each delay's certificate, the full-domain baseline and the LMI baseline.

For the first delay the ring of max(networks.n_grid) subsystems, for the other delays the ring of delays.tau_n;
the full delay domain baseline at the first delay on the ring of delays.tau_n; the LMI quadratic baseline for every
delay. The certificate folders are functions of the certificate and the deterministic budget (wall-clock seconds go
to summary.json's "timing" only). Each verified network is a certificate folder
``certificates/<system>_tau<tau>_<reach|full>`` that ``paperdag verify`` re-checks.
"""

from __future__ import annotations

from paperdag.io import read_json, write_json
from paperdag.stage import StageContext

from ..networks.certify import load_network_cert, verify_network, write_network_certificate
from ..networks.lmi import check_quadratic, lmi_certificate
from ..networks.model import make_network, ring_size
from ..params import NetworkCertificateParams, Params
from .prepare import NETWORKS_FILE
from .train_network import NETWORK_CERTS_DIR, NETWORK_TRAIN_FILE

VERIFIED_DIR = "certificates"  # one certificate folder (verifier/folder.py) per verified network
RUNS_FILE = "summary.json"  # {"system", "runs": [each network's summary + its folder "name" + "timing" (seconds)]}
LMI_FILE = "lmi.json"  # the LMI baseline per delay: P, contraction rate, per-subsystem check


def verify(ctx: StageContext[Params], system: str) -> dict[str, float]:
    """certificates/<name>/, summary.json and lmi.json; returns the verdict of each network and LMI check."""
    p = ctx.params
    trained = f"train_{system}"
    arch = NetworkCertificateParams(**read_json(ctx.input(trained, NETWORK_TRAIN_FILE))["arch"])
    draws = read_json(ctx.input("prepare", NETWORKS_FILE))[system]
    taus = p.delays.taus
    jobs = [(tau, ring_size(tau, p.networks.n_grid, p.delays), True) for tau in taus]
    jobs.append((taus[0], p.delays.tau_n, False))  # the full delay domain baseline
    runs, lmi, metrics = [], [], {}
    for tau, n, reach in ctx.progress(jobs, desc=f"{system} certificates"):
        net = make_network(p.networks, p.dt, system, n, tau, draws)
        arch_tau = arch.at(tau)
        nc = load_network_cert(ctx.input(trained, f"{NETWORK_CERTS_DIR}/tau{tau}.safetensors"), arch_tau, net.box)
        res = verify_network(nc, net, reach, p.network_budget)
        name = f"{system}_tau{tau}_{'reach' if reach else 'full'}"
        write_network_certificate(ctx.output(f"{VERIFIED_DIR}/{name}"), nc, net, arch_tau, p.network_budget, res)
        runs.append(res["summary"] | {"name": name, "timing": res["timing"]})
        metrics[f"{name}_verified"] = float(res["summary"]["verified"])
        if reach:
            P, rate = lmi_certificate(net)
            check = check_quadratic(net, P, arch.rho, True) if P is not None else {"verified": False}
            lmi.append({"tau": tau, "n": n, "rate": rate, "P": None if P is None else P.tolist(), **check})
            metrics[f"{system}_tau{tau}_lmi_verified"] = float(check["verified"])
    write_json(ctx.output(RUNS_FILE), {"system": system, "runs": runs})
    write_json(ctx.output(LMI_FILE), lmi)
    return metrics
