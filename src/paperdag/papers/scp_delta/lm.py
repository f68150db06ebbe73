"""Training and scoring the tiny byte-level language models p0, q1, q2 and q_full (paperdag.common.transformer).

Training minimises the mean next-token cross-entropy -1/(B T) sum_{b,t} log q(x_{b,t+1} | x_{b,<=t}) over random
windows of a token stream with AdamW, the learning rate decaying linearly from lr to lr / 10. Fine-tuning starts
from p0's weights; pretraining from the GPT-2 initialisation.

Enumerating continuations of one prompt (``continuation_logprobs``) runs the prompt once: in every block its keys
and values are shared by all n continuations, each of whose S tokens attends to the whole prompt and causally to
its own earlier tokens, which is the full forward pass on prompt + suffix row by row (a test checks the equality).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

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


def _heads(x: torch.Tensor, n_head: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v of shape (B, H, T, d / H) from the fused projection (B, T, 3 d)."""
    b, t, d3 = x.shape
    q, k, v = x.view(b, t, 3, n_head, d3 // (3 * n_head)).permute(2, 0, 3, 1, 4)
    return q, k, v


@torch.no_grad()
def continuation_logprobs(model: GPT, prompt: torch.Tensor, suffixes: torch.Tensor) -> torch.Tensor:
    """log q(. | prompt, s_1..s_j) for j = 0..S and every row s of suffixes (n, S): float64 (n, S + 1, 256)."""
    device = next(model.parameters()).device
    prompt, suffixes = prompt.to(device), suffixes.to(device)
    n_p, (n, n_s) = len(prompt), suffixes.shape
    x = model.tok_emb(prompt[None]) + model.pos_emb(torch.arange(n_p, device=device))
    y = model.tok_emb(suffixes) + model.pos_emb(torch.arange(n_p, n_p + n_s, device=device))
    sees = torch.cat([torch.ones(n_s, n_p, dtype=torch.bool, device=device),
                      torch.ones(n_s, n_s, dtype=torch.bool, device=device).tril()], dim=1)
    for block in model.blocks:
        attn, heads = block.attn, block.attn.n_head
        qp, kp, vp = _heads(attn.qkv(block.norm1(x)), heads)
        qs, ks, vs = _heads(attn.qkv(block.norm1(y)), heads)
        out_p = F.scaled_dot_product_attention(qp, kp, vp, is_causal=True)
        out_s = F.scaled_dot_product_attention(qs, torch.cat([kp.expand(n, -1, -1, -1), ks], 2),
                                               torch.cat([vp.expand(n, -1, -1, -1), vs], 2), attn_mask=sees)
        x = x + attn.proj(out_p.transpose(1, 2).reshape(1, n_p, -1))
        y = y + attn.proj(out_s.transpose(1, 2).reshape(n, n_s, -1))
        x, y = x + block.mlp(block.norm2(x)), y + block.mlp(block.norm2(y))
    logits = torch.cat([model.head(model.norm(x[:, -1:])).expand(n, -1, -1), model.head(model.norm(y))], dim=1)
    return torch.log_softmax(logits.double(), dim=-1).cpu()


@torch.no_grad()
def mean_nll(model: GPT, windows: torch.Tensor) -> float:
    """Mean next-token negative log-likelihood in nats over windows (B, T + 1): predict w[:, 1:] from w[:, :-1]."""
    logp = next_token_logprobs(model, windows[:, :-1])
    return float(-logp.gather(-1, windows[:, 1:, None].cpu()).mean())
