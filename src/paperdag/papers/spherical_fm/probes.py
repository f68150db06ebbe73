"""Stage ``train_probes``: the observation (observation.py) on every dataset, in [0, 1] pixels and in the
generators' [-1, 1] space: the accuracies, and each probe's right / wrong per test image (the claims' units)."""

from __future__ import annotations

import torch

from paperdag.io import save_tensors, write_json
from paperdag.stage import StageContext

from .data import DATASETS, load_split, to_model_space
from .observation import REPRESENTATIONS, chance, norm_cv, represent
from .params import Params
from .prepare import DATA_FILE
from .training import accuracy, train_classifier

OBSERVATION_FILE = "observation.json"
CORRECT_FILE = "probe_correct.safetensors"
SCALES = {"unit": lambda p: p, "model": to_model_space}  # [0, 1] pixels, and x = 2 p - 1


def train_probes(ctx: StageContext[Params]) -> dict[str, float]:
    """observation.json: {dataset: {scale: {cv, chance, acc_<representation>}}}; probe_correct.safetensors:
    {"<dataset>.<scale>.<representation>": 1 / 0 per test image (uint8)}."""
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
    write_json(ctx.output(OBSERVATION_FILE), found)
    save_tensors(ctx.output(CORRECT_FILE), right)
    return {f"{d}_{s}_{k}": v for d in found for s in found[d] for k, v in found[d][s].items()}
