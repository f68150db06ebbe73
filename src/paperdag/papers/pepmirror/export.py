"""Stage ``export``: the wet-lab package of ranked D-peptides for the held-out L targets (selection.py picks the
candidates, fullatom.py builds and minimises their full-atom complexes, package.py builds and validates every file
in memory)."""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc

from paperdag.io import read_json, read_table
from paperdag.stage import StageContext

from .fullatom import full_atom, relaxation_failure
from .package import build_package
from .params import Params
from .prepare import ATOMS_FILE, EXAMPLES_FILE, PROVENANCE_FILE
from .reverify import VERIFIED_FILE
from .selection import select_candidates


def export(ctx: StageContext[Params]) -> dict[str, float]:
    """Candidates in rank order, each built full-atom and minimised; one that cannot be relaxed (a clash left, or
    not converged) is rejected, listed in the manifest, and replaced by the next ranked design (selection.py).
    candidate_manifest.json, FASTA, three-letter list, order sheet (CSV + Parquet), SDF, backbone PDB complexes,
    full-atom complexes (PDB + mmCIF) and their energies (fullatom_energies.parquet)."""
    p = ctx.params
    centers = {r["id"]: np.asarray(r["pocket_xyz"]).reshape(-1, 4, 3)[:, 1].mean(0)
               for r in read_table(ctx.input("prepare", EXAMPLES_FILE)).to_pylist() if r["split"] == "target"}
    provenance = {t["id"]: t for t in read_json(ctx.input("prepare", PROVENANCE_FILE))["targets"]}
    atoms = read_table(ctx.input("prepare", ATOMS_FILE))
    target_atoms = {t: atoms.filter(pc.equal(atoms["target_id"], t)) for t in centers}
    designs = read_table(ctx.input("verify", VERIFIED_FILE)).to_pylist()
    seed = int(ctx.rng.integers(2**30))

    def relax(c):
        model = full_atom(c.xyz, c.sequence, target_atoms[c.target_id], centers[c.target_id], p.fullatom, seed)
        return model, relaxation_failure(model.record)

    candidates, models, rejected, counts = select_candidates(designs, centers, p.export, relax)
    files = build_package(candidates, target_atoms, provenance, (p.quality.bond_min, p.quality.bond_max), models,
                          rejected, p.export.n_export)
    for name, blob in files.items():
        path = ctx.output(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob)
    return {"n_candidates": len(candidates), "n_targets_covered": len({c.target_id for c in candidates}),
            **{f"n_{k}": v for k, v in counts.items()},
            "max_mirror_energy_rel_diff": max(m.record["mirror_energy_rel_diff"] for m in models)}
