"""Wall time per step of each optimizer on the same model and batch, measured alone (not while stages share cores).

For each optimizer: one forward/backward gives gradients, then ``n`` timed calls of the hidden-matrix optimizer's
``step`` (gradients kept) and ``n`` timed full training steps (forward, backward, both optimizers). Medians in ms.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from paperdag.common.transformer import GPT, GPTConfig

from .training import RunConfig, make_optimizers


def _median_ms(fn: Callable[[], None], n: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def time_optimizer(
    model_cfg: GPTConfig, cfg: RunConfig, batch: tuple[torch.Tensor, torch.Tensor], device: str, n: int
) -> dict[str, float]:
    """Median milliseconds of the hidden-matrix optimizer step and of a full training step."""
    torch.manual_seed(cfg.seed)
    model = GPT(model_cfg).to(device)
    main, aux = make_optimizers(model, cfg)
    x, y = batch[0].to(device), batch[1].to(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def optimizer_step() -> None:
        main.step()
        sync()

    def full_step() -> None:
        model.loss(x, y).backward()
        main.step()
        aux.step()
        main.zero_grad(set_to_none=True)
        aux.zero_grad(set_to_none=True)
        sync()

    model.loss(x, y).backward()
    opt_ms = _median_ms(optimizer_step, n)
    main.zero_grad(set_to_none=True)
    aux.zero_grad(set_to_none=True)
    return {"optimizer_step_ms": opt_ms, "train_step_ms": _median_ms(full_step, n)}

