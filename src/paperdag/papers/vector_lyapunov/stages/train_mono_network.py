"""Stage ``train_mono_<system>`` (drones, microgrid): the monolithic baseline, one certificate over the whole ring
for every N in monolithic.n_grid at the first delay."""

from __future__ import annotations

from paperdag.io import read_json, save_tensors
from paperdag.stage import StageContext

from ..networks.model import make_network
from ..networks.monolithic import train_mono_network
from ..params import Params
from ..runtime import torch_generator
from .prepare import NETWORKS_FILE

MONO_FILE = "monolithic.safetensors"  # every N's certificate (n<N>.*)


def train(ctx: StageContext[Params], system: str) -> dict[str, float]:
    """monolithic.safetensors; returns the number of certificates."""
    p = ctx.params
    gen = torch_generator(ctx.rng)
    draws = read_json(ctx.input("prepare", NETWORKS_FILE))[system]
    tensors = {}
    for n in ctx.progress(p.monolithic.n_grid, desc=f"{system} monolithic"):
        net = make_network(p.networks, p.dt, system, n, p.delays.taus[0], draws)
        mc = train_mono_network(net, p.network_certificate.at(p.delays.taus[0]), p.network_cegis,
                                p.monolithic.steps, gen, ctx.log_metric, f"{system}_mono{n}")
        tensors |= {f"n{n}.{k}": v for k, v in mc.state_dict().items()}
    save_tensors(ctx.output(MONO_FILE), tensors)
    return {"certificates": len(p.monolithic.n_grid)}
