"""Stage ``evaluate``: feature-space metrics of every generator, budget, seed and step count against the MNIST test images,
the trivial Gaussian generator (one draw per seed) and a real-vs-real reference, the regime (regime.py), the claims
(claims.py) and the figures (plots.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import torch

from paperdag.claims import write_metrics
from paperdag.io import load_tensors, read_json, save_figure, write_table
from paperdag.stage import StageContext

from .claims import Measured, claims
from .data import DATASETS, load_split, to_model_space
from .features import CLASSIFIER_FILE
from .flows import gaussian_baseline
from .metrics import featurize, label_frequencies, score
from .networks import Classifier
from .observation import chance
from .params import Params
from .plots import (
    plot_budget_sweep,
    plot_labels,
    plot_metric_vs_steps,
    plot_observation,
    plot_samples,
)
from .prepare import DATA_FILE
from .probes import OBSERVATION_FILE
from .regime import coupling_agreement, saturated_fraction
from .stats import per_seed, summarize
from .train import SAMPLES_FILE, to_uint8

METRICS = ("fd", "one_nn", "precision", "recall", "label_tv")


def evaluate(ctx: StageContext[Params], methods: list[str]) -> dict[str, float]:
    """scores.parquet (one row per method, budget, seed, step count), metrics.json with the claims, five figures."""
    p, n = ctx.params, ctx.params.flow.n_samples
    (X_tr, _), (X_te, y_te) = (load_split(ctx.input("prepare", DATA_FILE), "mnist", s) for s in ("train", "test"))
    X_tr, X_te = (torch.as_tensor(to_model_space(a)) for a in (X_tr, X_te))
    net = Classifier(X_te.shape[1], p.features.hidden, p.features.feat_dim)
    net.load_state_dict(load_tensors(ctx.input("train_features", CLASSIFIER_FILE)))
    real = featurize(net.eval(), X_te[:n])
    feature_acc = float((torch.as_tensor(featurize(net, X_te)[1]) == torch.as_tensor(y_te)).float().mean())

    def image_score(images: torch.Tensor) -> dict[str, float]:  # 8-bit images -> metrics against the test images
        return score(real, featurize(net, images.float() / 127.5 - 1), p.metrics.knn_k)

    samples = {m: load_tensors(ctx.input(f"train_{m}", SAMPLES_FILE))["samples"] for m in methods}
    sweep = [dict(method=m, budget=b, seed=s, steps=k, **image_score(samples[m][i, s, j]))
             for m in methods for i, b in enumerate(p.flow.budgets) for s in range(p.flow.n_seeds)
             for j, k in enumerate(p.flow.sample_steps)]
    rows = [r for r in sweep if r["budget"] == p.flow.budgets[-1]]  # the claims' budget
    gaussians = [image_score(to_uint8(gaussian_baseline(X_tr, n, torch.Generator().manual_seed(p.seed + s))))
                 for s in range(p.flow.n_seeds)]
    reference = {"gaussian": gaussians[0], "real_train": image_score(to_uint8(X_tr[:n]))}
    baselines = [dict(method="gaussian", budget=0, seed=s, steps=0, **v) for s, v in enumerate(gaussians)]
    baselines.append(dict(method="real_train", budget=0, seed=0, steps=0, **reference["real_train"]))
    write_table(ctx.output("scores.parquet"), pa.Table.from_pylist(sweep + baselines))

    summary = summarize(rows, ("method", "steps"), METRICS)
    observation = read_json(ctx.input("train_probes", OBSERVATION_FILE))
    same, pairs = coupling_agreement(X_tr, p.flow.batch, p.metrics.coupling_batches,
                                     torch.Generator().manual_seed(p.seed))
    measured = Measured(
        per_seed(rows, ("method", "steps"), "fd"), np.array([g["fd"] for g in gaussians]),
        reference["real_train"]["fd"], feature_acc, chance(y_te), observation,
        {d: saturated_fraction(load_split(ctx.input("prepare", DATA_FILE), d, "train")[0]) for d in DATASETS},
        same, pairs, {b: per_seed([r for r in sweep if r["budget"] == b], ("method", "steps"), "fd")
                      for b in p.flow.budgets})
    metrics = {f"{v}_{m}_{k}": c.mean for (m, k), cs in summary.items() for v, c in cs.items()}
    metrics |= {f"fd_{m}_{k}_ci_lo": cs["fd"].lo for (m, k), cs in summary.items()}
    metrics |= {f"fd_{m}_{k}_ci_hi": cs["fd"].hi for (m, k), cs in summary.items()}
    metrics |= {f"fd_{m}_{k}_budget{b}": float(v.mean()) for b, fd in measured.sweep.items() for (m, k), v in fd.items()}
    metrics |= {f"{v}_{b}": x for b, r in reference.items() for v, x in r.items()} | {"feature_accuracy": feature_acc}
    metrics |= {f"{d}_{s}_{k}": x for d, by in observation.items() for s, r in by.items() for k, x in r.items()}
    metrics |= {"fd_gaussian_seed_mean": float(measured.gaussian_fd.mean()), "coupling_agreement": same / pairs}
    metrics |= {f"saturated_fraction_{d}": v for d, v in measured.saturated.items()}
    write_metrics(ctx.out, metrics, claims(measured, p.flow.sample_steps, p.claims))

    save_figure(plot_samples({m: samples[m][-1, 0] for m in methods}, p.flow.sample_steps, to_uint8(X_te)),
                ctx.output("samples.png"))
    save_figure(plot_metric_vs_steps(summary, methods, p.flow.sample_steps, reference),
                ctx.output("metric_vs_steps.png"))
    save_figure(plot_observation(observation), ctx.output("observation.png"))
    save_figure(plot_budget_sweep(measured.sweep, measured.gaussian_fd.mean(), methods, p.flow.sample_steps,
                                  p.claims.max_fd_ratio),
                ctx.output("budget_sweep.png"))
    low = {m: label_frequencies(featurize(net, samples[m][-1, 0, 0].float() / 127.5 - 1)[1]) for m in methods}
    save_figure(plot_labels(low | {"real test": label_frequencies(real[1])}, p.flow.sample_steps[0]),
                ctx.output("labels.png"))
    return {k: v for k, v in metrics.items() if k.startswith(("fd_", "feature"))}
