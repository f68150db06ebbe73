"""Stage ``train_<domain>``: CEGIS of the platoon's vector certificate and certified controller, on the
reachability-constrained delay domain (``train_reach``, the paper's method) or the full one (``train_full``)."""

from __future__ import annotations

from paperdag.io import read_json, write_json
from paperdag.stage import StageContext

from ..params import Params
from ..platoon.cegis import train_vector
from ..platoon.certificate import build_models
from ..platoon.certify import arch_json, save_models
from ..platoon.model import Platoon
from ..runtime import torch_generator
from .prepare import PLATOON_FILE

VECTOR_MODEL_FILE = "weights.safetensors"  # certificate (cert.*) and controller (policy.*)
VECTOR_TRAIN_FILE = "train.json"  # CEGIS summary and the architecture ("arch")


def train(ctx: StageContext[Params], domain: str) -> dict[str, float]:
    """weights.safetensors and train.json; returns the CEGIS summary (final loss, counterexamples, c_0 estimate)."""
    p = ctx.params
    pl = Platoon.from_json(read_json(ctx.input("prepare", PLATOON_FILE)))
    gen = torch_generator(ctx.rng)
    vc, policy = build_models(p.certificate, p.policy, pl.box)
    info = train_vector(pl, vc, policy, p.learner, p.cegis, domain == "reach", gen, ctx.log_metric)
    save_models(ctx.output(VECTOR_MODEL_FILE), vc, policy)
    write_json(ctx.output(VECTOR_TRAIN_FILE), info | {"arch": arch_json(p.certificate, p.policy)})
    return info
