"""Which designs become wet-lab candidates: direct cross-chirality design, filtered and ranked.

The axial model designs an L peptide on the mirrored (D) target; mirroring the complex back gives a D peptide on
the real L target. A design is eligible when its backbone is sane (``geometry_ok``), its sequence is not all Gly,
and every non-Gly residue is D after mirroring back. Eligible designs are ranked by the in-silico score
    score = buried surface (A^2) - clash_penalty * clashes,
and at most ``per_target`` per target and ``n_export`` in all are kept.
"""

from __future__ import annotations

import numpy as np

from .geometry import mirror, residue_hand
from .package import Candidate
from .params import ExportParams

EXPORT_VARIANT = "axial"


def select_candidates(designs: list[dict], centers: dict[str, np.ndarray], p: ExportParams
                      ) -> tuple[list[Candidate], dict[str, int]]:
    """Mirror the axial designs on mirrored targets back, keep the eligible ones, rank by score; returns the
    candidates and the counts of rejected (by reason) and eligible designs."""
    kept, rejected = [], {"geometry": 0, "chirality": 0, "achiral": 0}
    for d in designs:
        if d["variant"] != EXPORT_VARIANT or d["target_hand"] != "D":
            continue
        xyz = mirror(np.asarray(d["xyz"]).reshape(-1, 4, 3), centers[d["target_id"]])
        hands = residue_hand(xyz)
        chiral = np.array([aa != "G" for aa in d["sequence"]])
        if not d["geometry_ok"]:
            rejected["geometry"] += 1
        elif not chiral.any():
            rejected["achiral"] += 1
        elif (hands[chiral] != "D").any():
            rejected["chirality"] += 1
        else:
            kept.append((d["buried_surface"] - p.clash_penalty * d["clashes"], d, xyz))
    kept.sort(key=lambda k: (-k[0], k[1]["target_id"], k[1]["sample"]))
    chosen, per = [], {}
    for score, d, xyz in kept:
        if per.get(d["target_id"], 0) < p.per_target and len(chosen) < p.n_export:
            per[d["target_id"]] = per.get(d["target_id"], 0) + 1
            scores = {"in_silico": score, "buried_surface": d["buried_surface"], "contacts": d["contacts"],
                      "clashes": d["clashes"], "seq_logp": d["seq_logp"]}
            chosen.append(Candidate(f"PM{len(chosen) + 1:03d}", d["target_id"], d["sequence"], xyz,
                                    d["model_version"], scores))
    return chosen, rejected | {"eligible": len(kept)}
