"""Equivariance certificates of a denoiser, computed in float64 on real targets with noisy peptides.

With f the denoiser (atom coordinates -> noise vectors, which transform by the linear part only):
    rotation error   = max |f(Qx + b) - Q f(x)| / max |f(x)|,  Q a Haar-random proper rotation, b a random shift,
    reflection error = max |f(Px) - P f(x)| / max |f(x)|,      P = diag(-1, 1, 1),
    improper error   = the same for the improper rotation PQ with shift b.
A polar denoiser passes when all three are below ``equiv_tol``; an axial one when its rotation error is below
``equiv_tol`` and its reflection error exceeds ``reflection_min_violation`` (it can tell the hands apart).
"""

from __future__ import annotations

import numpy as np
import torch

from .batches import to_arrays, to_torch
from .geometry import MIRROR, mirror
from .model import Denoiser
from .params import CertificateParams

N_TARGETS = 4  # targets the certificate batch is built from
NOISE_A = 2.0  # Gaussian noise (A) added to the native peptide atoms
SHIFT_A = 5.0  # scale of the random translation b (A)


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """Haar-random proper rotation: Q from the QR decomposition of a Gaussian matrix, sign-fixed, det +1."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def transform_error(model: Denoiser, batch: dict[str, torch.Tensor], Q: np.ndarray, shift: np.ndarray) -> float:
    """max |f(Qx + b) - Q f(x)| / max |f(x)|: f maps atom coordinates to noise vectors, which transform by Q only."""
    q = torch.as_tensor(Q, dtype=torch.float64)
    b = torch.as_tensor(shift, dtype=torch.float64)
    keys = ("pep_mask", "pos_feat", "t", "pocket_aa", "pocket_mask")
    with torch.no_grad():
        base = model(batch["pep_x"], *(batch[k] for k in keys[:3]), batch["pocket_x"], *(batch[k] for k in keys[3:]))
        mask = batch["pep_mask"][..., None, None]
        moved = model((batch["pep_x"] @ q.T + b) * mask, *(batch[k] for k in keys[:3]), batch["pocket_x"] @ q.T + b,
                      *(batch[k] for k in keys[3:]))
    return float((moved - base @ q.T).abs().max() / base.abs().max())


def equivariance_errors(model: Denoiser, targets: list[dict], pocket_max: int, rng: np.random.Generator
                        ) -> dict[str, float]:
    """Rotation (+ translation), reflection and improper-rotation errors on the first N_TARGETS targets at t = 0.5."""
    targets = targets[:N_TARGETS]
    batch = to_torch(to_arrays(targets, pocket_max), np.arange(len(targets)), "cpu", torch.float64)
    batch["pep_x"] = batch["pep_x"] + torch.as_tensor(rng.normal(scale=NOISE_A, size=batch["pep_x"].shape)) * \
        batch["pep_mask"][..., None, None]
    batch["t"] = torch.full((len(targets),), 0.5, dtype=torch.float64)
    Q = random_rotation(rng)
    shift = rng.normal(scale=SHIFT_A, size=3)
    return {"rotation_error": transform_error(model, batch, Q, shift),
            "reflection_error": transform_error(model, batch, MIRROR, np.zeros(3)),
            "improper_rotation_error": transform_error(model, batch, MIRROR @ Q, shift)}


def judge(errors: dict[str, float], axial: bool, p: CertificateParams) -> dict[str, bool]:
    """The verdicts of the module docstring: rotation_ok, reflection_equivariant and passes."""
    rotation_ok = errors["rotation_error"] < p.equiv_tol
    reflection_equivariant = max(errors["reflection_error"], errors["improper_rotation_error"]) < p.equiv_tol
    reflection = errors["reflection_error"] > p.reflection_min_violation if axial else reflection_equivariant
    return {"rotation_ok": rotation_ok, "reflection_equivariant": reflection_equivariant,
            "passes": rotation_ok and reflection}


def worst_errors(per_seed: list[dict[str, float]], axial: bool) -> dict[str, float]:
    """The worst of several networks' errors for ``judge``: the largest rotation error; the largest reflection and
    improper errors of polar networks (which must be small), the smallest of axial ones (which must be large). The
    variant passes on these iff every network passes."""
    pick = min if axial else max
    return {"rotation_error": max(e["rotation_error"] for e in per_seed),
            "reflection_error": pick(e["reflection_error"] for e in per_seed),
            "improper_rotation_error": pick(e["improper_rotation_error"] for e in per_seed)}


def design_mirror_deviation(designs: list[dict], targets: list[dict]) -> float:
    """max over paired samples of |design on mirrored target - mirror(design on target)| (A); 0 up to rounding for
    a reflection-equivariant denoiser fed mirrored noise."""
    by_key = {(d["train_seed"], d["target_index"], d["sample"], d["target_hand"]): np.asarray(d["xyz"])
              for d in designs}
    dev = 0.0
    for (seed, k, s, hand), xyz in by_key.items():
        if hand == "L":
            center = np.asarray(targets[k]["pocket_xyz"]).reshape(-1, 4, 3)[:, 1].mean(0)
            twin = mirror(xyz.reshape(-1, 3), center)
            dev = max(dev, float(np.abs(twin - by_key[(seed, k, s, "D")].reshape(-1, 3)).max()))
    return dev
