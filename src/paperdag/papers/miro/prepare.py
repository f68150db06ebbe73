"""Stage ``prepare``: the imperfect captioned scenes, the reward detector and the evaluator trained on disjoint clean
renders, every training image's rewards and quantile bins, and the rewards of held-out renders with each corruption
alone (dataset.py), with their provenance."""

from __future__ import annotations

import hashlib

import torch

from paperdag.io import save_tensors, write_json
from paperdag.stage import StageContext

from .dataset import build
from .params import Params
from .rewards import REWARDS

DATA_FILE = "dataset.safetensors"
DETECTOR_FILE = "detector.safetensors"
EVALUATOR_FILE = "evaluator.safetensors"
CHECKS_FILE = "annotations.json"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """dataset.safetensors (images, tokens, flags, rewards, bins, prompts, sanity), detector.safetensors (the reward
    detector), evaluator.safetensors (GenEval's), annotations.json (their held-out accuracy) and provenance.json."""
    a = build(ctx.params.data, ctx.params.rewards, ctx.rng, ctx.device)
    save_tensors(ctx.output(DATA_FILE), {
        "images": torch.as_tensor(a.images), "tokens": torch.as_tensor(a.tokens), "flags": torch.as_tensor(a.flags),
        "rewards": torch.as_tensor(a.rewards), "bins": torch.as_tensor(a.bins), "prompts": torch.as_tensor(a.prompts),
        "sanity": torch.as_tensor(a.sanity),
    }, metadata={"rewards": ",".join(REWARDS)})
    save_tensors(ctx.output(DETECTOR_FILE), a.detector.state_dict())
    save_tensors(ctx.output(EVALUATOR_FILE), a.evaluator.state_dict())
    checks = {f"{net}_{k}": v for net, acc in a.accuracy.items() for k, v in acc.items()}
    checks["clean_pairs"] = float((~a.flags.any(1)).mean())
    write_json(ctx.output(CHECKS_FILE), checks)
    write_json(ctx.output("provenance.json"), {
        "source": "procedural (no download): scenes.py renders seeded from numpy PCG64 (seed, stage)",
        "model": "16x16 RGB two-object scenes with captions; imperfect pairs: mismatch, blur, noise, dull",
        "seed": ctx.params.seed, "torch": torch.__version__,
        "sha256": hashlib.sha256(ctx.output(DATA_FILE).read_bytes()).hexdigest(),
    })
    return checks
