"""Stage ``train_<model>``: pretrain p0 on the public corpus (same templates, other names and codes), or fine-tune
q1 / q2 / q_full from p0 on the private shards of every seed (q_full for ``q_full_steps``: twice the stream, the same
passes per canary); each model reports its held-out loss."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from paperdag.common.corpus import fixed_batches
from paperdag.common.transformer import GPT
from paperdag.io import load_tensors, save_tensors
from paperdag.stage import StageContext

from .lm import mean_nll, model_config, train_lm
from .params import Params
from .prepare import PRIVATE_FILE, PUBLIC_FILE
from .records import public_tokens, shard_tokens

P0_FILE = "p0.safetensors"
WEIGHTS_DIR = "weights"
SHARDS = {"q1": ("1",), "q2": ("2",), "q_full": ("1", "2")}


def eval_windows(tokens: np.ndarray, context: int, seed: int) -> torch.Tensor:
    """8 x 16 fixed random windows of length context + 1 (a held-out evaluation set)."""
    return torch.cat([torch.cat([x, y[:, -1:]], 1) for x, y in fixed_batches(tokens, 8, 16, context, seed)])


def _logger(ctx: StageContext[Params], run: str) -> Callable[[int, float], None]:
    """Training-loss curve points every 10 steps, labelled by run."""
    return lambda step, loss: None if step % 10 else ctx.log_metric("train_loss", loss, step, run=run)


def train(ctx: StageContext[Params], model: str) -> dict[str, float]:
    """p0.safetensors, or weights/seed<s>.safetensors per seed; returns held-out NLLs (nats/byte)."""
    p, cfg = ctx.params, model_config(ctx.params.model)
    if model == "p0":
        val = eval_windows(public_tokens(ctx.input("prepare", PUBLIC_FILE), "val"), cfg.context, p.seed)
        net = GPT(cfg).to(ctx.device)
        train_lm(net, public_tokens(ctx.input("prepare", PUBLIC_FILE), "train"), p.pretrain,
                 int(ctx.rng.integers(2**31)), _logger(ctx, "p0"))
        save_tensors(ctx.output(P0_FILE), net.state_dict())
        return {"val_nll": mean_nll(net, val.to(ctx.device)), "uniform_nll": float(np.log(cfg.vocab_size))}
    ctx.output(WEIGHTS_DIR).mkdir()
    budget = p.finetune.model_copy(update={"steps": p.q_full_steps}) if model == "q_full" else p.finetune
    p0_state = load_tensors(ctx.input("train_p0", P0_FILE), ctx.device)
    summary: dict[str, float] = {}
    for s in ctx.progress(range(p.n_seeds), desc="seeds"):
        net = GPT(cfg).to(ctx.device)
        net.load_state_dict(p0_state)
        data = ctx.input("prepare", PRIVATE_FILE)
        held = eval_windows(shard_tokens(data, s, ("heldout",)), cfg.context, p.seed).to(ctx.device)
        base = mean_nll(net, held)
        train_lm(net, shard_tokens(data, s, SHARDS[model]), budget, int(ctx.rng.integers(2**31)),
                 _logger(ctx, f"seed{s}"))
        save_tensors(ctx.output(f"{WEIGHTS_DIR}/seed{s}.safetensors"), net.state_dict())
        summary |= {f"heldout_nll_s{s}": mean_nll(net, held), f"p0_heldout_nll_s{s}": base}
    return summary
