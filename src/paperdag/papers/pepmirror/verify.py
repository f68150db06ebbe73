"""Stage ``verify``: equivariance/reflection certificates of both denoisers and a per-residue chirality, sequence
and quality record of every generated peptide."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from safetensors.torch import load_file

from paperdag.io import write_json, write_table
from paperdag.papers.pepmirror import batches, quality
from paperdag.papers.pepmirror.data import AA1
from paperdag.papers.pepmirror.geometry import (
    MIRROR,
    bond_lengths,
    chirality_volume,
    mirror,
    residue_hand,
)
from paperdag.papers.pepmirror.model import Denoiser
from paperdag.papers.pepmirror.seqhead import contact_features, make_classifier
from paperdag.papers.pepmirror.train import build_model
from paperdag.stage import StageContext

VARIANTS = ("polar", "axial")


def load_variant(folder, dtype: torch.dtype = torch.float64) -> tuple[Denoiser, dict]:
    """Denoiser and config saved by a train stage."""
    config = json.loads((folder / "config.json").read_text())
    model = build_model(config)
    model.load_state_dict(load_file(str(folder / "model.safetensors")))
    return model.to(dtype).eval(), config


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


def certificate(model: Denoiser, targets: list[dict], p, rng: np.random.Generator) -> dict[str, float]:
    """Rotation (+ translation) error and reflection error on real targets with noisy peptides (float64)."""
    arr = batches.to_arrays(targets, p.pocket_max)
    batch = batches.to_torch(arr, np.arange(len(targets)), "cpu", torch.float64)
    batch["pep_x"] = batch["pep_x"] + torch.as_tensor(rng.normal(scale=2.0, size=batch["pep_x"].shape)) * \
        batch["pep_mask"][..., None, None]
    batch["t"] = torch.full((len(targets),), 0.5, dtype=torch.float64)
    Q = random_rotation(rng)
    shift = rng.normal(scale=5.0, size=3)
    return {"rotation_error": transform_error(model, batch, Q, shift),
            "reflection_error": transform_error(model, batch, MIRROR, np.zeros(3)),
            "improper_rotation_error": transform_error(model, batch, MIRROR @ Q, shift)}


def assign_sequence(net: torch.nn.Module, pep: np.ndarray, pocket: np.ndarray, pocket_aa: np.ndarray,
                    contact_dist: float) -> tuple[str, float]:
    """Argmax residue types of the contact classifier and their mean log-probability."""
    with torch.no_grad():
        logp = torch.log_softmax(net(torch.as_tensor(contact_features(pep, pocket, pocket_aa, contact_dist))), -1)
    best = logp.max(-1)
    return "".join(AA1[i] for i in best.indices.tolist()), float(best.values.mean())


def verify(ctx: StageContext) -> dict[str, float]:
    """certificates.json (pass/fail with numbers) and designs_verified.parquet (one row per design)."""
    p = ctx.params
    rows = pq.read_table(ctx.inputs["prepare"] / "examples.parquet").to_pylist()
    targets = [r for r in rows if r["split"] == "target"]
    net = make_classifier()
    net.load_state_dict(load_file(str(ctx.inputs["train_seq"] / "seqhead.safetensors")))
    net.eval()
    certs, records, summary = {}, [], {}
    for name in VARIANTS:
        folder = ctx.inputs[f"train_{name}"]
        model, config = load_variant(folder)
        c = certificate(model, targets[:4], p, ctx.rng)
        designs = pq.read_table(folder / "designs.parquet").to_pylist()
        c["design_mirror_deviation_A"] = design_mirror_deviation(designs, targets)
        c["rotation_ok"] = c["rotation_error"] < p.equiv_tol
        c["reflection_equivariant"] = max(c["reflection_error"], c["improper_rotation_error"]) < p.equiv_tol
        c["passes"] = c["rotation_ok"] and (c["reflection_equivariant"] if name == "polar"
                                            else c["reflection_error"] > p.reflection_min_violation)
        c["model_version"] = config["version"]
        certs[name] = c
        records += [design_record(d, targets[d["target_index"]], name, net, p) for d in designs]
        summary |= {f"{name}_rotation_error": c["rotation_error"], f"{name}_reflection_error": c["reflection_error"]}
    certs["tolerances"] = {"equiv_tol": p.equiv_tol, "reflection_min_violation": p.reflection_min_violation,
                           "chirality_eps_A3": 0.5}
    write_json(ctx.out / "certificates.json", certs)
    write_table(ctx.out / "designs_verified.parquet", pa.Table.from_pylist(records))
    summary["all_certificates_pass"] = float(all(certs[v]["passes"] for v in VARIANTS))
    return summary


def design_mirror_deviation(designs: list[dict], targets: list[dict]) -> float:
    """max over paired samples of |design on mirrored target - mirror(design on target)| (A)."""
    by_key = {(d["target_index"], d["sample"], d["target_hand"]): np.asarray(d["xyz"]) for d in designs}
    dev = 0.0
    for (k, s, hand), xyz in by_key.items():
        if hand == "L":
            center = np.asarray(targets[k]["pocket_xyz"]).reshape(-1, 4, 3)[:, 1].mean(0)
            twin = mirror(xyz.reshape(-1, 3), center)
            dev = max(dev, float(np.abs(twin - by_key[(k, s, "D")].reshape(-1, 3)).max()))
    return dev


def design_record(d: dict, target: dict, variant: str, net: torch.nn.Module, p) -> dict:
    """Chirality per residue, assigned sequence and quality numbers of one design (in its target's frame)."""
    pep = np.asarray(d["xyz"]).reshape(-1, 4, 3)
    pocket = np.asarray(target["pocket_xyz"]).reshape(-1, 4, 3)
    native = np.asarray(target["pep_xyz"]).reshape(-1, 4, 3)
    if d["target_hand"] == "D":
        center = pocket[:, 1].mean(0)
        pocket, native = mirror(pocket, center), mirror(native, center)
    hands = residue_hand(pep)
    seq, logp = assign_sequence(net, pep, pocket, np.asarray(target["pocket_aa"]), p.contact_dist)
    bonds = bond_lengths(pep)
    return {
        "variant": variant, "model_version": d["model_version"], "target_id": d["target_id"],
        "target_index": d["target_index"], "target_hand": d["target_hand"], "sample": d["sample"],
        "length": d["length"], "xyz": d["xyz"], "sequence": seq, "seq_logp": logp,
        "residue_hands": "".join(hands.tolist()), "chirality_volumes": chirality_volume(pep).tolist(),
        "n_L": int((hands == "L").sum()), "n_D": int((hands == "D").sum()), "n_undefined": int((hands == "?").sum()),
        "L_ratio": float((hands == "L").mean()),
        "raw_residue_hands": "".join(residue_hand(np.asarray(d["xyz_raw"]).reshape(-1, 4, 3)).tolist()),
        "geometry_ok": bool(((bonds[:, :3] > 1.2) & (bonds[:, :3] < 1.8)).all() and (bonds[:-1, 3] < 2.0).all()),
        "max_bond_dev_A": float(np.abs(bonds[:, :3] - 1.5).max()),
        "contacts": quality.contacts(pep, pocket, p.contact_dist),
        "buried_surface": quality.buried_surface(pep, pocket),
        "clashes": quality.clashes(pep, pocket, p.clash_dist),
        "native_recovery": quality.native_recovery(pep, native, p.recovery_dist),
    }
