"""One language-model training run of one connection (residual, HC or mHC) on the shared tiny transformer.

Run k of every connection uses seed + k: the same batches in the same order and the same seeded initialisation of
the shared parts' shapes. All three get the same optimizer and schedule: AdamW (betas 0.9, 0.95) at peak ``lr``,
linear warm-up over ``warmup`` steps then linear decay to ``final_lr_frac`` of the peak, the global gradient norm
clipped at ``grad_clip`` (its pre-clip value is what the stability analysis reads).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from paperdag.common.corpus import sample_batch
from paperdag.common.transformer import GPTConfig

from .gain import mixing_gain
from .model import StreamConfig, StreamGPT, build_model
from .params import ModelParams, SweepParams, TrainParams

Batches = list[tuple[torch.Tensor, torch.Tensor]]
Log = Callable[[str, float, int], None]  # (metric name, value, step)


def model_configs(m: ModelParams, width: int | None = None) -> tuple[GPTConfig, StreamConfig]:
    """The substrate's GPT shape (byte vocabulary) at stream width ``width`` (default ``m.d_model``) and the
    hyper-connection settings."""
    return (GPTConfig(context=m.context, n_layer=m.n_layer, n_head=m.n_head, d_model=width or m.d_model),
            StreamConfig(m.n_streams, m.init_mix, m.gate_init, m.sinkhorn_iters))


def cell_setup(m: ModelParams, t: TrainParams, s: SweepParams, cell: str) -> tuple[GPTConfig, StreamConfig,
                                                                                   TrainParams]:
    """Model shape and budget of a cell: ``base`` as configured; ``stress<i>`` at peak lr t.lr * lr_factors[i] for
    ``s.steps`` steps; ``narrow`` at width ``m.narrow_d_model``."""
    if cell.startswith("stress"):
        return (*model_configs(m), t.model_copy(update={"lr": t.lr * s.lr_factors[int(cell[6:])], "steps": s.steps}))
    if cell not in ("base", "narrow"):
        raise ValueError(f"unknown cell {cell!r}")
    return (*model_configs(m, m.narrow_d_model if cell == "narrow" else None), t)


@dataclass
class RunResult:
    """Per step: training loss and pre-clip gradient norm. Per evaluation (step 0, the last warm-up step, where the
    stability measures start counting, every ``eval_every`` and the last; an evaluation draws no random numbers):
    validation loss and the composite mixing gain (1 for the residual) on the first validation batch."""

    kind: str
    seed: int
    train_loss: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    eval_step: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    gain_forward: list[float] = field(default_factory=list)
    gain_backward: list[float] = field(default_factory=list)
    gain_layer_max: list[float] = field(default_factory=list)
    state: dict[str, torch.Tensor] = field(default_factory=dict)


def decays(name: str, p: nn.Parameter) -> bool:
    """Whether a parameter gets weight decay: the >= 2-D ``weight`` of a linear or embedding layer; never a norm
    gain, a gate or a connection bias (b_pre, b_post and the 2-D b_res)."""
    return p.ndim >= 2 and name.rsplit(".", 1)[-1] == "weight"


def make_optimizer(model: nn.Module, t: TrainParams) -> torch.optim.AdamW:
    """AdamW with weight decay on the matrices of linear and embedding layers only (``decays``)."""
    decay = [p for n, p in model.named_parameters() if decays(n, p)]
    rest = [p for n, p in model.named_parameters() if not decays(n, p)]
    return torch.optim.AdamW([{"params": decay, "weight_decay": t.weight_decay}, {"params": rest, "weight_decay": 0.0}],
                             lr=t.lr, betas=(0.9, 0.95))


def lr_factor(step: int, steps: int, warmup: int, final_frac: float) -> float:
    """Schedule multiplier at 1-based ``step``: step / warmup while warming up, then linear from 1 to final_frac."""
    if step <= warmup:
        return step / warmup
    return 1.0 - (1.0 - final_frac) * (step - warmup) / max(1, steps - warmup)


@torch.no_grad()
def evaluate_model(model: nn.Module, batches: Batches, device: str) -> tuple[float, tuple[float, float, float]]:
    """(mean cross-entropy over the batches, (forward, backward, single-layer) gain on the first batch)."""
    model.eval()
    losses, gain = [], (1.0, 1.0, 1.0)
    for i, (x, y) in enumerate(batches):
        losses.append(model.loss(x.to(device), y.to(device)).item())
        if i == 0 and isinstance(model, StreamGPT):
            g = mixing_gain(model.last_res)
            gain = (g.forward, g.backward, g.layer_max)
    model.train()
    return float(np.mean(losses)), gain


def train_run(kind: str, model_cfg: GPTConfig, stream_cfg: StreamConfig, t: TrainParams, seed: int,
              tokens: np.ndarray, val: Batches, device: str, log: Log) -> RunResult:
    """Train connection ``kind`` from seed ``seed`` for ``t.steps`` steps; return its curves and final weights."""
    torch.manual_seed(seed)
    model = build_model(kind, model_cfg, stream_cfg).to(device)
    opt = make_optimizer(model, t)
    gen = torch.Generator().manual_seed(seed)
    res = RunResult(kind, seed)

    def record(step: int) -> None:
        loss, (fwd, bwd, layer) = evaluate_model(model, val, device)
        for lst, v in ((res.val_loss, loss), (res.gain_forward, fwd), (res.gain_backward, bwd),
                       (res.gain_layer_max, layer)):
            lst.append(v)
        res.eval_step.append(step)
        log("val_loss", loss, step)
        log("gain_forward", fwd, step)
        log("gain_backward", bwd, step)

    record(0)
    for step in range(1, t.steps + 1):
        for group in opt.param_groups:
            group["lr"] = t.lr * lr_factor(step, t.steps, t.warmup_steps, t.final_lr_frac)
        x, y = sample_batch(tokens, t.batch_size, model_cfg.context, gen)
        loss = model.loss(x.to(device), y.to(device))
        loss.backward()
        norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), t.grad_clip))
        opt.step()
        opt.zero_grad(set_to_none=True)
        res.train_loss.append(loss.item())
        res.grad_norm.append(norm)
        log("train_loss", res.train_loss[-1], step)
        log("grad_norm", norm, step)
        if step % t.eval_every == 0 or step in (t.warmup_steps, t.steps):
            record(step)
    res.state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    return res
