"""Wall time of a training step of each connection on the same shape and batch (eager PyTorch, no fused kernels).

The connections are timed in interleaved rounds (one step of each per round, after one warm-up step each), so a
change of machine load hits all of them alike; the median over rounds is reported in milliseconds. The
FLOP count of one forward pass (torch.utils.flop_counter: matrix products; on the CPU path the fused attention kernel
is not counted) is reported beside it: it is deterministic where the time is not, so only the FLOPs enter a verdict.

The share of mHC's map projection in those FLOPs has a closed form. Per token and sub-layer, mHC projects the
flattened stream (n C values) to its 2n + n^2 map coefficients, n^2 (n + 2) C multiply-accumulates, while the
sub-layer it wraps costs 4 C^2 (attention: qkv and output projections) or 2 r C^2 (MLP, hidden width r C), on
average (4 + 2 r) C^2 / 2. Hence

    share(C) = 2 n^2 (n + 2) / ((4 + 2 r) C),        at most ``m`` once  C >= 2 n^2 (n + 2) / ((4 + 2 r) m),

which falls as 1 / C: at width 32 the projection costs half a sub-layer (n = 4, r = 4), at the paper's widths
(thousands) under 1%.
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


def map_flop_share(n_streams: int, width: int, mlp_ratio: int) -> float:
    """share(C) = 2 n^2 (n + 2) / ((4 + 2 r) C): mHC's map-projection MACs over those of the sub-layer it wraps."""
    return 2 * n_streams**2 * (n_streams + 2) / ((4 + 2 * mlp_ratio) * width)


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
