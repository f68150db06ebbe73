"""Stage ``evaluate``: the scheme x defense accuracy table, the trivial ladder beside the surrogate, the claims
(claims.py) and the figures (plots.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import torch

from paperdag.claims import write_metrics
from paperdag.io import load_tensors, read_json, read_table, save_figure, write_table
from paperdag.stage import StageContext

from .baseline_ladder import LADDER_FILE
from .claims import claims, defense_average
from .defenses import DEFENSES
from .draws import DRAWS_FILE
from .labels import shift_labels
from .network import ensemble_rate, load_ensemble
from .params import Params
from .perturb import PERTURBED_FILE
from .plots import plot_accuracy_table, plot_examples
from .prepare import DATA_FILE
from .retrain import VICTIMS_FILE
from .surrogate import CLASSES, ENSEMBLE_FILE
from .verify import BUDGET_FILE

EXAMPLES = 2


def evaluate(ctx: StageContext[Params], schemes: list[str]) -> dict[str, float]:
    """accuracy.parquet (every victim), metrics.json, accuracy_table.png and examples.png; the trivial ladder
    (stage trivial_baselines) is the competence bar of the claims."""
    victims = pa.concat_tables([read_table(ctx.input(f"victims_{s}", VICTIMS_FILE)) for s in schemes])
    write_table(ctx.output("accuracy.parquet"), victims)
    rows = victims.to_pylist()
    acc = {(s, d): np.array([r["test_acc"] for r in rows if r["scheme"] == s and r["defense"] == d])
           for s in schemes for d in DEFENSES}
    fit = {(s, d): np.array([r["train_acc"] for r in rows if r["scheme"] == s and r["defense"] == d])
           for s in schemes for d in DEFENSES}
    draws = read_table(ctx.input("standard_draws", DRAWS_FILE))
    std = {s: np.asarray(draws.column(s).to_pylist()) for s in ("clean", "em", "synthetic")}
    budget = {r["scheme"]: r["ok"] for r in read_table(ctx.input("verify", BUDGET_FILE)).to_pylist()}
    sanity = read_json(ctx.input("train_surrogate", "sanity.json"))
    metrics = {f"acc_{s}_{d}": float(acc[s, d].mean()) for s in schemes for d in DEFENSES}
    metrics |= {f"train_acc_{s}_{d}": float(fit[s, d].mean()) for s in schemes for d in DEFENSES}
    metrics |= {f"acc_{s}_mean": float(defense_average(acc, s, list(DEFENSES)).mean()) for s in schemes}
    metrics |= {f"surrogate_{k}": v for k, v in sanity.items() if k.startswith("test_acc")}
    metrics |= {"schemes_within_budget": float(sum(budget.values()))}
    metrics |= {f"draws_acc_{s}_none": float(v.mean()) for s, v in std.items()}
    data = load_tensors(ctx.input("prepare", DATA_FILE))
    perturbed = {s: load_tensors(ctx.input(f"perturb_{s}", PERTURBED_FILE))["x"] for s in schemes[1:]}
    models = load_ensemble(load_tensors(ctx.input("train_surrogate", ENSEMBLE_FILE)), data["x_train"].shape[-1],
                           ctx.params.net.width, CLASSES)
    shifted = shift_labels(data["y_train"], ctx.params.dune.shift, CLASSES)
    for s, x in [("clean", data["x_train"]), *((s, perturbed[s]) for s in ("spatial", "colour", "dune"))]:
        metrics[f"surrogate_shift_rate_{s}"] = ensemble_rate(models, x, shifted)
    with torch.no_grad():  # per image: every checkpoint sends it to y'; the final checkpoint classifies it right
        hit = torch.stack([m(perturbed["spatial"]).argmax(1) == shifted for m in models]).all(0)
        surrogate = (models[-1](data["x_test"]).argmax(1) == data["y_test"]).double().numpy()
    ladder = read_table(ctx.input("trivial_baselines", LADDER_FILE))
    rungs = {name: np.asarray(ladder.column(name).to_pylist(), dtype=float) for name in ladder.column_names}
    metrics |= {"surrogate_test_acc": float(surrogate.sum() / surrogate.size),
                "trivial_best_test_acc": max(float(c.sum() / c.size) for c in rungs.values()),
                "spatial_hit_every_checkpoint": float(hit.double().mean())}
    write_metrics(ctx.out, metrics, claims(acc, fit, std, schemes, list(DEFENSES), budget, surrogate, rungs,
                                           (int(hit.sum()), hit.numel()), ctx.params.budget,
                                           ctx.params.defenses.at_eps, ctx.params.claims, ctx.params.plans))
    table = np.array([[acc[s, d].mean() for d in DEFENSES] for s in schemes])
    save_figure(plot_accuracy_table(table, schemes, list(DEFENSES)), ctx.output("accuracy_table.png"))
    examples = {s: x[:EXAMPLES] for s, x in perturbed.items()}
    save_figure(plot_examples(data["x_train"][:EXAMPLES], examples, amplify=4.0), ctx.output("examples.png"))
    return metrics
