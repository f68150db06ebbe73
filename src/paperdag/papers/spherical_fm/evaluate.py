"""Stage ``evaluate``: feature-space metrics of every generator, dataset (pixel space, the autoencoder's latent
space), budget, seed and step count against the photo crops' test images, the trivial generators' ladder (a Gaussian
fitted to the training images, or to their codes, mapping the generators' evaluation noise, replay of training
images, the training image nearest to each Gaussian draw), a real-vs-real reference and the training images (codes)
projected to the mean-norm sphere (the floor of any generator on it; decoded for the latent space), the latent
generators' ceiling (the decoded training codes),
the trivial classifiers of the photo crops' labels (k-NN and logistic regression on the raw crops, the most frequent
label), the regime (regime.py), the claims (claims.py) and the figures (plots.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import torch

from paperdag.claims import write_metrics
from paperdag.common.baselines.generators import nearest_neighbour_retrieval, replay
from paperdag.io import load_tensors, read_json, save_figure, write_table
from paperdag.stage import StageContext

from .autoencoder import SOURCE
from .claims import NATURAL, FeatureSpace, Measured, Scores, claims
from .data import DATASETS, load_split, to_model_space
from .features import N_CLASSES, SCALE_BLIND, blind_file, classifier_file, standardise
from .flows import eval_noise, gaussian_baseline
from .geometry import project_to_sphere
from .metrics import featurize, frechet_distance, label_frequencies, score
from .networks import Classifier
from .observation import LABELLED, chance
from .params import Params
from .plots import (
    plot_budget_sweep,
    plot_labels,
    plot_metric_vs_steps,
    plot_observation,
    plot_samples,
)
from .prepare import DATA_FILE
from .labelled import LABELS_FILE
from .probes import CORRECT_FILE, LABELLED_FILE, OBSERVATION_FILE
from .regime import coupling_agreement, saturated_fraction
from .stats import per_seed, summarize
from .train import LATENT, SAMPLES_FILE, load_autoencoder, to_uint8
from .trivial import gaussian_mixture, trivial_classifiers

METRICS = ("fd", "one_nn", "precision", "recall", "label_tv")
TRIVIAL = ("gaussian", "gmm", "replay", "retrieval")  # the trivial generators' ladder (claims.py)


def score_dataset(ctx: StageContext[Params], methods: list[str], dataset: str) -> tuple[list[dict], Scores, dict]:
    """(score rows of every method, budget, seed and step count and of the references; the claims' numbers; what the
    figures need) for one generator dataset. The latent flows generate photo crops (decoded): they are scored against
    the photo crops' test split in the same feature space, and their trivial Gaussian, sphere floor and OT coupling
    live in the latent space (decoded to images); their ceiling is the decoded training codes (reconstructions)."""
    p, n = ctx.params, ctx.params.flow.n_samples
    images = SOURCE if dataset == LATENT else dataset
    (X_tr, _), (X_te, y_te) = (load_split(ctx.input("prepare", DATA_FILE), images, s) for s in ("train", "test"))
    X_tr, X_te = (torch.as_tensor(to_model_space(a)) for a in (X_tr, X_te))
    net = Classifier(X_te.shape[1], p.features.hidden, p.features.feat_dim, N_CLASSES[images])
    net.load_state_dict(load_tensors(ctx.input("train_features", classifier_file(images))))
    real = featurize(net.eval(), X_te[:n])
    feature_correct = (featurize(net, X_te)[1] == y_te).astype(float)

    def image_score(images: torch.Tensor) -> dict[str, float]:  # 8-bit images -> metrics against the test images
        return score(real, featurize(net, images.float() / 127.5 - 1), p.metrics.knn_k)

    budgets = p.flow.budgets[dataset]
    samples = {m: load_tensors(ctx.input(f"train_{m}_{dataset}", SAMPLES_FILE))["samples"] for m in methods}
    sweep = [dict(dataset=dataset, method=m, budget=b, seed=s, steps=k, **image_score(samples[m][i, s, j]))
             for m in methods for i, b in enumerate(budgets) for s in range(p.flow.n_seeds)
             for j, k in enumerate(p.flow.sample_steps)]
    rows = [r for r in sweep if r["budget"] == budgets[-1]]  # the claims' budget
    if dataset == LATENT:  # the generators' space: the scaled codes, decoded x = D(s z)
        ae, space, scale = load_autoencoder(ctx)
        with torch.no_grad():
            ceiling: dict[str, torch.Tensor] = {"reconstruction": to_uint8(ae.decode(scale * space[:n]))}

        def to_image(z: torch.Tensor) -> torch.Tensor:
            with torch.no_grad():
                return ae.decode(scale * z)
    else:
        space, ceiling = X_tr, {}

        def to_image(z: torch.Tensor) -> torch.Tensor:
            return z
    drawn = to_image(gaussian_baseline(space, eval_noise(n, space.shape[1], p.seed)))
    pool = X_tr.numpy()
    sphere = to_image(project_to_sphere(space[:n], float(space.norm(dim=1).mean())))  # SFM's S_R (train.py's radius)
    if dataset == NATURAL:  # the mixture rung on the judged pixel space only (EM in 192 dims is the evaluate's cost)
        mixed, k_mix = gaussian_mixture(pool.astype(np.float64), p.metrics.gmm_components, n, p.seed)
        mixture_images = {"gmm": to_uint8(torch.as_tensor(mixed, dtype=X_tr.dtype))}
    else:
        mixture_images, k_mix = {}, 0
    reference_images = {"gaussian": to_uint8(drawn), **mixture_images,
                        "replay": to_uint8(torch.as_tensor(replay(pool, n, ctx.rng))),
                        "retrieval": to_uint8(torch.as_tensor(nearest_neighbour_retrieval(pool, pool, drawn.numpy()))),
                        "real_train": to_uint8(X_tr[:n]), "sphere_train": to_uint8(sphere), **ceiling}
    reference = {k: image_score(v) for k, v in reference_images.items()}
    baselines = [dict(dataset=dataset, method=r, budget=0, seed=0, steps=0, **v) for r, v in reference.items()]
    blind = scale_blind_space(ctx, dataset, X_te, y_te, samples, budgets, reference_images) \
        if dataset == SCALE_BLIND else None
    same, pairs = coupling_agreement(space, p.flow.batch, p.metrics.coupling_batches,
                                     torch.Generator().manual_seed(p.seed))
    scores = Scores(per_seed(rows, ("method", "steps"), "fd"), {k: reference[k]["fd"] for k in TRIVIAL if k in reference},
                    reference["real_train"]["fd"], feature_correct, chance(y_te), same, pairs,
                    {b: per_seed([r for r in sweep if r["budget"] == b], ("method", "steps"), "fd") for b in budgets},
                    reference["sphere_train"]["fd"], blind, reference.get("reconstruction", {}).get("fd"))
    k = N_CLASSES[images]
    low = {m: label_frequencies(featurize(net, samples[m][-1, 0, 0].float() / 127.5 - 1)[1], k) for m in methods}
    figures = {"summary": summarize(rows, ("method", "steps"), METRICS), "reference": reference,
               "samples": {m: samples[m][-1, 0] for m in methods}, "real": to_uint8(X_te),
               "labels": low | {"real test": label_frequencies(real[1], k)}, "gmm_components": k_mix}
    return sweep + baselines, scores, figures


def scale_blind_space(ctx: StageContext[Params], dataset: str, X_te: torch.Tensor, y_te: np.ndarray,
                      samples: dict[str, torch.Tensor], budgets: list[int],
                      references: dict[str, torch.Tensor]) -> FeatureSpace:
    """The FDs at the claims' budget (per method, step count and seed) and of the references in the scale-blind
    feature space: the features of the classifier trained on per-crop standardised crops (features.standardise),
    applied to the standardised test crops, samples and reference images (8-bit, as in the project's space)."""
    p, n = ctx.params, ctx.params.flow.n_samples
    net = Classifier(X_te.shape[1], p.features.hidden, p.features.feat_dim, N_CLASSES[dataset])
    net.load_state_dict(load_tensors(ctx.input("train_features", blind_file(dataset))))
    net.eval()
    real = featurize(net, standardise(X_te[:n]))[0]

    def fd(images: torch.Tensor) -> float:
        return frechet_distance(real, featurize(net, standardise(images.float() / 127.5 - 1))[0])

    last = len(budgets) - 1
    per = {(m, k): np.array([fd(samples[m][last, s, j]) for s in range(p.flow.n_seeds)])
           for m in samples for j, k in enumerate(p.flow.sample_steps)}
    ref = {k: fd(v) for k, v in references.items()}
    correct = (featurize(net, standardise(X_te))[1] == y_te).astype(float)
    return FeatureSpace(per, {k: ref[k] for k in TRIVIAL if k in ref}, ref["real_train"], ref["sphere_train"],
                        correct)


def evaluate(ctx: StageContext[Params], methods: list[str], datasets: list[str]) -> dict[str, float]:
    """scores.parquet (one row per dataset, method, budget, seed, step count), metrics.json with the claims, five
    figures (each with a panel or row block per dataset)."""
    p, table, scores, figures = ctx.params, [], {}, {}
    for d in datasets:
        rows, scores[d], figures[d] = score_dataset(ctx, methods, d)
        table += rows
    write_table(ctx.output("scores.parquet"), pa.Table.from_pylist(table))
    observation = read_json(ctx.input("train_probes", OBSERVATION_FILE))
    right = {k: v.numpy().astype(float) for k, v in load_tensors(ctx.input("train_probes", CORRECT_FILE)).items()}
    data = ctx.input("prepare", DATA_FILE)
    labels = ctx.input("prepare_labels", LABELS_FILE)
    measured = Measured(scores, observation, {d: saturated_fraction(load_split(data, d, "train")[0]) for d in DATASETS}
                        | {LABELLED: saturated_fraction(load_split(labels, LABELLED, "train")[0])},
                        {k.split(".", 1)[1]: v for k, v in right.items() if k.startswith(f"{NATURAL}.")},
                        trivial_classifiers(*load_split(data, NATURAL, "train"), *load_split(data, NATURAL, "test")),
                        read_json(ctx.input("train_probes", LABELLED_FILE)),
                        {k.split(".", 1)[1]: v for k, v in right.items() if k.startswith(f"{LABELLED}.")},
                        trivial_classifiers(*load_split(labels, LABELLED, "train"),
                                            *load_split(labels, LABELLED, "test")))
    metrics: dict[str, float] = {}
    for d, s in scores.items():
        summary, reference = figures[d]["summary"], figures[d]["reference"]
        metrics |= {f"{v}_{d}_{m}_{k}": c.mean for (m, k), cs in summary.items() for v, c in cs.items()}
        metrics |= {f"fd_{d}_{m}_{k}_ci_lo": cs["fd"].lo for (m, k), cs in summary.items()}
        metrics |= {f"fd_{d}_{m}_{k}_ci_hi": cs["fd"].hi for (m, k), cs in summary.items()}
        metrics |= {f"fd_{d}_{m}_{k}_budget{b}": float(v.mean()) for b, fd in s.sweep.items()
                    for (m, k), v in fd.items()}
        metrics |= {f"{v}_{d}_{b}": x for b, r in reference.items() for v, x in r.items()}
        metrics |= {f"feature_accuracy_{d}": float(s.feature_correct.mean()),
                    f"coupling_agreement_{d}": s.coupling_same / s.coupling_pairs}
        if s.blind is not None:
            b = s.blind
            metrics |= {f"fd_{d}_scale_blind_{m}_{k}": float(v.mean()) for (m, k), v in b.fd.items()}
            metrics |= {f"fd_{d}_scale_blind_{r}": v for r, v in b.trivial_fd.items()}
            metrics |= {f"fd_{d}_scale_blind_real_train": b.real_fd, f"fd_{d}_scale_blind_sphere_train": b.sphere_fd,
                        f"feature_accuracy_{d}_scale_blind": float(b.feature_correct.mean())}
        if figures[d]["gmm_components"]:
            metrics[f"gmm_components_{d}"] = float(figures[d]["gmm_components"])
    metrics |= {f"{d}_{s}_{k}": x for d, by in observation.items() for s, r in by.items() for k, x in r.items()}
    metrics |= {f"saturated_fraction_{d}": v for d, v in measured.saturated.items()}
    metrics |= {f"{LABELLED}_{s}_{k}": float(np.mean(v)) for s, r in measured.labelled.items() for k, v in r.items()}
    for name, found in ((NATURAL, measured.classifiers), (LABELLED, measured.labelled_classifiers)):
        metrics |= {f"trivial_accuracy_{name}_{k}": float(v.mean())  # keys that do not move with the chosen k or C
                    for k, v in zip(("knn", "logistic", "majority"), found.values(), strict=True)}
    write_metrics(ctx.out, metrics, claims(measured, p.flow.sample_steps, p.claims, p.plans))

    steps = p.flow.sample_steps
    save_figure(plot_samples({d: f["samples"] for d, f in figures.items()}, steps,
                             {d: f["real"] for d, f in figures.items()}), ctx.output("samples.png"))
    save_figure(plot_metric_vs_steps({d: f["summary"] for d, f in figures.items()}, methods, steps,
                                     {d: f["reference"] for d, f in figures.items()}), ctx.output("metric_vs_steps.png"))
    save_figure(plot_observation(observation), ctx.output("observation.png"))
    save_figure(plot_budget_sweep(scores[NATURAL].sweep, scores[NATURAL].trivial_fd["gaussian"], methods, steps,
                                  p.claims.max_fd_ratio), ctx.output("budget_sweep.png"))
    save_figure(plot_labels({d: f["labels"] for d, f in figures.items()}, steps[0]), ctx.output("labels.png"))
    return {k: v for k, v in metrics.items() if k.startswith(("fd_", "feature"))}
