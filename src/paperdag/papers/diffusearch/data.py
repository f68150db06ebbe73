"""The prepared program table: draw distinct train and test programs, store them, load them as token arrays."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from paperdag.io import read_table

from .task import execute, is_sequential, render, sample_program


def draw_programs(rng: np.random.Generator, k: int, p_var: float, shuffle_prob: float, n_train: int,
                  n_test: int) -> dict[str, list]:
    """Columns prompt, answer, value, sequential, split. Test programs are drawn first, distinct, and a training
    draw whose prompt is a test prompt is redrawn, so no test program is seen in training."""
    cols: dict[str, list] = {"prompt": [], "answer": [], "value": [], "sequential": [], "split": []}
    test_prompts: set[str] = set()
    for split, n in (("test", n_test), ("train", n_train)):
        drawn = 0
        while drawn < n:
            program = sample_program(rng, k, p_var, shuffle_prob)
            prompt, answer = render(program)
            if prompt in test_prompts:
                continue
            if split == "test":
                test_prompts.add(prompt)
            for name, v in zip(cols, (prompt, answer, execute(program)[program.query], is_sequential(program), split),
                               strict=True):
                cols[name].append(v)
            drawn += 1
    return cols


def load_split(path: Path, split: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(tokens (n, L) int64, answer values (n,), sequential flags (n,), answer start) of one split."""
    t = read_table(path).to_pydict()
    rows = [i for i, s in enumerate(t["split"]) if s == split]
    texts = [t["prompt"][i] + t["answer"][i] for i in rows]
    tokens = np.stack([np.frombuffer(s.encode(), dtype=np.uint8) for s in texts]).astype(np.int64)
    start = len(t["prompt"][rows[0]])
    return tokens, np.array([t["value"][i] for i in rows]), np.array([t["sequential"][i] for i in rows]), start


