"""The prepared tables: the pretraining pairs (q, y) ~ D and the per-prompt mixture weights, and their loaders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from paperdag.io import read_table, write_table

from .task import Task, sample_response


def write_pairs(path: Path, rng: np.random.Generator, task: Task, n: int) -> None:
    """data.parquet: n pairs, q ~ Uniform(prompts), y ~ D(. | q); columns q, a, b, response (content tokens)."""
    qs = rng.integers(len(task.prompts), size=n)
    prompts = task.prompts[torch.as_tensor(qs)].numpy()
    write_table(path, {"q": qs, "a": prompts[:, 0], "b": prompts[:, 1],
                       "response": [sample_response(rng, task, int(q)) for q in qs]})


def write_prompts(path: Path, task: Task) -> None:
    """prompts.parquet: q, a, b, answer c and the mixture weights (w_chain, w_guess, w_noise) of D(. | q)."""
    p = task.prompts.numpy()
    w = task.weights
    write_table(path, {"q": np.arange(len(p)), "a": p[:, 0], "b": p[:, 1], "answer": task.answers.numpy(),
                       "w_chain": w[:, 0], "w_guess": w[:, 1], "w_noise": w[:, 2]})


def load_task(path: Path, modulus: int, max_len: int, guess_bias: float, variant: str = "chain") -> Task:
    """The Task of prompts.parquet."""
    t = read_table(path)
    weights = np.stack([t[c].to_numpy() for c in ("w_chain", "w_guess", "w_noise")], 1)
    return Task(modulus, max_len, guess_bias, weights, variant)


def stage_name(stage: str, variant: str) -> str:
    """The name of ``stage`` for a task variant: ``stage`` itself for ``chain``, ``stage_<variant>`` otherwise."""
    return stage if variant == "chain" else f"{stage}_{variant}"


def load_pairs(path: Path, max_len: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(N, 2) prompts, (N, L) 0-padded responses and (N,) content lengths of data.parquet."""
    t = read_table(path)
    rows = t["response"].to_pylist()
    responses = torch.zeros(len(rows), max_len, dtype=torch.long)
    for i, r in enumerate(rows):
        responses[i, : len(r)] = torch.as_tensor(r, dtype=torch.long)
    prompts = torch.stack([torch.tensor(t[c].to_numpy()) for c in ("a", "b")], 1).long()  # a copy: Arrow's is read-only
    return prompts, responses, torch.tensor([len(r) for r in rows])
