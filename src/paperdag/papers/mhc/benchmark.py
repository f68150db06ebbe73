"""What a training step of each connection costs: matrix-product FLOPs counted on a ladder of widths (a property of
the architecture, deterministic) and, at the trained widths, eager wall time (reported, never judged).

FLOPs. torch.utils.flop_counter counts the matrix products (mm, bmm, addmm) of one forward and backward pass of an
untrained model on one window, always on the CPU (there the fused attention kernel, the same in every connection,
is not counted, so the ratios below are upper bounds of the full model's). Per token, with width C, L blocks, MLP
ratio r, vocabulary V and n streams, the forward pass multiplies and accumulates

    residual:  L (4 + 2 r) C^2 + V C                 (attention qkv and output, MLP, head)
    HC:        residual + 2 L . 2 n (n + 2) C         (theta: n (n + 2) C, H_pre x: n C, [H_res | H_post^T] [x; F]:
                                                       n (n + 1) C, per sub-layer)
    mHC:       residual + 2 L . n (n + 1) (n + 2) C   (phi: n^2 (n + 2) C, H_pre x: n C, the mixing n (n + 1) C)

and the backward pass twice as many (an input and a weight gradient per product), so a step counts 6 tokens MACs.
mHC's connection work per sub-layer over the sub-layer it wraps ((4 + 2 r) C^2 / 2 = (2 + r) C^2 on average) is

    share(C) = n (n + 1) (n + 2) / ((2 + r) C),      at most ``m`` once  C >= n (n + 1) (n + 2) / ((2 + r) m),

falling as 1 / C: at n = 4, r = 4 it is 20 / C, 31% at width 64, 10% at width 200, under 1% at the paper's widths
(thousands). The whole model's overhead is below the share (the head and attention scores add to the denominator).

Time. The connections are timed in interleaved rounds (one step of each per round, after one warm-up step each), so
a change of machine load hits all of them alike; the median over rounds is reported in milliseconds. Eager PyTorch
without fused kernels: the n-fold stream's memory traffic, which the paper's kernels fuse away, is all there.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from paperdag.common.transformer import GPTConfig

from .model import KINDS, StreamConfig, build_model
from .params import TrainParams
from .training import make_optimizer


def connection_macs(kind: str, n: int, width: int) -> int:
    """Forward multiply-accumulates per token and sub-layer of the connection's own matrix products (0, 2 n (n + 2)
    C for HC, n (n + 1) (n + 2) C for mHC)."""
    return {"residual": 0, "hc": 2 * n * (n + 2) * width, "mhc": n * (n + 1) * (n + 2) * width}[kind]


def analytic_step_flops(kind: str, cfg: GPTConfig, n: int, tokens: int) -> int:
    """Counted FLOPs of one training step (forward and backward: 3 x 2 x MACs) on ``tokens`` tokens."""
    c = cfg.d_model
    macs = cfg.n_layer * (4 + 2 * cfg.mlp_ratio) * c * c + cfg.vocab_size * c + 2 * cfg.n_layer * connection_macs(
        kind, n, c)
    return 6 * tokens * macs


def connection_flop_share(n: int, width: int, mlp_ratio: int) -> float:
    """share(C) = n (n + 1) (n + 2) / ((2 + r) C): mHC's connection MACs over those of the sub-layer it wraps."""
    return connection_macs("mhc", n, width) / ((2 + mlp_ratio) * width * width)


def step_flops(kind: str, cfg: GPTConfig, s: StreamConfig, window: torch.Tensor) -> int:
    """Counted matrix-product FLOPs of one forward and backward pass of an untrained model on ``window`` (1, T)
    (next-token targets: the window shifted by one), on the CPU."""
    torch.manual_seed(0)
    model = build_model(kind, cfg, s)
    with FlopCounterMode(display=False) as counter:
        model.loss(window[:, :-1], window[:, 1:]).backward()
    return int(counter.get_total_flops())


def flop_ladder(widths: list[int], cfg: GPTConfig, s: StreamConfig) -> dict[int, dict[str, int]]:
    """{width: {kind: counted FLOPs of a training step on one window of cfg.context tokens}}."""
    window = torch.arange(cfg.context + 1).reshape(1, -1) % cfg.vocab_size
    return {w: {k: step_flops(k, replace(cfg, d_model=w), s, window) for k in KINDS}
            for w in widths}


def step_times(kinds: list[str], model_cfg: GPTConfig, stream_cfg: StreamConfig, t: TrainParams,
               batch: tuple[torch.Tensor, torch.Tensor], device: str, rounds: int) -> dict[str, float]:
    """{kind: median over rounds of one training step's wall time in milliseconds}."""
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
    return {kind: 1e3 * float(np.median(times[kind])) for kind in kinds}
