"""The four trained models of one seed and every compared distribution they induce, position by position."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from paperdag.common.transformer import GPT, GPTConfig
from paperdag.io import load_tensors

from .combine import combine_all
from .lm import next_token_logprobs

BASE = ("p0", "q1", "q2")
METHODS = ("q_full", "cp_delta", "cp_k", "scp_delta_r")  # the unprotected model, the two baselines, the method


@dataclass
class Models:
    """p0 (base), q1 and q2 (one shard each) and q_full (both shards)."""

    nets: dict[str, GPT]

    @classmethod
    def load(cls, cfg: GPTConfig, paths: dict[str, Path], device: str) -> Models:
        nets = {}
        for name, path in paths.items():
            net = GPT(cfg).to(device)
            net.load_state_dict(load_tensors(path, device))
            nets[name] = net.eval()
        return cls(nets)

    def logprobs(self, ids: torch.Tensor, keep_mass: float, last: int = 0) -> dict[str, torch.Tensor]:
        """log-probabilities (B, T, 256) of p0, q1, q2 and of every method in METHODS at every position of ids (or
        the ``last`` ones)."""
        base = {name: next_token_logprobs(self.nets[name], ids, last) for name in (*BASE, "q_full")}
        return {name: base[name] for name in BASE} | combine_all(base["p0"], base["q1"], base["q2"], base["q_full"],
                                                                  keep_mass)
