"""Stages of the network systems (drone formation, microgrid): train the vector certificate per delay, verify it.

train_<system>: for each tau in ``net_taus`` a certificate trained by CEGIS on the network it is verified on
(below) -> ``certificates/tau<tau>.safetensors``.
verify_<system>: for tau = net_taus[0] the ring of max(net_n_grid) subsystems (the first N subsystems of a ring of
32 have exactly the queries of the ring of N >= 3, since every node has degree 2 and the query of subsystem i depends
only on its own parameters and degree), for the other taus the ring of ``net_tau_n``; the full delay domain
baseline at net_taus[0] on the ring of net_tau_n; the LMI quadratic baseline for every tau. Each verified network
is a certificate folder ``certificates/<system>_tau<tau>_<domain>`` that ``paperdag verify`` re-checks.
"""

from __future__ import annotations

import numpy as np
import torch
from safetensors.torch import save_file

from paperdag.io import read_json, write_json
from paperdag.stage import StageContext

from .lmi import check_quadratic, lmi_certificate
from .netcert import load_network_cert, train_network_cert, verify_network, write_network_certificate
from .network import NetworkCert, make_network
from .pipeline import SYSTEM_KEYS

def _networks(ctx: StageContext, system: str, n: int, tau: int):
    p = {k: getattr(ctx.params, k) for k in SYSTEM_KEYS}
    draws = {k: np.asarray(v) for k, v in read_json(ctx.inputs["prepare"] / "networks.json")[system].items()}
    return make_network(p, system, n, tau, draws)


def _ring_size(params, tau: int) -> int:
    """The ring a delay's certificate is trained and verified on: the largest for the first delay, else net_tau_n."""
    return max(params.net_n_grid) if tau == params.net_taus[0] else params.net_tau_n


def train_system(ctx: StageContext, system: str) -> dict[str, float]:
    """One CEGIS certificate per delay (``netcert.train_network_cert``) -> certificates/tau<tau>.safetensors."""
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(int(ctx.rng.integers(2**31)))
    (ctx.out / "certificates").mkdir()
    info = {}
    for tau in ctx.progress(ctx.params.net_taus, desc=f"{system} delays"):
        net = _networks(ctx, system, _ring_size(ctx.params, tau), tau)
        nc, res = train_network_cert(net, ctx.params, True, gen, ctx.log_metric, f"{system}_tau{tau}")
        save_file({k: v.contiguous() for k, v in nc.state_dict().items()},
                  str(ctx.out / "certificates" / f"tau{tau}.safetensors"))
        info |= {f"tau{tau}_{k}": v for k, v in res.items()}
    arch = {"cert_feat": ctx.params.cert_feat, "cert_eps": ctx.params.cert_eps, "rho": ctx.params.net_rho}
    write_json(ctx.out / "train.json", info | {"arch": arch})
    return info


def train_drones(ctx: StageContext) -> dict[str, float]:
    """CEGIS vector certificates of the drone formation, one per delay."""
    return train_system(ctx, "drones")


def train_microgrid(ctx: StageContext) -> dict[str, float]:
    """CEGIS vector certificates of the droop-controlled microgrid, one per delay."""
    return train_system(ctx, "microgrid")


def verify_system(ctx: StageContext, system: str) -> dict[str, float]:
    """Verify each delay's certificate (and the full-domain and LMI baselines) -> one certificate folder each."""
    q = ctx.params
    trained = ctx.inputs[f"train_{system}"]
    arch = read_json(trained / "train.json")["arch"]
    budget = {"max_cells": q.net_max_cells, "max_depth": q.max_depth, "max_milp": q.max_milp,
              "milp_time": q.net_milp_time, "vehicle_time": q.net_subsystem_time, "stop_after_cex": q.stop_after_cex}
    jobs = [(tau, _ring_size(q, tau), True) for tau in q.net_taus] + [(q.net_taus[0], q.net_tau_n, False)]
    runs, lmi, metrics = [], [], {}
    for tau, n, reach in ctx.progress(jobs, desc=f"{system} certificates"):
        net = _networks(ctx, system, n, tau)
        nc: NetworkCert = load_network_cert(trained / "certificates" / f"tau{tau}.safetensors", arch, net.box)
        res = verify_network(nc, net, reach, budget)
        name = f"{system}_tau{tau}_{'reach' if reach else 'full'}"
        write_network_certificate(ctx.out / "certificates" / name, nc, net, arch, budget, res)
        runs.append(res["summary"] | {"name": name})
        metrics[f"{name}_verified"] = float(res["summary"]["verified"])
        if reach:
            P, rate = lmi_certificate(net)
            check = check_quadratic(net, P, arch["rho"], True) if P is not None else {"verified": False}
            lmi.append({"tau": tau, "n": n, "rate": rate, "P": None if P is None else P.tolist(), **check})
            metrics[f"{system}_tau{tau}_lmi_verified"] = float(check["verified"])
    write_json(ctx.out / "summary.json", {"system": system, "runs": runs})
    write_json(ctx.out / "lmi.json", lmi)
    return metrics


def verify_drones(ctx: StageContext) -> dict[str, float]:
    """Compositional verification of the drone formation certificates (+ full-domain and LMI baselines)."""
    return verify_system(ctx, "drones")


def verify_microgrid(ctx: StageContext) -> dict[str, float]:
    """Compositional verification of the microgrid certificates (+ full-domain and LMI baselines)."""
    return verify_system(ctx, "microgrid")


def load_certificate_folder(folder) -> tuple[NetworkCert, dict]:
    """(certificate, meta) of a certificate folder written by ``write_network_certificate``."""
    meta = read_json(folder / "meta.json")
    box = tuple(meta["network"]["box"])
    return load_network_cert(folder / "weights.safetensors", meta["arch"], box), meta

