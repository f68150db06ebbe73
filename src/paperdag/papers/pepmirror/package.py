"""The wet-lab candidate package: built and validated entirely in memory, then written in one go.

``build_package`` raises ValueError (one line) on an empty design set, a non-standard residue, a malformed
structure, or any failed chirality / stereocentre / InChIKey check, before a single file exists.
``recheck_package`` re-reads a written package with independent parsers (Biopython, RDKit, gemmi).
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import gemmi
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from Bio import SeqIO
from rdkit import Chem
from rdkit.Chem import AllChem

from . import chem
from .data import AA1, AA3
from .fullatom import FullAtomResult, check_fullatom_chirality
from .geometry import CHIRAL_EPS, bond_lengths, carbonyl_oxygen, residue_hand

MANIFEST_FILE = "candidate_manifest.json"
ORDER_SHEET_FILE = "order_sheet.parquet"
FASTA_FILE = "candidates.fasta"
SDF_DIR = "sdf"
COMPLEX_DIR = "complexes"
FULLATOM_DIR = "fullatom"
FULLATOM_TABLE = "fullatom_energies.parquet"
FULLATOM_REPORTED = ("interaction", "clashes", "buried_surface", "hbonds")  # on the order sheet, after minimisation

DISCLAIMER = "computational prediction, not experimentally validated"
NOTATION = ("one-letter codes: lower case = D-amino acid (g = glycine, achiral); termini H- (free amine) and "
            "-NH2 (C-terminal amide); PDB residue names are the wwPDB D-amino-acid codes (DAL, DLE, DLY, ...)")


@dataclass
class Candidate:
    """One D-peptide design on an L target: xyz [L, 4, 3] (N, CA, C, CB) in the target's frame."""

    id: str
    target_id: str
    sequence: str
    xyz: np.ndarray
    model_version: str
    scores: dict[str, float] = field(default_factory=dict)
    source: dict = field(default_factory=dict)  # the design it came from: training seed, sample


def validate_structure(c: Candidate, bond_range: tuple[float, float]) -> None:
    """ValueError unless xyz is a finite [len(sequence), 4, 3] array with N-CA, CA-C, CA-CB bonds in bond_range."""
    xyz = np.asarray(c.xyz, dtype=float)
    if xyz.shape != (len(c.sequence), 4, 3):
        raise ValueError(f"malformed structure {c.id}: coordinates {xyz.shape} for {len(c.sequence)} residues")
    if not np.isfinite(xyz).all():
        raise ValueError(f"malformed structure {c.id}: non-finite coordinates")
    bonds = bond_lengths(xyz)[:, :3]
    if not ((bonds > bond_range[0]) & (bonds < bond_range[1])).all():
        raise ValueError(f"malformed structure {c.id}: backbone bond lengths {bonds.min():.2f}-{bonds.max():.2f} A")


def complex_pdb(c: Candidate, atoms: pa.Table) -> tuple[str, str]:
    """PDB text of target chains + the D-peptide (N, CA, C, O, CB; D residue names) and the peptide chain id."""
    t = atoms.to_pydict()
    used = set(t["chain"])
    chain = next(ch for ch in "PQRSTUVWXYZ" + "".join(AA1) if ch not in used)
    lines, serial = [], 1
    for ch, rs, rn, an, el, x, y, z in zip(t["chain"], t["resseq"], t["resname"], t["atom"], t["element"],
                                           t["x"], t["y"], t["z"]):
        num, icode = (rs[:-1], rs[-1]) if rs[-1].isalpha() else (rs, " ")
        lines.append(_atom_line(serial, an, rn, ch, int(num), icode, (x, y, z), el))
        serial += 1
    lines.append(f"TER   {serial:5d}")
    serial += 1
    o = carbonyl_oxygen(c.xyz)
    for i, aa in enumerate(c.sequence):
        name = chem.D_NAMES[AA3[AA1.index(aa)]]
        pos = {"N": c.xyz[i, 0], "CA": c.xyz[i, 1], "C": c.xyz[i, 2], "O": o[i], "CB": c.xyz[i, 3]}
        for an in ("N", "CA", "C", "O", "CB")[: 4 if aa == "G" else 5]:
            lines.append(_atom_line(serial, an, name, chain, i + 1, " ", pos[an], an[0], hetatm=True))
            serial += 1
    return "\n".join([f"REMARK   1 PEPMIRROR {c.id} {DISCLAIMER}", *lines, "END", ""]), chain


def _atom_line(serial: int, name: str, resname: str, chain: str, resnum: int, icode: str, xyz, element: str,
               hetatm: bool = False) -> str:
    rec = "HETATM" if hetatm else "ATOM  "
    name = f" {name:<3}" if len(name) < 4 else name
    return (f"{rec}{serial:5d} {name:<4} {resname:>3} {chain}{resnum:4d}{icode}   "
            f"{xyz[0]:8.3f}{xyz[1]:8.3f}{xyz[2]:8.3f}  1.00  0.00          {element:>2}")


def check_pdb_chirality(text: str, chain: str, sequence: str) -> None:
    """Parse the PDB back (gemmi) and require D residue names and a D hand (negative chirality volume) at every
    non-Gly residue of the peptide chain."""
    st = gemmi.read_pdb_string(text)
    residues = list(st[0][chain])
    if len(residues) != len(sequence):
        raise ValueError(f"PDB check: {len(residues)} peptide residues, expected {len(sequence)}")
    for res, aa in zip(residues, sequence):
        if res.name != chem.D_NAMES[AA3[AA1.index(aa)]]:
            raise ValueError(f"PDB check: residue {res.seqid.num} named {res.name} for {aa}")
        if aa != "G":
            xyz = np.array([[res[a][0].pos.tolist() for a in ("N", "CA", "C", "CB")]])
            if residue_hand(xyz)[0] != "D":
                raise ValueError(f"chirality check: residue {res.seqid.num} ({res.name}) is not D")


def molecule_entry(c: Candidate) -> dict:
    """RDKit D-peptide: isomeric SMILES, InChIKey (and the L-enantiomer's), 2D mol block; all checks enforced."""
    mol = chem.peptide_mol(c.sequence, "D")
    problems = chem.stereo_problems(mol, c.sequence, "D")
    if problems:
        raise ValueError(f"stereo check {c.id}: {problems[0]}")
    key_d, key_l = Chem.MolToInchiKey(mol), Chem.MolToInchiKey(chem.peptide_mol(c.sequence, "L"))
    if key_d == key_l or key_d[:14] != key_l[:14]:
        raise ValueError(f"InChIKey check {c.id}: D {key_d} vs L {key_l} (need same skeleton, other stereo)")
    smiles = Chem.MolToSmiles(mol)
    if Chem.MolToInchiKey(Chem.MolFromSmiles(smiles)) != key_d:
        raise ValueError(f"SMILES round trip {c.id}: InChIKey changed")
    flat = Chem.Mol(mol)
    AllChem.Compute2DCoords(flat)
    flat.SetProp("_Name", c.id)
    for k, v in (("sequence", c.sequence.lower()), ("chirality", "D"), ("InChIKey", key_d), ("note", DISCLAIMER)):
        flat.SetProp(k, v)
    block = Chem.MolToMolBlock(flat)
    props = "".join(f">  <{k}>\n{flat.GetProp(k)}\n\n" for k in ("sequence", "chirality", "InChIKey", "note"))
    return {"smiles": smiles, "inchikey": key_d, "inchikey_L": key_l, "sdf": block + props + "$$$$\n"}


def fullatom_files(c: Candidate, result: FullAtomResult) -> tuple[dict[str, bytes], str, int]:
    """The full-atom complex of one candidate as PDB and mmCIF (D residue codes), both re-parsed and checked
    (check_fullatom_chirality); returns the files, the peptide chain and the number of stereocentres checked."""
    pdb, cif, chain = result.texts(c.id, f"PEPMIRROR {c.id} full-atom complex, amber14-minimised; {DISCLAIMER}")
    n = check_fullatom_chirality(pdb, chain, c.sequence, CHIRAL_EPS)
    if check_fullatom_chirality(cif, chain, c.sequence, CHIRAL_EPS) != n:
        raise ValueError(f"full-atom check {c.id}: PDB and mmCIF disagree")
    return {f"{FULLATOM_DIR}/{c.id}.pdb": pdb.encode(), f"{FULLATOM_DIR}/{c.id}.cif": cif.encode()}, chain, n


def build_package(candidates: list[Candidate], target_atoms: dict[str, pa.Table], provenance: dict[str, dict],
                  bond_range: tuple[float, float], fullatom: list[FullAtomResult],
                  rejected: list[dict] | None = None, n_requested: int | None = None) -> dict[str, bytes]:
    """Every file of the package (path -> bytes), candidate_manifest.json last with the SHA-256 of all others;
    ``fullatom`` holds each candidate's full-atom model (fullatom.full_atom), in the same order. ``rejected``: the
    ranked designs that could not be relaxed and were replaced (selection.select_candidates), listed in the manifest
    with their reason and full-atom record; ``n_requested``: the candidates asked for (the package may be short)."""
    if not candidates:
        raise ValueError("export: empty design set (no candidate passed selection)")
    if len(fullatom) != len(candidates):
        raise ValueError(f"export: {len(fullatom)} full-atom models for {len(candidates)} candidates")
    for c in candidates:
        chem.check_sequence(c.sequence)
        validate_structure(c, bond_range)
        if c.target_id not in target_atoms:
            raise ValueError(f"export: no target structure for {c.target_id}")
    files: dict[str, bytes] = {}
    rows, fasta, three, sdf_all, manifest_rows, energies = [], [], [], [], [], []
    for rank, (c, fa) in enumerate(zip(candidates, fullatom), 1):
        mol = molecule_entry(c)
        pdb, chain = complex_pdb(c, target_atoms[c.target_id])
        check_pdb_chirality(pdb, chain, c.sequence)
        fa_files, fa_chain, n_stereo = fullatom_files(c, fa)
        files |= fa_files
        energies.append({"id": c.id, "target_id": c.target_id, **fa.record})
        props = chem.properties(c.sequence)
        flags = chem.risk_flags(c.sequence)
        rows.append({"rank": rank, "id": c.id, "sequence": c.sequence.lower(), "length": len(c.sequence),
                     "chirality": "D", "termini": "H-/-NH2", "three_letter": chem.three_letter(c.sequence, "D"),
                     **props, "pka_scale": chem.PKA_SCALE,
                     "risk_flags": ";".join(flags), "n_risk_flags": len(flags),
                     **{f"score_{k}": float(v) for k, v in c.scores.items()}, "target_id": c.target_id,
                     "model_version": c.model_version, "isomeric_smiles": mol["smiles"], "inchikey": mol["inchikey"],
                     "inchikey_L_enantiomer": mol["inchikey_L"], "chirality_check": "pass", "stereo_check": "pass",
                     **{f"fullatom_{k}_after": float(fa.record[f"{k}_after"]) for k in FULLATOM_REPORTED},
                     "fullatom_stereocentres_D": n_stereo, "fullatom_check": "pass"})
        fasta.append(f">{c.id} rank={rank} chirality=D termini=H-/-NH2 target={c.target_id} "
                     f"model={c.model_version}\n{c.sequence.lower()}\n")
        three.append(f"{c.id}\t{chem.three_letter(c.sequence, 'D')}\n")
        sdf_all.append(mol["sdf"])
        files[f"{SDF_DIR}/{c.id}.sdf"] = mol["sdf"].encode()
        files[f"{COMPLEX_DIR}/{c.id}.pdb"] = pdb.encode()
        manifest_rows.append({"id": c.id, "rank": rank, "target_id": c.target_id,
                              "target_provenance": provenance.get(c.target_id, {}), "model_version": c.model_version,
                              "peptide_chain": chain, "fullatom_peptide_chain": fa_chain,
                              "fullatom": {k: v for k, v in fa.record.items()},
                              "files": [f"{SDF_DIR}/{c.id}.sdf", f"{COMPLEX_DIR}/{c.id}.pdb", *fa_files]})
    table = pa.Table.from_pylist(rows)
    files[FASTA_FILE] = "".join(fasta).encode()
    files["candidates_three_letter.txt"] = "".join(three).encode()
    files["candidates.sdf"] = "".join(sdf_all).encode()
    csv_buf, pq_buf = io.BytesIO(), io.BytesIO()
    pacsv.write_csv(table, csv_buf)
    pq.write_table(table, pq_buf)
    files["order_sheet.csv"] = csv_buf.getvalue()
    files[ORDER_SHEET_FILE] = pq_buf.getvalue()
    fa_buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(energies), fa_buf)
    files[FULLATOM_TABLE] = fa_buf.getvalue()
    manifest = {"disclaimer": DISCLAIMER, "notation": NOTATION, "pka_scale": chem.PKA_SCALE,
                "structures": {COMPLEX_DIR: "backbone-level complexes (N, CA, C, O, CB) on the whole target",
                               FULLATOM_DIR: "full-atom complexes (PDB and mmCIF, hydrogens included): side chains "
                                             "from PDBFixer templates, amber14 (ff14SB) minimisation in mirror space "
                                             "(L peptide on the mirrored receptor), mirrored back; receptor = target "
                                             "residues near the peptide, cut ends capped with ACE/NME",
                               "energy_units": "kJ/mol (amber14, no solvent model, reaction field beyond the cutoff)"},
                "extinction_coefficient": "Pace et al. 1995, 280 nm, cysteines reduced",
                "candidates": manifest_rows,
                "n_requested": len(candidates) if n_requested is None else n_requested,
                "rejected_after_relaxation": rejected or [],
                "checks": {"chirality_every_non_gly_residue_D": True, "cip_descriptors_match_D": True,
                           "inchikey_differs_from_L_enantiomer": True,
                           "fullatom_every_stereocentre_D_in_pdb_and_mmcif": True},
                "sha256": {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())}}
    files[MANIFEST_FILE] = (json.dumps(manifest, indent=2, sort_keys=True, default=float) + "\n").encode()
    return files


def recheck_package(folder: Path) -> dict[str, int]:
    """Re-read the written files (Biopython FASTA, RDKit SDF and SMILES, gemmi PDB and mmCIF) and count the
    candidates whose every stereocentre is D, whose backbone and full-atom (PDB and mmCIF) residues are D, and whose
    InChIKey differs from the L-enantiomer's."""
    sheet = pq.read_table(folder / ORDER_SHEET_FILE).to_pylist()
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    fasta = {r.id: str(r.seq) for r in SeqIO.parse(folder / FASTA_FILE, "fasta")}
    ok = 0
    for row, entry in zip(sheet, manifest["candidates"]):
        seq = fasta[row["id"]]
        mol = Chem.MolFromMolFile(str(folder / f"{SDF_DIR}/{row['id']}.sdf"))
        smiles_mol = Chem.MolFromSmiles(row["isomeric_smiles"])
        key = Chem.MolToInchiKey(mol)
        key_l = Chem.MolToInchiKey(chem.peptide_mol(seq.upper(), "L"))
        try:
            check_pdb_chirality((folder / f"{COMPLEX_DIR}/{row['id']}.pdb").read_text(), entry["peptide_chain"],
                                seq.upper())
            for ext in ("pdb", "cif"):
                check_fullatom_chirality((folder / f"{FULLATOM_DIR}/{row['id']}.{ext}").read_text(),
                                         entry["fullatom_peptide_chain"], seq.upper(), CHIRAL_EPS)
            pdb_ok = True
        except (ValueError, KeyError, OSError):
            pdb_ok = False
        ok += int(seq.islower() and pdb_ok and key == row["inchikey"] == Chem.MolToInchiKey(smiles_mol)
                  and key != key_l and not chem.stereo_problems(chem.peptide_mol(seq.upper(), "D"), seq.upper(), "D"))
    return {"n_exported": len(sheet), "n_pass": ok}
