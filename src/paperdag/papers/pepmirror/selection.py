"""Which designs become wet-lab candidates: direct cross-chirality design, filtered and ranked.

The axial model designs an L peptide on the mirrored (D) target; mirroring the complex back gives a D peptide on
the real L target. A design is eligible when its backbone is sane (``geometry_ok``), its sequence is not all Gly,
and every non-Gly residue is D after mirroring back. Eligible designs are ranked by the in-silico score
    score = buried surface (A^2) - clash_penalty * clashes,
and at most ``per_target`` per target and ``n_export`` in all are kept. With a ``relax`` function (the export's
full-atom build and minimisation), candidates are taken in rank order and one that cannot be relaxed is rejected
and replaced by the next ranked design (a wet-lab export does not ship a model it could not relax); after more than
``max_rejected`` rejections the selection stops short.
"""

from __future__ import annotations

import numpy as np

from collections.abc import Callable
from typing import Any

from .geometry import mirror, residue_hand
from .package import Candidate
from .params import ExportParams

EXPORT_VARIANT = "axial"


def ranked_designs(designs: list[dict], centers: dict[str, np.ndarray], p: ExportParams
                   ) -> tuple[list[Candidate], dict[str, int]]:
    """Mirror the axial designs on mirrored targets back, keep the eligible ones, rank by score (ties: target id,
    then sample); returns every eligible design as an unnamed Candidate, best first, and the counts of rejected (by
    reason) and eligible designs."""
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
    ranked = [Candidate("", d["target_id"], d["sequence"], xyz, d["model_version"],
                        {"in_silico": score, "buried_surface": d["buried_surface"], "contacts": d["contacts"],
                         "clashes": d["clashes"], "seq_logp": d["seq_logp"]},
                        {"train_seed": d.get("train_seed"), "sample": d["sample"]})
              for score, d, xyz in kept]
    return ranked, rejected | {"eligible": len(kept)}


def select_candidates(designs: list[dict], centers: dict[str, np.ndarray], p: ExportParams,
                      relax: Callable[[Candidate], tuple[Any, str | None]] | None = None
                      ) -> tuple[list[Candidate], list[Any], list[dict], dict[str, int]]:
    """Walk the ranked designs (ranked_designs), at most ``per_target`` accepted per target and ``n_export`` in all;
    ``relax(candidate)`` returns (model, None) or (model, why it cannot be relaxed). Returns the accepted candidates
    (named PM001.. in rank order), their models, the rejected designs (with their rank among those tried, score,
    source and reason) and the counts (``relax_rejected``, ``relax_attempted`` added)."""
    ranked, counts = ranked_designs(designs, centers, p)
    chosen, models, rejected, per = [], [], [], {}
    attempted = 0
    for c in ranked:
        if len(chosen) >= p.n_export or len(rejected) > p.max_rejected:
            break
        if per.get(c.target_id, 0) >= p.per_target:
            continue
        attempted += 1
        model, why = relax(c) if relax is not None else (None, None)
        if why is not None:
            rejected.append({"tried": attempted, "target_id": c.target_id, "sequence": c.sequence,
                             "model_version": c.model_version, **c.source, "score_in_silico": c.scores["in_silico"],
                             "reason": why, **(getattr(model, "record", None) or {})})
            continue
        per[c.target_id] = per.get(c.target_id, 0) + 1
        c.id = f"PM{len(chosen) + 1:03d}"
        chosen.append(c)
        models.append(model)
    return chosen, models, rejected, counts | {"relax_rejected": len(rejected), "relax_attempted": attempted}
