"""The verified record of one design: hand of every residue, assigned sequence, backbone sanity and in-silico
quality in its pocket (a design on a mirrored target is scored against the mirrored pocket and native peptide)."""

from __future__ import annotations

import numpy as np

from . import quality
from .geometry import backbone_ok, bond_lengths, chirality_volume, mirror, residue_hand
from .params import QualityParams
from .seqhead import SequenceHead, assign_sequence

IDEAL_BOND_A = 1.5  # reference of max_bond_dev_A


def design_record(d: dict, target: dict, variant: str, net: SequenceHead, p: QualityParams, contact_dist: float
                  ) -> dict:
    """Chirality per residue (sign of ((N - CA) x (C - CA)) . (CB - CA)), assigned sequence and quality numbers of
    one design row of designs.parquet (in its target's frame)."""
    pep = np.asarray(d["xyz"]).reshape(-1, 4, 3)
    pocket = np.asarray(target["pocket_xyz"]).reshape(-1, 4, 3)
    native = np.asarray(target["pep_xyz"]).reshape(-1, 4, 3)
    if d["target_hand"] == "D":
        center = pocket[:, 1].mean(0)
        pocket, native = mirror(pocket, center), mirror(native, center)
    hands = residue_hand(pep)
    seq, logp = assign_sequence(net, pep, pocket, np.asarray(target["pocket_aa"]))
    return {
        "variant": variant, "model_version": d["model_version"], "train_seed": d["train_seed"],
        "target_id": d["target_id"],
        "target_index": d["target_index"], "target_hand": d["target_hand"], "sample": d["sample"],
        "length": d["length"], "xyz": d["xyz"], "sequence": seq, "seq_logp": logp,
        "residue_hands": "".join(hands.tolist()), "chirality_volumes": chirality_volume(pep).tolist(),
        "n_L": int((hands == "L").sum()), "n_D": int((hands == "D").sum()), "n_undefined": int((hands == "?").sum()),
        "L_ratio": float((hands == "L").mean()),
        "raw_residue_hands": "".join(residue_hand(np.asarray(d["xyz_raw"]).reshape(-1, 4, 3)).tolist()),
        "geometry_ok": backbone_ok(pep, p.bond_min, p.bond_max, p.max_peptide_bond),
        "max_bond_dev_A": float(np.abs(bond_lengths(pep)[:, :3] - IDEAL_BOND_A).max()),
        "contacts": quality.contacts(pep, pocket, contact_dist),
        "buried_surface": quality.buried_surface(pep, pocket),
        "clashes": quality.clashes(pep, pocket, p.clash_dist),
        "native_recovery": quality.native_recovery(pep, native, p.recovery_dist),
    }
