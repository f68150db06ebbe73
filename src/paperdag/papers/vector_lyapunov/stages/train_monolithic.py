"""Stage ``train_monolithic``: one scalar certificate per platoon size, for ``train_reach``'s certified controller."""

from __future__ import annotations

from paperdag.io import read_json, save_tensors
from paperdag.stage import StageContext

from ..params import Params
from ..platoon.certify import load_trained
from ..platoon.domain import reach_bounds
from ..platoon.model import Platoon
from ..platoon.monolithic import mono_tensors, train_mono
from ..runtime import torch_generator
from .prepare import PLATOON_FILE
from .train_vector import VECTOR_MODEL_FILE, VECTOR_TRAIN_FILE

MONO_FILE = "monolithic.safetensors"  # every N's certificate (n<N>.*)


def train(ctx: StageContext[Params]) -> dict[str, float]:
    """monolithic.safetensors; returns the sampled c_0 estimate per N."""
    p = ctx.params
    pl_all = Platoon.from_json(read_json(ctx.input("prepare", PLATOON_FILE)))
    weights, info = ctx.input("train_reach", VECTOR_MODEL_FILE), ctx.input("train_reach", VECTOR_TRAIN_FILE)
    _, policy, _ = load_trained(weights, info, pl_all)
    gen = torch_generator(ctx.rng)
    certs, out = [], {}
    for n in p.monolithic.n_grid:
        pl = pl_all.first(n)
        mc, c0 = train_mono(pl, policy, reach_bounds(policy, pl), p.monolithic, p.certificate, p.learner, gen,
                            ctx.log_metric)
        certs.append(mc)
        out[f"c0_estimate_{n}"] = c0
    save_tensors(ctx.output(MONO_FILE), mono_tensors(certs))
    return out
