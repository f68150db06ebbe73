"""Stage ``train_<system>`` (drones, microgrid): one CEGIS certificate per delay, on the ring it is verified on."""

from __future__ import annotations

from paperdag.io import read_json, save_tensors, write_json
from paperdag.stage import StageContext

from ..networks.cegis import train_network_cert
from ..networks.model import make_network, ring_size
from ..params import Params
from ..runtime import torch_generator
from .prepare import NETWORKS_FILE

NETWORK_CERTS_DIR = "certificates"  # tau<tau>.safetensors: the certificate's state dict
NETWORK_TRAIN_FILE = "train.json"  # CEGIS summaries per delay and the certificate architecture ("arch")


def train(ctx: StageContext[Params], system: str) -> dict[str, float]:
    """certificates/tau<tau>.safetensors for every delay in delays.taus, and train.json."""
    p = ctx.params
    gen = torch_generator(ctx.rng)
    draws = read_json(ctx.input("prepare", NETWORKS_FILE))[system]
    ctx.output(NETWORK_CERTS_DIR).mkdir()
    info = {}
    for tau in ctx.progress(p.delays.taus, desc=f"{system} delays"):
        net = make_network(p.networks, p.dt, system, ring_size(tau, p.networks.n_grid, p.delays), tau, draws)
        nc, res = train_network_cert(net, p.network_certificate.at(tau), p.network_cegis, True, gen, ctx.log_metric,
                                     f"{system}_tau{tau}")
        save_tensors(ctx.output(f"{NETWORK_CERTS_DIR}/tau{tau}.safetensors"), nc.state_dict())
        info |= {f"tau{tau}_{k}": v for k, v in res.items()}
    write_json(ctx.output(NETWORK_TRAIN_FILE), info | {"arch": p.network_certificate.model_dump()})
    return info
