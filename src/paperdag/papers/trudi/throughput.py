"""Throughput of the batched simulators, counted in tensor kernels per ``step`` call (deterministic).

A batched simulator's step is a fixed sequence of tensor operations whatever the number n of environments, so the
kernel count per call is constant in n and the kernels per environment step fall as 1/n. The kernels are counted
with a TorchDispatchMode (every ATen operator call). Wall-clock steps per second depend on the machine and its load,
so they are no part of a cached output (a result must be a function of its cache key).
"""

from __future__ import annotations

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


def kernels_per_call(env_name: str, n: int, device: str, seed: int) -> dict[str, float]:
    """Kernels dispatched by one step call of n environments, and kernels per environment step (that count / n)."""
    gen = torch.Generator(device).manual_seed(seed)
    env = make_env(env_name, n, device)
    env.reset(gen)
    action = torch.rand(n, SPECS[env_name].act_dim, generator=gen, device=device) * 2 - 1
    with _OpCounter() as counter:
        env.step(action)
    return {"kernels_per_call": float(counter.count), "kernels_per_env_step": counter.count / n}
