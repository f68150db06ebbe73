"""The four trained models of one seed and every compared distribution they induce, position by position."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from paperdag.common.transformer import GPT, GPTConfig
from paperdag.io import load_tensors

from .combine import combine_all, scp_delta_r
from .lm import continuation_logprobs, next_token_logprobs

TRAINED = ("p0", "q1", "q2", "q_full")
BASE = ("p0", "q1", "q2")
METHODS = ("q_full", "cp_delta", "cp_k", "scp_delta_r")  # the unprotected model, the two baselines, the method


@dataclass
class Models:
    """p0 (base), q1 and q2 (one shard each) and q_full (both shards), evaluated in float64 (the certificates are
    those of the float64 evaluation of the stored weights)."""

    nets: dict[str, GPT]

    @classmethod
    def load(cls, cfg: GPTConfig, paths: dict[str, Path], device: str) -> Models:
        nets = {}
        for name, path in paths.items():
            net = GPT(cfg)
            net.load_state_dict(load_tensors(path))
            nets[name] = net.double().to(device).eval()
        return cls(nets)

    def trained(self, ids: torch.Tensor, last: int = 0) -> dict[str, torch.Tensor]:
        """log-probabilities (B, T, 256) of p0, q1, q2 and q_full at every position of ids (or the ``last`` ones)."""
        return {name: next_token_logprobs(self.nets[name], ids, last) for name in TRAINED}

    def continuations(self, prompt: torch.Tensor, suffixes: torch.Tensor) -> dict[str, torch.Tensor]:
        """log-probabilities (n, S + 1, 256) of p0, q1, q2 and q_full after the prompt and each suffix's prefixes."""
        return {name: continuation_logprobs(self.nets[name], prompt, suffixes) for name in TRAINED}

    def logprobs(self, ids: torch.Tensor, keep_mass: float, last: int = 0) -> dict[str, torch.Tensor]:
        """log-probabilities (B, T, 256) of p0, q1, q2 and of every method in METHODS."""
        return with_methods(self.trained(ids, last), keep_mass)


def with_methods(trained: dict[str, torch.Tensor], keep_mass: float) -> dict[str, torch.Tensor]:
    """p0, q1, q2 and every method in METHODS from the trained models' log-probabilities."""
    return {name: trained[name] for name in BASE} | combine_all(trained["p0"], trained["q1"], trained["q2"],
                                                                 trained["q_full"], keep_mass)


def scp_at(trained: dict[str, torch.Tensor], keep_mass: float) -> torch.Tensor:
    """SCP-Delta_r's log-probabilities at another ``keep_mass`` (the sparsity sweep)."""
    return scp_delta_r(trained["p0"], trained["q1"], trained["q2"], keep_mass)[0]
