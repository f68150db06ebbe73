"""Stage ``train_<method>_<dataset>``: pretrain ``n_seeds`` networks of one method (or the supervised upper bound) on
one dataset's training split (seed indices train.first_seed + s), ``train.seed_batch`` seeds at a time as one batched
network (pretrain.pretrain_seeds / supervise_seeds; a batch of 1 runs the plain per-seed loop, pretrain.pretrain /
supervise); stage ``gate_<dataset>_<k>``: BayesNCL at point k of the gate grid (its prior p0 and gate learning rate;
every other setting the recipe's) on the first ``sweep.n_seeds`` seeds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from paperdag.io import save_tensors
from paperdag.stage import StageContext

from .data import DATASETS, N_CLASSES, load_split
from .params import Params, TrainParams
from .prepare import DATA_FILE
from .pretrain import Recipe, pretrain, pretrain_seeds, supervise, supervise_seeds

WEIGHTS_FILE = "weights.safetensors"
SUPERVISED = "supervised"  # the supervised upper bound on the same backbone


def run_seed(root: int, dataset: str, s: int) -> int:
    """The torch seed of pretraining run s on ``dataset``: shared by every method (common random numbers)."""
    return int(np.random.SeedSequence([root, DATASETS.index(dataset), s]).generate_state(1)[0])


def recipe(t: TrainParams) -> Recipe:
    """The training recipe of ``t``: every setting but which seeds run and how many train together."""
    return Recipe(**t.model_dump(exclude={"n_seeds", "first_seed", "seed_batch"}))


def train(ctx: StageContext[Params], method: str, dataset: str, point: int | None = None) -> dict[str, float]:
    """weights.safetensors ({"s<k>.<parameter>": tensor} for every seed k); curves of loss, KL and kept share.
    ``method`` "supervised" trains the supervised upper bound (pretrain.supervise) on the training labels; ``point``
    k trains BayesNCL at gate-grid point k (p0, gate_lr = sweep.points[k]) on the first sweep.n_seeds seeds."""
    p, r = ctx.params, recipe(ctx.params.train)
    n_seeds = p.train.n_seeds
    if point is not None:
        p0, gate_lr = p.sweep.points[point]
        r, n_seeds = replace(r, p0=p0, gate_lr=gate_lr), p.sweep.n_seeds
    split = load_split(ctx.input("prepare", DATA_FILE), dataset, "train", p.data.image_size)
    x = split["x"].to(ctx.device)
    weights, last = {}, []
    for first in range(0, n_seeds, p.train.seed_batch):
        chunk = list(range(first, min(first + p.train.seed_batch, n_seeds)))
        seeds = [run_seed(p.seed, dataset, p.train.first_seed + s) for s in chunk]

        def log(step: int, stats: dict[str, torch.Tensor | float], chunk: list[int] = chunk) -> None:
            ctx.report(f"seeds {chunk[0]}-{chunk[-1]} step", step + 1, r.steps)
            if step % 10 == 0 or step == r.steps - 1:
                values = {name: torch.as_tensor(v).reshape(-1).tolist() for name, v in stats.items()}
                for i, s in enumerate(chunk):
                    for name, v in values.items():
                        ctx.log_metric(name, v[i], step, run=f"seed{s}", params={"seed": s})
                    if step == r.steps - 1:
                        last.append({name: v[i] for name, v in values.items()})

        if method == SUPERVISED:
            y = split["label"].to(ctx.device)
            nets = ([supervise(x, y, N_CLASSES[dataset], r, seeds[0])] if len(chunk) == 1
                    else supervise_seeds(x, y, N_CLASSES[dataset], r, seeds))
        elif len(chunk) == 1:
            nets = [pretrain(x, method, r, seeds[0], log)]
        else:
            nets = pretrain_seeds(x, method, r, seeds, log)
        for s, net in zip(chunk, nets):
            weights |= {f"s{s}.{k}": v for k, v in net.state_dict().items()}
    save_tensors(ctx.output(WEIGHTS_FILE), weights, metadata={"method": method, "dataset": dataset})
    return {f"final_{k}": float(np.mean([st[k] for st in last])) for k in last[0]} if last else {}
