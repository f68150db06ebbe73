"""Stage ``evaluate``: the paper's claims restated at our scale and checked on the measured numbers."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pyarrow.parquet as pq
from Bio import SeqIO
from rdkit import Chem

from paperdag.claims import Claim, write_metrics
from paperdag.papers.pepmirror import chem
from paperdag.papers.pepmirror.package import check_pdb_chirality
from paperdag.stage import StageContext

QUALITY = (("contacts", 1), ("buried_surface", 1), ("native_recovery", 1), ("clashes", -1))


def recheck_package(folder: Path) -> dict[str, int]:
    """Re-read the exported files (Biopython FASTA, RDKit SDF and SMILES, gemmi PDB) and count candidates whose
    every stereocentre is D and whose InChIKey differs from the L-enantiomer's."""
    sheet = pq.read_table(folder / "order_sheet.parquet").to_pylist()
    manifest = json.loads((folder / "candidate_manifest.json").read_text())
    fasta = {r.id: str(r.seq) for r in SeqIO.parse(folder / "candidates.fasta", "fasta")}
    ok = 0
    for row, entry in zip(sheet, manifest["candidates"]):
        seq = fasta[row["id"]]
        mol = Chem.MolFromMolFile(str(folder / f"sdf/{row['id']}.sdf"))
        smiles_mol = Chem.MolFromSmiles(row["isomeric_smiles"])
        key = Chem.MolToInchiKey(mol)
        key_l = Chem.MolToInchiKey(chem.peptide_mol(seq.upper(), "L"))
        try:
            check_pdb_chirality((folder / f"complexes/{row['id']}.pdb").read_text(), entry["peptide_chain"],
                                seq.upper())
            pdb_ok = True
        except ValueError:
            pdb_ok = False
        ok += int(seq.islower() and pdb_ok and key == row["inchikey"] == Chem.MolToInchiKey(smiles_mol)
                  and key != key_l and not chem.stereo_problems(chem.peptide_mol(seq.upper(), "D"), seq.upper(), "D"))
    return {"n_exported": len(sheet), "n_pass": ok}


def evaluate(ctx: StageContext) -> dict[str, float]:
    """metrics.json with the claims; chirality.png (L-residue ratio per variant and target hand)."""
    p = ctx.params
    d = pq.read_table(ctx.inputs["verify"] / "designs_verified.parquet").to_pandas()
    certs = json.loads((ctx.inputs["verify"] / "certificates.json").read_text())
    ratio = {(v, h): float(g["n_L"].sum() / g["length"].sum()) for (v, h), g in d.groupby(["variant", "target_hand"])}
    m: dict[str, float] = {f"L_ratio_{v}_{'mirrored' if h == 'D' else 'native'}_target": r for (v, h), r in ratio.items()}
    for (v, h), g in d.groupby(["variant", "target_hand"]):
        raw = "".join(g["raw_residue_hands"])
        tag = f"{v}_{'mirrored' if h == 'D' else 'native'}_target"
        m[f"L_ratio_raw_{tag}"] = raw.count("L") / len(raw)
        m[f"undefined_ratio_raw_{tag}"] = raw.count("?") / len(raw)
        m[f"D_ratio_{tag}"] = float(g["n_D"].sum() / g["length"].sum())
    mirrored = d[d["target_hand"] == "D"]
    for key, _ in QUALITY:
        for v in ("polar", "axial"):
            m[f"{key}_{v}_mirrored"] = float(mirrored[mirrored["variant"] == v][key].mean())
    for v in ("polar", "axial"):
        m[f"geometry_ok_{v}"] = float(d[d["variant"] == v]["geometry_ok"].mean())
        m[f"{v}_rotation_error"] = certs[v]["rotation_error"]
        m[f"{v}_reflection_error"] = certs[v]["reflection_error"]
        m[f"{v}_design_mirror_deviation_A"] = certs[v]["design_mirror_deviation_A"]
        all_l = d[(d["variant"] == v) & (d["target_hand"] == "D")]["residue_hands"].map(lambda r: set(r) == {"L"})
        m[f"all_L_design_fraction_{v}_mirrored"] = float(all_l.mean())
    pkg = recheck_package(ctx.inputs["export"])
    m |= {f"export_{k}": v for k, v in pkg.items()}
    marg = p.noninferiority_margin
    better = {k: (m[f"{k}_axial_mirrored"] >= (1 - marg) * m[f"{k}_polar_mirrored"] if s > 0
                  else m[f"{k}_axial_mirrored"] <= (1 + marg) * m[f"{k}_polar_mirrored"]) for k, s in QUALITY}
    claims = [
        Claim("equivariance_certificates",
              f"both denoisers rotation-equivariant (rel. error < {p.equiv_tol:g}); polar satisfies f(Px)=Pf(x), "
              f"axial violates it by > {p.reflection_min_violation:g}",
              "by construction", {k: m[k] for k in m if k.endswith(("rotation_error", "reflection_error"))},
              certs["polar"]["passes"] and certs["axial"]["passes"]),
        Claim("polar_wrong_hand_on_mirrored_targets",
              f"polar-only model on mirrored (D) targets: L-residue ratio <= {p.near_zero:g} (reflection forces "
              "the mirror image of its L-target designs)", "~0%",
              {"L_ratio_mirrored": ratio[("polar", "D")], "L_ratio_native": ratio[("polar", "L")],
               "raw_L_ratio_mirrored": m["L_ratio_raw_polar_mirrored_target"],
               "raw_undefined_ratio_mirrored": m["undefined_ratio_raw_polar_mirrored_target"]},
              ratio[("polar", "D")] <= p.near_zero),
        Claim("axial_requested_hand_majority",
              f"axial model on mirrored (D) targets: requested L hand in >= {p.clear_majority:g} of residues "
              "(cross-chirality generalisation from L-L training)", "clear majority",
              {"L_ratio_mirrored": ratio[("axial", "D")], "L_ratio_native": ratio[("axial", "L")],
               "raw_L_ratio_mirrored": m["L_ratio_raw_axial_mirrored_target"],
               "raw_undefined_ratio_mirrored": m["undefined_ratio_raw_axial_mirrored_target"]},
              ratio[("axial", "D")] >= p.clear_majority),
        Claim("axial_quality_noninferior",
              f"axial designs on mirrored targets at least as good as polar (within {marg:.0%}) on contacts, "
              "buried surface, native CA recovery and clashes", "axial >= polar in silico",
              {k: {"polar": m[f"{k}_polar_mirrored"], "axial": m[f"{k}_axial_mirrored"], "holds": better[k]}
               for k, _ in QUALITY},
              all(better.values())),
        Claim("export_checks", "every exported D-peptide passes the chirality (PDB), CIP and InChIKey (differs from "
              "its L-enantiomer) checks re-read from the files", "all", pkg,
              pkg["n_exported"] > 0 and pkg["n_pass"] == pkg["n_exported"]),
    ]
    write_metrics(ctx.out, m, claims)
    plot_ratios(ratio, ctx.out / "chirality.png")
    return {k: v for k, v in m.items() if isinstance(v, float | int)}


def plot_ratios(ratio: dict[tuple[str, str], float], path: Path) -> None:
    """Bar chart of the L-residue ratio per variant on native and mirrored targets."""
    fig, ax = plt.subplots(figsize=(5, 3))
    x = np.arange(2)
    for i, v in enumerate(("polar", "axial")):
        ax.bar(x + 0.35 * i, [ratio[(v, "L")], ratio[(v, "D")]], 0.35, label=v)
    ax.set_xticks(x + 0.175, ["native L target", "mirrored D target"])
    ax.set_ylabel("L-residue ratio of designs")
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def reverify(folder: Path) -> tuple[bool, str]:
    """``paperdag verify pepmirror PATH``: for an export folder, re-hash every file against candidate_manifest.json and
    re-run recheck_package; for a verify folder, recompute every design's residue hands from its coordinates."""
    import hashlib

    from paperdag.papers.pepmirror.geometry import residue_hand

    folder = Path(folder)
    if (folder / "candidate_manifest.json").exists():
        sums = json.loads((folder / "candidate_manifest.json").read_text())["sha256"]
        bad = [k for k, v in sums.items() if hashlib.sha256((folder / k).read_bytes()).hexdigest() != v]
        if bad:
            return False, f"checksum mismatch: {bad[0]}"
        pkg = recheck_package(folder)
        ok = pkg["n_exported"] > 0 and pkg["n_pass"] == pkg["n_exported"]
        return ok, f"{pkg['n_pass']}/{pkg['n_exported']} candidates pass chirality, CIP and InChIKey checks"
    if (folder / "designs_verified.parquet").exists():
        rows = pq.read_table(folder / "designs_verified.parquet").to_pylist()
        bad = sum("".join(residue_hand(np.asarray(r["xyz"]).reshape(-1, 4, 3))) != r["residue_hands"] for r in rows)
        certs = json.loads((folder / "certificates.json").read_text())
        ok = bad == 0 and certs["polar"]["passes"] and certs["axial"]["passes"]
        return ok, f"{len(rows) - bad}/{len(rows)} designs' hands reproduce; certificates pass: {ok}"
    return False, f"{folder}: neither an export (candidate_manifest.json) nor a verify folder (designs_verified.parquet)"
