"""Stage ``export``: the wet-lab package of ranked D-peptides for the held-out L targets.

Direct cross-chirality design: the axial model designs an L peptide on the mirrored (D) target; mirroring the
complex back gives a D peptide on the real L target. A design is a candidate when its backbone bonds are sane,
its sequence is not all Gly, and every non-Gly residue is D after mirroring back; candidates are ranked by the in-silico score
    score = buried surface (A^2) - 10 * clashes,
at most ``per_target_export`` per target and ``n_export`` in all.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from paperdag.papers.pepmirror.geometry import mirror, residue_hand
from paperdag.papers.pepmirror.package import Candidate, build_package, write_package
from paperdag.stage import StageContext

EXPORT_VARIANT = "axial"


def select_candidates(designs: list[dict], centers: dict[str, np.ndarray], n_export: int, per_target: int
                      ) -> tuple[list[Candidate], dict[str, int]]:
    """Mirror the axial designs on mirrored targets back, keep all-D sane ones, rank by score."""
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
            score = d["buried_surface"] - 10.0 * d["clashes"]
            kept.append((score, d, xyz))
    kept.sort(key=lambda k: (-k[0], k[1]["target_id"], k[1]["sample"]))
    chosen, per = [], {}
    for score, d, xyz in kept:
        if per.get(d["target_id"], 0) < per_target and len(chosen) < n_export:
            per[d["target_id"]] = per.get(d["target_id"], 0) + 1
            scores = {"in_silico": score, "buried_surface": d["buried_surface"], "contacts": d["contacts"],
                      "clashes": d["clashes"], "seq_logp": d["seq_logp"]}
            chosen.append(Candidate(f"PM{len(chosen) + 1:03d}", d["target_id"], d["sequence"], xyz,
                                    d["model_version"], scores))
    return chosen, rejected | {"eligible": len(kept)}


def export(ctx: StageContext) -> dict[str, float]:
    """Build, validate and write the package (see package.build_package)."""
    p = ctx.params
    examples = pq.read_table(ctx.inputs["prepare"] / "examples.parquet").to_pylist()
    centers = {r["id"]: np.asarray(r["pocket_xyz"]).reshape(-1, 4, 3)[:, 1].mean(0)
               for r in examples if r["split"] == "target"}
    provenance = {t["id"]: t for t in json.loads((ctx.inputs["prepare"] / "provenance.json").read_text())["targets"]}
    atoms = pq.read_table(ctx.inputs["prepare"] / "target_atoms.parquet")
    target_atoms = {t: atoms.filter(pc.equal(atoms["target_id"], t)) for t in centers}
    designs = pq.read_table(ctx.inputs["verify"] / "designs_verified.parquet").to_pylist()
    candidates, counts = select_candidates(designs, centers, p.n_export, p.per_target_export)
    files = build_package(candidates, target_atoms, provenance)
    write_package(ctx.out, files)
    return {"n_candidates": len(candidates), "n_targets_covered": len({c.target_id for c in candidates}),
            **{f"n_{k}": v for k, v in counts.items()}}
