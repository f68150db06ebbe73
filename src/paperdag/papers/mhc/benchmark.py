"""Wall time of a training step of each connection on the same shape and batch (eager PyTorch, no fused kernels).

The connections are timed in interleaved rounds (one step of each per round, after one warm-up step each), so a
change of machine load hits all of them alike; the median over rounds is reported in milliseconds. The
multiply-accumulate count of one forward pass (torch.utils.flop_counter: matrix products and attention only) is
reported beside it: it is deterministic where the time is not.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from paperdag.common.transformer import GPTConfig

from .model import StreamConfig, build_model
from .params import TrainParams
from .training import make_optimizer


def step_times(kinds: list[str], model_cfg: GPTConfig, stream_cfg: StreamConfig, t: TrainParams,
               batch: tuple[torch.Tensor, torch.Tensor], device: str, rounds: int) -> dict[str, dict[str, float]]:
    """{kind: {"train_step_ms": median over rounds, "forward_gflops": matmul FLOPs of one forward pass / 1e9}}."""
    x, y = batch[0].to(device), batch[1].to(device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    setups = {}
    for kind in kinds:
        torch.manual_seed(0)
        model = build_model(kind, model_cfg, stream_cfg).to(device)
        setups[kind] = (model, make_optimizer(model, t))
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for r in range(rounds + 1):
        for kind, (model, opt) in setups.items():
            t0 = time.perf_counter()
            model.loss(x, y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            sync()
            if r:  # round 0 warms up
                times[kind].append(time.perf_counter() - t0)
    out = {}
    for kind, (model, _) in setups.items():
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            model(x)
        out[kind] = {"train_step_ms": 1e3 * float(np.median(times[kind])),
                     "forward_gflops": counter.get_total_flops() / 1e9}
    return out
