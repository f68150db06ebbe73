"""Training and scoring the tiny byte-level language models p0, q1, q2 and q_full (paperdag.common.transformer).

Training minimises the mean next-token cross-entropy -1/(B T) sum_{b,t} log q(x_{b,t+1} | x_{b,<=t}) over random
windows of a token stream with AdamW, the learning rate decaying linearly from lr to lr / 10. Fine-tuning starts
from p0's weights; pretraining from the GPT-2 initialisation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from paperdag.common.corpus import sample_batch
from paperdag.common.transformer import GPT, GPTConfig

from .params import ModelParams, TrainParams

Log = Callable[[int, float], None]  # (step, training loss)


def model_config(m: ModelParams) -> GPTConfig:
    """The shared tiny transformer's shape over the 256 byte tokens."""
    return GPTConfig(context=m.context, n_layer=m.n_layer, n_head=m.n_head, d_model=m.d_model)


def train_lm(model: GPT, tokens: np.ndarray, t: TrainParams, seed: int, log: Log | None = None) -> float:
    """AdamW on random windows of ``tokens``; lr_k = lr (1 - 0.9 k / steps). Returns the last step's loss."""
    device = next(model.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=t.lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 1.0 - 0.9 * k / t.steps)
    model.train()
    loss = torch.tensor(float("nan"))
    for step in range(t.steps):
        x, y = sample_batch(tokens, t.batch_size, model.cfg.context, gen)
        loss = model.loss(x.to(device), y.to(device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if log is not None:
            log(step, loss.item())
    model.eval()
    return loss.item()


@torch.no_grad()
def next_token_logprobs(model: GPT, ids: torch.Tensor, last: int = 0, chunk: int = 512) -> torch.Tensor:
    """log q(. | x_{<=t}) at every position t (or the ``last`` ones) of every row of ids (B, T): float64 (B, T, 256)."""
    device = next(model.parameters()).device
    out = [torch.log_softmax(model(ids[i:i + chunk].to(device))[:, -last:].double(), dim=-1).cpu()
           for i in range(0, len(ids), chunk)]
    return torch.cat(out)


@torch.no_grad()
def mean_nll(model: GPT, windows: torch.Tensor) -> float:
    """Mean next-token negative log-likelihood in nats over windows (B, T + 1): predict w[:, 1:] from w[:, :-1]."""
    logp = next_token_logprobs(model, windows[:, :-1])
    return float(-logp.gather(-1, windows[:, 1:, None]).mean())
