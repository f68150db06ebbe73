"""One cell (seed, d, r, L) of the study: its task, real data, initialisation, reference network and methods.

Every method trains the same network (same initialisation, same two-phase algorithm, network.train) on a different
training set, and is scored by the relative test error on the same fresh test rows:
  reference       phase 1 on n_phase1 real rows, phase 2 on n_phase2 real rows (the full-data network);
  random_features no phase 1 (W_1 = W_0), phase 2 on the real rows (what the one step adds);
  distilled       phase 1 on a gradient-matched set of M1 points, phase 2 on a performance-matched set of M2 points;
  random_subset   M random real points used for both phases, ridge lam chosen on validation (baselines.py);
  random_phase1   phase 1 on M random real points, phase 2 on the real rows (baselines.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .distill import Schedule, match_gradient, match_performance
from .network import Init, Network, correlation, features, phase1, relative_error, ridge, symmetric_init, train
from .task import Task, make_task, task_rng


@dataclass(frozen=True)
class Config:
    """Sizes and hyper-parameters shared by every cell (see params.py for their meaning)."""

    n_phase1: int
    n_phase2: int
    n_test: int
    step: float
    bias_std: float
    ridge: float
    schedule: Schedule
    temperature: float
    batch: int


@dataclass(frozen=True)
class Cell:
    """Task, real data, initialisation, the full-data target G_D(W_0) and the reference network of one cell."""

    seed: int
    d: int
    r: int
    width: int
    task: Task
    real1: tuple[Tensor, Tensor]
    real2: tuple[Tensor, Tensor]
    test: tuple[Tensor, Tensor]
    init: Init
    target: Tensor
    reference: Network


def _stream(*key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(list(key)))


def build_cell(seed: int, d: int, r: int, width: int, cfg: Config, device: str = "cpu") -> Cell:
    """Draw the cell's data (task streams) and initialisation (SeedSequence([seed, d, r, L])); train the reference."""
    task = make_task(seed, d, r, device=device, dtype=torch.float64)
    real1 = task.sample(task_rng(seed, d, r, "phase1"), cfg.n_phase1)
    real2 = task.sample(task_rng(seed, d, r, "phase2"), cfg.n_phase2)
    test = task.sample(task_rng(seed, d, r, "test"), cfg.n_test)
    gen = torch.Generator().manual_seed(int(_stream(seed, d, r, width).integers(2**62)))
    init = symmetric_init(gen, d, width, cfg.bias_std, dtype=torch.float64, device=device)
    reference = train(init, real1, real2, cfg.step, cfg.ridge)
    return Cell(seed, d, r, width, task, real1, real2, test, init, correlation(init.W0, *real1), reference)


def error(cell: Cell, net: Network) -> float:
    """Relative test error of ``net`` on the cell's test rows."""
    return relative_error(net, *cell.test)


def random_features(cell: Cell, cfg: Config) -> Network:
    """The network without phase 1: ridge on relu(W_0 x + b) fitted to the phase-2 real rows."""
    X, y = cell.real2
    return Network(cell.init.W0, cell.init.b, ridge(features(cell.init.W0, cell.init.b, X), y, cfg.ridge))


def real_points(cell: Cell, m: int, phase: int) -> tuple[Tensor, Tensor]:
    """m distinct random real rows of the phase-``phase`` data (their own stream per (cell, m, phase))."""
    X, y = cell.real1 if phase == 1 else cell.real2
    idx = torch.as_tensor(_stream(cell.seed, cell.d, cell.r, cell.width, m, phase).choice(len(y), m, replace=False))
    return X[idx.to(X.device)], y[idx.to(X.device)]


def distill_phase1(cell: Cell, m: int, cfg: Config) -> tuple[Tensor, Tensor, float]:
    """(X~, y~, final matching loss): the gradient-matched phase-1 set of m points, started from real rows."""
    X, y, curve = match_gradient(cell.init.W0, cell.target, real_points(cell, m, 1)[0], cfg.schedule, cfg.temperature)
    return X, y, curve[-1]


def distill_phase2(cell: Cell, W1: Tensor, m: int, cfg: Config) -> tuple[Tensor, Tensor, float]:
    """(X~, y~, final loss): the performance-matched phase-2 set of m points for first layer W1."""
    gen = torch.Generator().manual_seed(int(_stream(cell.seed, cell.d, cell.r, cell.width, m, 3).integers(2**62)))
    X, y, curve = match_performance(W1, cell.init.b, cfg.ridge, cell.real2, *real_points(cell, m, 2), cfg.schedule,
                                    cfg.batch, gen)
    return X, y, curve[-1]


def with_real_phase2(cell: Cell, W1: Tensor, cfg: Config) -> Network:
    """First layer W1 with the second layer fitted on the real phase-2 rows (scores a phase-1 set alone)."""
    return Network(W1, cell.init.b, ridge(features(W1, cell.init.b, cell.real2[0]), cell.real2[1], cfg.ridge))


def first_layer(cell: Cell, X: Tensor, y: Tensor, cfg: Config) -> Tensor:
    """W_1 produced by phase 1 on the set (X, y) from the cell's initialisation."""
    return phase1(cell.init, X, y, cfg.step)


def fit_second_layer(cell: Cell, W1: Tensor, X: Tensor, y: Tensor, cfg: Config) -> Network:
    """The network with first layer W1 and the ridge second layer fitted on the set (X, y)."""
    return Network(W1, cell.init.b, ridge(features(W1, cell.init.b, X), y, cfg.ridge))
