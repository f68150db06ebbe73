"""Throughput of the batched simulators: tensor kernels per ``step`` call (deterministic) and env steps per second.

A batched simulator's step is a fixed sequence of tensor operations whatever the number n of environments, so the
kernel count per call is constant in n and the kernels per environment step fall as 1/n. The kernels are counted
with a TorchDispatchMode (every ATen operator call); steps per second = n * calls / wall seconds, which depends on
the machine and its load and is reported for information only.
"""

from __future__ import annotations

import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .envs import SPECS, make_env


class _OpCounter(TorchDispatchMode):
    """Counts ATen operator calls dispatched inside the ``with`` block."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def measure(env_name: str, n: int, calls: int, device: str, seed: int) -> dict[str, float]:
    """Kernels per step call, and env steps per second over ``calls`` step calls, for n environments."""
    gen = torch.Generator(device).manual_seed(seed)
    env = make_env(env_name, n, device)
    env.reset(gen)
    action = torch.rand(n, SPECS[env_name].act_dim, generator=gen, device=device) * 2 - 1
    with _OpCounter() as counter:
        env.step(action)
    start = time.perf_counter()
    for _ in range(calls):
        env.step(action)
    if device == "cuda":
        torch.cuda.synchronize()
    return {"kernels_per_call": float(counter.count), "steps_per_second": n * calls / (time.perf_counter() - start)}
