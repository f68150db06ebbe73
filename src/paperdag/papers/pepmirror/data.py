"""Real structures from the MDAnalysisTests package: parse, cut peptide-like segments with pockets, split.

Sources (all shipped inside the PyPI package ``MDAnalysisTests``, folder ``data/``; nothing is downloaded):
training = the DSSP test chains (``dssp/*.pdb.gz``), adenylate kinase (``adk_closed.pdb``), 1A28, 19HC, 1OSM,
BPTI (``mmcif/5PTI.cif.gz``) and the HLA-A2/Tax peptide complex 1BD2 (``mmcif/1BD2.cif.gz``, chain C);
held-out design targets = the real peptide complexes 4E43 (HIV protease + peptide, chain C), 3PWP and 3KPR
(MHC class I + peptide, chain C) and segment pockets from every ``heldout_every``-th DSSP file.
1HVR (HIV protease, homologous to 4E43) is excluded from training.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import gemmi
import numpy as np

from paperdag.papers.pepmirror.geometry import virtual_cb

AA3 = ("ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "ILE",
       "LEU", "LYS", "MET", "PHE", "PRO", "SER", "THR", "TRP", "TYR", "VAL")
AA1 = "ARNDCQEGHILKMFPSTWYV"
AA_INDEX = {name: i for i, name in enumerate(AA3)}
FLANK = 2  # residues on each side of a cut segment that are neither peptide nor pocket

TRAIN_FILES = ("adk_closed.pdb", "1a28.pdb.gz", "19hc.pdb.gz", "1osm.pdb.gz", "mmcif/5PTI.cif.gz")
TRAIN_COMPLEXES = (("mmcif/1BD2.cif.gz", "C"),)
HELDOUT_COMPLEXES = (("4E43.pdb", "C"), ("mmcif/3PWP.cif.gz", "C"), ("mmcif/3KPR.cif.gz", "C"))
DSSP_SKIP = ("1mr1D_failing.pdb.gz", "wrong_hydrogens.pdb.gz")


def data_dir() -> Path:
    """The ``data/`` folder of the installed MDAnalysisTests package."""
    spec = importlib.util.find_spec("MDAnalysisTests")
    if spec is None or spec.origin is None:
        raise ValueError("MDAnalysisTests is not installed: it provides the structures (pip install MDAnalysisTests)")
    return Path(spec.origin).parent / "data"


@dataclass
class Chain:
    """Standard amino-acid residues of one chain: xyz [n, 4, 3] (N, CA, C, CB; ideal CB for Gly) and labels."""

    file: str
    name: str
    resnames: list[str]
    resseq: list[str]
    xyz: np.ndarray
    aa: np.ndarray
    segment_id: np.ndarray  # contiguous pieces (peptide-bond C-N < 2 A) share an id


def read_chains(path: Path, label: str) -> list[Chain]:
    """Parse a PDB/mmCIF with gemmi (model 1, first altloc, no H/water/ligands) into Chains of standard residues.

    Raises ValueError for a file gemmi cannot read or one without any standard residue.
    """
    try:
        st = gemmi.read_structure(str(path))
    except (RuntimeError, ValueError) as e:
        raise ValueError(f"malformed structure {label}: {e}") from None
    st.remove_alternative_conformations()
    st.remove_hydrogens()
    chains = []
    for ch in st[0]:
        names, seq, xyz = [], [], []
        for res in ch:
            if res.name not in AA_INDEX:
                continue
            atoms = {a.name: np.array(a.pos.tolist()) for a in res}
            if not all(k in atoms for k in ("N", "CA", "C")):
                continue
            cb = atoms.get("CB", virtual_cb(atoms["N"], atoms["CA"], atoms["C"]))
            if res.name == "GLY":
                cb = virtual_cb(atoms["N"], atoms["CA"], atoms["C"])
            names.append(res.name)
            seq.append(f"{res.seqid.num}{res.seqid.icode.strip()}")
            xyz.append(np.stack([atoms["N"], atoms["CA"], atoms["C"], cb]))
        if len(names) < 2:
            continue
        x = np.array(xyz)
        breaks = np.linalg.norm(x[:-1, 2] - x[1:, 0], axis=-1) > 2.0
        seg = np.concatenate([[0], np.cumsum(breaks)])
        chains.append(Chain(label, ch.name, names, seq, x, np.array([AA_INDEX[n] for n in names]), seg))
    if not chains:
        raise ValueError(f"malformed structure {label}: no standard amino-acid residues")
    return chains


def find_pocket(chains: list[Chain], pep_chain: int, start: int, stop: int, radius: float, k_max: int,
                exclude_chain: bool) -> list[tuple[int, int]]:
    """Pocket = residues with CA within ``radius`` of any peptide CA, the ``k_max`` closest by that distance.

    Residues of the peptide's own chain are excluded entirely (``exclude_chain``, real complexes) or within
    FLANK positions of the segment (cut segments).
    """
    pep_ca = chains[pep_chain].xyz[start:stop, 1]
    found = []
    for ci, ch in enumerate(chains):
        if ci == pep_chain and exclude_chain:
            continue
        d = np.linalg.norm(ch.xyz[:, None, 1] - pep_ca[None], axis=-1).min(1)
        for ri in np.nonzero(d < radius)[0]:
            if ci == pep_chain and start - FLANK <= ri < stop + FLANK:
                continue
            found.append((float(d[ri]), ci, int(ri)))
    found.sort()
    return [(ci, ri) for _, ci, ri in found[:k_max]]


def make_example(chains: list[Chain], pep_chain: int, start: int, stop: int, pocket: list[tuple[int, int]],
                 ex_id: str, split: str, kind: str) -> dict:
    """One Parquet row: peptide and pocket coordinates (flattened [n, 4, 3]), residue types and provenance."""
    pc = chains[pep_chain]
    return {
        "id": ex_id, "split": split, "kind": kind, "source_file": pc.file, "pep_chain": pc.name,
        "pep_resseq": pc.resseq[start:stop], "pep_seq": "".join(AA1[a] for a in pc.aa[start:stop]),
        "pep_xyz": pc.xyz[start:stop].reshape(-1).tolist(), "length": stop - start,
        "pocket_chain": [chains[ci].name for ci, _ in pocket],
        "pocket_resseq": [chains[ci].resseq[ri] for ci, ri in pocket],
        "pocket_aa": [int(chains[ci].aa[ri]) for ci, ri in pocket],
        "pocket_xyz": np.stack([chains[ci].xyz[ri] for ci, ri in pocket]).reshape(-1).tolist(),
        "n_pocket": len(pocket),
    }


def cut_segments(chains: list[Chain], rng: np.random.Generator, min_len: int, max_len: int, stride: int,
                 radius: float, k_max: int, min_pocket: int, split: str, prefix: str) -> list[dict]:
    """Peptide-like segments: every ``stride`` residues a contiguous piece of random length in [min_len, max_len]
    whose pocket (see find_pocket) has at least ``min_pocket`` residues."""
    rows = []
    for ci, ch in enumerate(chains):
        for start in range(0, len(ch.resnames) - min_len + 1, stride):
            stop = start + int(rng.integers(min_len, max_len + 1))
            if stop > len(ch.resnames) or ch.segment_id[start] != ch.segment_id[stop - 1]:
                continue
            pocket = find_pocket(chains, ci, start, stop, radius, k_max, exclude_chain=False)
            if len(pocket) >= min_pocket:
                rows.append(make_example(chains, ci, start, stop, pocket, f"{prefix}:{ch.name}:{start}", split,
                                         "segment"))
    return rows


def complex_example(chains: list[Chain], pep_name: str, radius: float, k_max: int, split: str) -> dict:
    """The real peptide chain ``pep_name`` (at most 12 residues, its longest contiguous piece) with its pocket."""
    ci = next((i for i, c in enumerate(chains) if c.name == pep_name), None)
    if ci is None:
        raise ValueError(f"malformed structure {chains[0].file}: no peptide chain {pep_name}")
    seg = chains[ci].segment_id
    piece = np.bincount(seg).argmax()
    idx = np.nonzero(seg == piece)[0][:12]
    pocket = find_pocket(chains, ci, int(idx[0]), int(idx[-1]) + 1, radius, k_max, exclude_chain=True)
    return make_example(chains, ci, int(idx[0]), int(idx[-1]) + 1, pocket, f"{chains[ci].file}:{pep_name}", split,
                        "peptide_complex")


def target_atoms(path: Path, example: dict) -> dict[str, list]:
    """All heavy atoms of the chains that form a target's pocket (the peptide itself and, for a cut segment, its
    flanks removed): the L-protein written into the exported complex."""
    st = gemmi.read_structure(str(path))
    st.remove_alternative_conformations()
    st.remove_hydrogens()
    chains = set(example["pocket_chain"])
    pep = set(example["pep_resseq"])
    rows: dict[str, list] = {k: [] for k in ("chain", "resseq", "resname", "atom", "element", "x", "y", "z")}
    for ch in st[0]:
        if ch.name not in chains:
            continue
        order = [f"{r.seqid.num}{r.seqid.icode.strip()}" for r in ch]
        drop = set()
        if ch.name == example["pep_chain"]:
            hits = [i for i, s in enumerate(order) if s in pep]
            drop = set(range(max(hits[0] - FLANK, 0), hits[-1] + FLANK + 1)) if hits else set()
        for i, res in enumerate(ch):
            if i in drop or res.name not in AA_INDEX:
                continue
            for a in res:
                for k, v in zip(("chain", "resseq", "resname", "atom", "element"),
                                (ch.name, order[i], res.name, a.name, a.element.name)):
                    rows[k].append(v)
                for k, v in zip("xyz", a.pos.tolist()):
                    rows[k].append(v)
    return rows
