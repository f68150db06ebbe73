"""Stage ``train_probes``: the observation (observation.py) on every dataset, in [0, 1] pixels and in the
generators' [-1, 1] space: the accuracies, and each probe's right / wrong per test image (the claims' units); on the
scikit-image crops labelled by image (labelled.py, the judged labels) one probe per representation for each of
``labels.probe_seeds`` probe seeds (seed root * 1000 + s: the initialisation and the minibatches)."""

from __future__ import annotations

import torch

from paperdag.io import save_tensors, write_json
from paperdag.stage import StageContext

from .data import DATASETS, load_split, to_model_space
from .labelled import LABELS_FILE
from .observation import LABELLED, REPRESENTATIONS, chance, norm_cv, represent
from .params import Params
from .prepare import DATA_FILE
from .training import accuracy, train_classifier

OBSERVATION_FILE = "observation.json"
CORRECT_FILE = "probe_correct.safetensors"
LABELLED_FILE = "labelled_observation.json"
SCALES = {"unit": lambda p: p, "model": to_model_space}  # [0, 1] pixels, and x = 2 p - 1


def train_probes(ctx: StageContext[Params]) -> dict[str, float]:
    """observation.json: {dataset: {scale: {cv, chance, acc_<representation>}}}; labelled_observation.json:
    {scale: {cv, chance, acc_<representation>: [one per probe seed]}} of the scikit-image crops;
    probe_correct.safetensors: {"<dataset>.<scale>.<representation>": 1 / 0 per test image (uint8)} and
    {"skimage.<scale>.<representation>": 1 / 0 [probe seed, test image]}."""
    p, found, right = ctx.params.probe, {}, {}
    for dataset in DATASETS:
        (P_tr, y_tr), (P_te, y_te) = (load_split(ctx.input("prepare", DATA_FILE), dataset, s) for s in ("train", "test"))
        for scale, f in SCALES.items():
            X_tr, X_te = (torch.as_tensor(f(a), device=ctx.device) for a in (P_tr, P_te))
            ys = [torch.as_tensor(y, device=ctx.device) for y in (y_tr, y_te)]
            row = {"cv": norm_cv(f(P_tr)), "chance": chance(y_te)}
            for kind in REPRESENTATIONS:
                R_tr, R_te = represent(X_tr, X_te, kind)
                gen = torch.Generator(ctx.device).manual_seed(ctx.params.seed)
                net = train_classifier(R_tr, ys[0], p.hidden, p.feat_dim, p.steps, p.batch, p.lr, gen)
                row[f"acc_{kind}"] = accuracy(net, R_te, ys[1])
                with torch.no_grad():
                    right[f"{dataset}.{scale}.{kind}"] = (net(R_te).argmax(1) == ys[1]).to(torch.uint8).cpu()
            found.setdefault(dataset, {})[scale] = row
    labelled, n_seeds = {}, ctx.params.labels.probe_seeds
    (P_tr, y_tr), (P_te, y_te) = (load_split(ctx.input("prepare_labels", LABELS_FILE), LABELLED, s)
                                  for s in ("train", "test"))
    ys = [torch.as_tensor(y, device=ctx.device) for y in (y_tr, y_te)]
    for scale, f in SCALES.items():
        X_tr, X_te = (torch.as_tensor(f(a), device=ctx.device) for a in (P_tr, P_te))
        row = {"cv": norm_cv(f(P_tr)), "chance": chance(y_te)}
        for kind in REPRESENTATIONS:
            R_tr, R_te = represent(X_tr, X_te, kind)
            accs, outcomes = [], []
            for s in range(n_seeds):
                torch.manual_seed(ctx.params.seed * 1000 + s)
                gen = torch.Generator(ctx.device).manual_seed(ctx.params.seed * 1000 + s)
                net = train_classifier(R_tr, ys[0], p.hidden, p.feat_dim, p.steps, p.batch, p.lr, gen,
                                       int(y_tr.max()) + 1)
                accs.append(accuracy(net, R_te, ys[1]))
                with torch.no_grad():
                    outcomes.append((net(R_te).argmax(1) == ys[1]).to(torch.uint8).cpu())
            row[f"acc_{kind}"] = accs
            right[f"{LABELLED}.{scale}.{kind}"] = torch.stack(outcomes)
        labelled[scale] = row
    write_json(ctx.output(LABELLED_FILE), labelled)
    write_json(ctx.output(OBSERVATION_FILE), found)
    save_tensors(ctx.output(CORRECT_FILE), right)
    return {f"{d}_{s}_{k}": v for d in found for s in found[d] for k, v in found[d][s].items()} | {
        f"{LABELLED}_{s}_{k}": float(sum(v) / len(v)) if isinstance(v, list) else v
        for s, r in labelled.items() for k, v in r.items()}
