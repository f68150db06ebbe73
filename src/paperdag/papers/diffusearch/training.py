"""Training both models on the same programs with the same budget, and their sanity check.

Both see the same batches (rows drawn with one seeded generator) for ``steps`` AdamW steps, learning rate with a
linear warm-up over ``warmup`` steps then cosine decay to 0. Losses (answer tokens only; the prompt is given):

    MDM: mean cross-entropy of the masked answer tokens at masking ratio t ~ U(0, 1) (``common.masked_diffusion``,
         the ELBO's unweighted surrogate; in one trial at this budget
         the 1/t-weighted ELBO trained worse, an observation rather than a measured claim)
    AR:  -(1/A) sum_{j<A} log p(x_{s+j} | x_{<s+j})
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from paperdag.common.masked_diffusion import MASK_ID, masked_diffusion_loss
from paperdag.common.transformer import GPT, GPTConfig

from .models import answer_logprobs, build

Log = Callable[[str, float, int], None]


def lr_at(step: int, steps: int, warmup: int, lr: float) -> float:
    """lr * step / warmup during warm-up, then lr * (1 + cos(pi * progress)) / 2."""
    if step < warmup:
        return lr * (step + 1) / warmup
    return lr * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def loss(model: GPT, kind: str, x: torch.Tensor, answer_start: int, gen: torch.Generator) -> torch.Tensor:
    """The kind's training loss on a batch ``x`` (B, L), as in the module docstring."""
    if kind == "mdm":
        maskable = torch.zeros_like(x, dtype=torch.bool)
        maskable[:, answer_start:] = True
        return masked_diffusion_loss(model, x, maskable, gen, elbo=False)
    logits = model(x[:, :-1])[:, answer_start - 1:]
    return F.cross_entropy(logits.flatten(0, 1), x[:, answer_start:].flatten())


def train(kind: str, cfg: GPTConfig, data: np.ndarray, answer_start: int, steps: int, batch_size: int, lr: float,
          warmup: int, seed: int, device: str, log: Log, log_every: int) -> GPT:
    """AdamW (betas 0.9, 0.98; weight decay 0.01) on ``loss``; returns the trained model in eval mode."""
    torch.manual_seed(seed)
    model = build(kind, cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.98), weight_decay=0.01)
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.from_numpy(data.astype(np.int64))
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, steps, warmup, lr)
        rows = torch.randint(0, len(tokens), (batch_size,), generator=gen)
        value = loss(model, kind, tokens[rows].to(device), answer_start, gen)
        opt.zero_grad(set_to_none=True)
        value.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % log_every == 0 or step == steps - 1:
            log("train_loss", float(value.detach()), step)
    return model.eval()


@torch.no_grad()
def slot_accuracy(model: GPT, kind: str, data: np.ndarray, answer_start: int, slots: np.ndarray,
                  device: str) -> float:
    """Accuracy of the argmax at each slot given the true rest (MDM: only that slot masked; AR: the true prefix):
    the one-hop skill every decoder relies on."""
    x = torch.from_numpy(data.astype(np.int64)).to(device)
    a = data.shape[1] - answer_start
    hits = []
    for j in slots:
        inp = x.clone()
        if kind == "mdm":
            inp[:, answer_start + j] = MASK_ID
        pred = answer_logprobs(model, kind, inp, answer_start, a)[:, j].argmax(-1)
        hits.append((pred == x[:, answer_start + j]).float())
    return float(torch.stack(hits).mean())


def majority_accuracy(train_data: np.ndarray, test_data: np.ndarray, answer_start: int, slots: np.ndarray) -> float:
    """The trivial baseline: always predict the most frequent slot digit of the training set."""
    train_digits = train_data[:, answer_start + slots].ravel()
    mode = np.bincount(train_digits).argmax()
    return float((test_data[:, answer_start + slots] == mode).mean())
