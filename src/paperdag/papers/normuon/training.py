"""One language-model training run with AdamW, Muon or NorMuon on the shared tiny transformer.

Every run of a given seed starts from the same initial weights and sees the same batches in the same order, so the
three optimizers differ only in how they turn gradients into updates. Learning rates follow one schedule for all:
linear warm-up over ``warmup`` steps, then linear decay to ``final_lr_frac`` of the peak at the last step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from paperdag.common.corpus import sample_batch
from paperdag.common.transformer import GPT, GPTConfig

from .optim import Muon, NorMuon, state_bytes
from .params import AdamWParams, ModelParams, MuonParams, TrainParams

Batches = list[tuple[torch.Tensor, torch.Tensor]]
Log = Callable[[str, float, int], None]  # (metric name, value, step)


@dataclass(frozen=True)
class RunConfig:
    """Hyper-parameters of one run. ``lr`` is the peak rate of the hidden matrices' optimizer; ``aux_lr`` that of
    the AdamW handling embeddings, head and norms (for ``adamw`` runs both are ``lr``); ``beta2`` is NorMuon's
    (None in AdamW runs)."""

    optimizer: str
    lr: float
    aux_lr: float
    weight_decay: float
    beta2: float | None
    steps: int
    warmup: int
    final_lr_frac: float
    batch_size: int
    eval_every: int
    seed: int


@dataclass(frozen=True)
class RunResult:
    """One run's curves (evaluated at ``step``; ``row_cv`` is NaN at step 0) and its optimizer state sizes."""

    config: RunConfig
    step: list[int]
    val_loss: list[float]
    row_cv: list[float]
    state_bytes: int
    hidden_state_bytes: int


def model_config(m: ModelParams) -> GPTConfig:
    """The shared tiny transformer's shape (byte vocabulary)."""
    return GPTConfig(context=m.context, n_layer=m.n_layer, n_head=m.n_head, d_model=m.d_model)


def _config(optimizer: str, lr: float, aux_lr: float, wd: float, beta2: float | None, t: TrainParams,
            seed: int) -> RunConfig:  # fmt: skip
    return RunConfig(optimizer, lr, aux_lr, wd, beta2, steps=t.steps, warmup=t.warmup_steps,
                     final_lr_frac=t.final_lr_frac, batch_size=t.batch_size, eval_every=t.eval_every, seed=seed)


def adamw_config(t: TrainParams, adamw: AdamWParams, lr: float, seed: int) -> RunConfig:
    """AdamW on every parameter at peak ``lr`` (weight decay on the hidden matrices only)."""
    return _config("adamw", lr, lr, adamw.weight_decay, None, t, seed)


def muon_config(t: TrainParams, muon: MuonParams, optimizer: str, lr: float, seed: int) -> RunConfig:
    """``optimizer`` ("muon" or "normuon") on the hidden matrices at peak ``lr``; AdamW at ``muon.aux_lr`` elsewhere."""
    return _config(optimizer, lr, muon.aux_lr, muon.weight_decay, muon.normuon_beta2, t, seed)


def make_optimizers(model: GPT, cfg: RunConfig) -> tuple[torch.optim.Optimizer, torch.optim.Optimizer]:
    """(optimizer of the hidden matrices, AdamW of everything else). Weight decay only on hidden matrices. The
    attention's fused Q, K, V projection is one 3d x d hidden matrix: Muon and NorMuon orthogonalise it as one block."""
    hidden = model.hidden_matrices()
    hidden_ids = {id(p) for p in hidden}
    rest = [p for p in model.parameters() if id(p) not in hidden_ids]
    aux = torch.optim.AdamW(rest, lr=cfg.aux_lr, betas=(0.9, 0.95), weight_decay=0.0)
    if cfg.optimizer == "adamw":
        main: torch.optim.Optimizer = torch.optim.AdamW(
            hidden, lr=cfg.lr, betas=(0.9, 0.95), weight_decay=cfg.weight_decay
        )
    elif cfg.optimizer == "muon":
        main = Muon(hidden, lr=cfg.lr, weight_decay=cfg.weight_decay)
    elif cfg.optimizer == "normuon":
        main = NorMuon(hidden, lr=cfg.lr, weight_decay=cfg.weight_decay, beta2=cfg.beta2)
    else:
        raise ValueError(f"unknown optimizer {cfg.optimizer!r} (known: adamw, muon, normuon)")
    return main, aux


def lr_factor(step: int, steps: int, warmup: int, final_frac: float) -> float:
    """Schedule multiplier at 1-based ``step``: step / warmup while warming up, then linear from 1 to final_frac."""
    if step <= warmup:
        return step / warmup
    return 1.0 - (1.0 - final_frac) * (step - warmup) / max(1, steps - warmup)


@torch.no_grad()
def validation_loss(model: GPT, batches: Batches, device: str) -> float:
    """Mean cross-entropy (nats per byte) over the fixed validation batches."""
    model.eval()
    losses = [model.loss(x.to(device), y.to(device)).item() for x, y in batches]
    model.train()
    return float(np.mean(losses))


def row_norm_cv(update: torch.Tensor) -> float:
    """Coefficient of variation std(r) / mean(r) of the row (output-neuron) norms r_i = ||D_i||_2 of an update."""
    r = update.float().norm(dim=1)
    return float(r.std(unbiased=False) / r.mean().clamp_min(1e-30))


@torch.no_grad()
def applied_update(before: torch.Tensor, after: torch.Tensor, lr: float, weight_decay: float) -> torch.Tensor:
    """The direction D of a decoupled step W' = W (1 - lr wd) - lr D, recovered as (W (1 - lr wd) - W') / lr."""
    return (before * (1 - lr * weight_decay) - after) / lr


def train_run(
    model_cfg: GPTConfig,
    cfg: RunConfig,
    train_tokens: np.ndarray,
    val_batches: Batches,
    device: str,
    log: Log,
) -> RunResult:
    """Train from the seed's initial weights; return the validation curve, row-CV curve and state size.

    At step 0 and every ``eval_every`` steps (and the last) the validation loss is measured and, for steps >= 1,
    the mean over hidden matrices of ``row_norm_cv`` of that step's applied update. (Wall time is measured apart,
    in ``benchmark``, so that these results stay deterministic.)
    """
    torch.manual_seed(cfg.seed)
    model = GPT(model_cfg).to(device)
    main, aux = make_optimizers(model, cfg)
    hidden = model.hidden_matrices()
    gen = torch.Generator().manual_seed(cfg.seed)
    steps_logged, val_curve, cv_curve = [0], [validation_loss(model, val_batches, device)], [float("nan")]
    log("val_loss", val_curve[0], 0)
    for step in range(1, cfg.steps + 1):
        factor = lr_factor(step, cfg.steps, cfg.warmup, cfg.final_lr_frac)
        for opt, peak in ((main, cfg.lr), (aux, cfg.aux_lr)):
            for group in opt.param_groups:
                group["lr"] = peak * factor
        x, y = sample_batch(train_tokens, cfg.batch_size, model_cfg.context, gen)
        loss = model.loss(x.to(device), y.to(device))
        loss.backward()
        record = step % cfg.eval_every == 0 or step == cfg.steps
        before = [p.detach().clone() for p in hidden] if record else []
        main.step()
        aux.step()
        main.zero_grad(set_to_none=True)
        aux.zero_grad(set_to_none=True)
        log("train_loss", loss.item(), step)
        if record:
            lr = cfg.lr * factor
            cvs = [row_norm_cv(applied_update(b, p.detach(), lr, cfg.weight_decay)) for b, p in zip(before, hidden)]
            steps_logged.append(step)
            val_curve.append(validation_loss(model, val_batches, device))
            cv_curve.append(float(np.mean(cvs)))
            log("val_loss", val_curve[-1], step)
            log("update_row_cv", cv_curve[-1], step)
    return RunResult(cfg, steps_logged, val_curve, cv_curve, state_bytes(main) + state_bytes(aux), state_bytes(main))
