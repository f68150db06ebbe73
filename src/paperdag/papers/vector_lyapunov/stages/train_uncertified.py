"""Stage ``train_uncert``: the baseline controller trained for performance only (no certificate)."""

from __future__ import annotations

from paperdag.io import read_json, save_tensors
from paperdag.stage import StageContext

from ..params import Params
from ..platoon.certificate import Policy
from ..platoon.model import Platoon
from ..platoon.uncertified import ROLLOUT_FOLLOWERS, train_uncertified
from ..runtime import torch_generator
from .prepare import PLATOON_FILE

POLICY_FILE = "policy.safetensors"  # the controller's state dict


def train(ctx: StageContext[Params]) -> dict[str, float]:
    """policy.safetensors; returns the number of controller parameters."""
    p = ctx.params
    pl = Platoon.from_json(read_json(ctx.input("prepare", PLATOON_FILE)))
    pl = pl.first(min(ROLLOUT_FOLLOWERS, pl.n))
    gen = torch_generator(ctx.rng)
    policy = Policy(p.policy.hidden, p.policy.u_scale)
    train_uncertified(pl, policy, p.learner.lr, p.uncertified, gen, ctx.log_metric)
    save_tensors(ctx.output(POLICY_FILE), policy.state_dict())
    return {"policy_params": sum(w.numel() for w in policy.parameters())}
