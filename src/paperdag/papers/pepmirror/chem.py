"""Peptide chemistry for the order sheet: RDKit molecules with explicit D stereocentres, CIP and InChIKey checks,
masses, charge, pI, GRAVY, extinction coefficient and synthesis-risk flags.

All peptides are H-...-NH2 (free N-terminal amine, C-terminal amide). One-letter codes: upper case = L,
lower case = D (glycine is achiral; it is written 'g' in a D-peptide by convention of this export).
"""

from __future__ import annotations

from rdkit import Chem
from rdkit.Chem import Descriptors, rdCIPLabeler

from paperdag.papers.pepmirror.data import AA1, AA3

THREE = {a: AA3[i].capitalize() for i, a in enumerate(AA1)}
D_NAMES = {"ALA": "DAL", "ARG": "DAR", "ASN": "DSG", "ASP": "DAS", "CYS": "DCY", "GLN": "DGN", "GLU": "DGL",
           "GLY": "GLY", "HIS": "DHI", "ILE": "DIL", "LEU": "DLE", "LYS": "DLY", "MET": "MED", "PHE": "DPN",
           "PRO": "DPR", "SER": "DSN", "THR": "DTH", "TRP": "DTR", "TYR": "DTY", "VAL": "DVA"}
# CIP descriptors of the L forms (alpha carbon; beta carbon of Ile and Thr); the D forms are all inverted.
L_ALPHA = {a: ("R" if a == "C" else "S") for a in AA1 if a != "G"}
L_BETA = {"I": "S", "T": "R"}
# EMBOSS pKa scale
PKA_POS = {"Nterm": 8.6, "K": 10.8, "R": 12.5, "H": 6.5}
PKA_NEG = {"Cterm": 3.6, "D": 3.9, "E": 4.1, "C": 8.5, "Y": 10.1}
PKA_SCALE = "EMBOSS (N-term 8.6, C-term 3.6, K 10.8, R 12.5, H 6.5, D 3.9, E 4.1, C 8.5, Y 10.1)"
KYTE_DOOLITTLE = {"A": 1.8, "R": -4.5, "N": -3.5, "D": -3.5, "C": 2.5, "Q": -3.5, "E": -3.5, "G": -0.4, "H": -3.2,
                  "I": 4.5, "L": 3.8, "K": -3.9, "M": 1.9, "F": 2.8, "P": -1.6, "S": -0.8, "T": -0.7, "W": -0.9,
                  "Y": -1.3, "V": 4.2}
PROTON = 1.007276467
HYDROPHOBIC = set("AVILMFWC")


def check_sequence(seq: str) -> str:
    """Upper-case one-letter sequence; ValueError naming the first non-standard residue."""
    if not seq:
        raise ValueError("empty peptide sequence")
    for i, c in enumerate(seq):
        if c.upper() not in AA1:
            raise ValueError(f"non-standard residue {c!r} at position {i + 1} of {seq!r} (only the 20 standard)")
    return seq.upper()


def peptide_mol(seq: str, hand: str) -> Chem.Mol:
    """H-seq-NH2 as an RDKit molecule: MolFromSequence (L, free acid), OXT -> N (C-terminal amide), and for
    hand 'D' every tetrahedral centre inverted (the enantiomer: D-Ile is 2R,3R, D-Thr 2R,3S)."""
    seq = check_sequence(seq)
    if hand not in ("L", "D"):
        raise ValueError(f"hand must be 'L' or 'D', got {hand!r}")
    rw = Chem.RWMol(Chem.MolFromSequence(seq))
    oxt = [a for a in rw.GetAtoms() if a.GetPDBResidueInfo().GetName().strip() == "OXT"]
    oxt[-1].SetAtomicNum(7)
    if hand == "D":
        for a in rw.GetAtoms():
            tag = a.GetChiralTag()
            if tag == Chem.ChiralType.CHI_TETRAHEDRAL_CW:
                a.SetChiralTag(Chem.ChiralType.CHI_TETRAHEDRAL_CCW)
            elif tag == Chem.ChiralType.CHI_TETRAHEDRAL_CCW:
                a.SetChiralTag(Chem.ChiralType.CHI_TETRAHEDRAL_CW)
    mol = rw.GetMol()
    Chem.SanitizeMol(mol)
    Chem.AssignStereochemistry(mol, cleanIt=True, force=True)
    return mol


def stereo_problems(mol: Chem.Mol, seq: str, hand: str) -> list[str]:
    """Compare RDKit's CIP labels of every alpha carbon (and Ile/Thr beta carbon) with the expected descriptor of
    the requested hand; returns the mismatches (empty = all stereocentres right)."""
    seq = check_sequence(seq)
    rdCIPLabeler.AssignCIPLabels(mol)
    flip = {"R": "S", "S": "R"}
    want: dict[tuple[int, str], str] = {}
    for i, a in enumerate(seq):
        if a != "G":
            want[(i + 1, "CA")] = L_ALPHA[a] if hand == "L" else flip[L_ALPHA[a]]
        if a in L_BETA:
            want[(i + 1, "CB")] = L_BETA[a] if hand == "L" else flip[L_BETA[a]]
    got = {}
    for atom in mol.GetAtoms():
        info = atom.GetPDBResidueInfo()
        key = (info.GetResidueNumber(), info.GetName().strip())
        if key in want or atom.HasProp("_CIPCode"):
            got[key] = atom.GetProp("_CIPCode") if atom.HasProp("_CIPCode") else "none"
    problems = [f"{seq[k[0] - 1]}{k[0]} {k[1]}: expected {v}, got {got.get(k, 'none')}" for k, v in want.items()
                if got.get(k) != v]
    problems += [f"unexpected stereocentre {k}" for k in got if k not in want]
    return problems


def net_charge(seq: str, ph: float, amidated: bool = True) -> float:
    """Henderson-Hasselbalch: sum_pos 1/(1 + 10^(pH - pKa)) - sum_neg 1/(1 + 10^(pKa - pH)) (EMBOSS pKa)."""
    seq = check_sequence(seq)
    pos = ["Nterm"] + [c for c in seq if c in PKA_POS]
    neg = ([] if amidated else ["Cterm"]) + [c for c in seq if c in PKA_NEG]
    return (sum(1 / (1 + 10 ** (ph - PKA_POS[g])) for g in pos)
            - sum(1 / (1 + 10 ** (PKA_NEG[g] - ph)) for g in neg))


def isoelectric_point(seq: str, amidated: bool = True) -> float:
    """pH in [0, 14] where net_charge = 0, by bisection (14.0 when the peptide stays positive)."""
    lo, hi = 0.0, 14.0
    if net_charge(seq, hi, amidated) > 0:
        return hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if net_charge(seq, mid, amidated) > 0 else (lo, mid)
    return (lo + hi) / 2


def gravy(seq: str) -> float:
    """Grand average of hydropathy: mean Kyte-Doolittle value."""
    seq = check_sequence(seq)
    return sum(KYTE_DOOLITTLE[c] for c in seq) / len(seq)


def extinction_280(seq: str) -> int:
    """Pace et al. (1995) epsilon_280 = 5500 n_W + 1490 n_Y (M^-1 cm^-1), cysteines taken as reduced."""
    seq = check_sequence(seq)
    return 5500 * seq.count("W") + 1490 * seq.count("Y")


def risk_flags(seq: str) -> list[str]:
    """Synthesis risks: DG (aspartimide), DP (acid-labile bond), N-terminal Q/E (pyroglutamate), a run of >= 5
    hydrophobic residues (AVILMFWC: aggregation), cysteines (oxidation / disulfide scrambling), methionine."""
    seq = check_sequence(seq)
    flags = [f"{m}_motif" for m in ("DG", "DP") if m in seq]
    if seq[0] in "QE":
        flags.append("N-terminal_Q/E_pyroglutamate")
    run = longest = 0
    for c in seq:
        run = run + 1 if c in HYDROPHOBIC else 0
        longest = max(longest, run)
    if longest >= 5:
        flags.append(f"hydrophobic_run_{longest}")
    if "C" in seq:
        flags.append(f"cys_count_{seq.count('C')}")
    if "M" in seq:
        flags.append("met_oxidation")
    return flags


def three_letter(seq: str, hand: str) -> str:
    """'H-D-Leu-D-Lys-Gly-...-NH2' (no D- prefix on achiral Gly)."""
    seq = check_sequence(seq)
    prefix = "D-" if hand == "D" else "L-"
    return "H-" + "-".join(THREE[c] if c == "G" else prefix + THREE[c] for c in seq) + "-NH2"


def properties(seq: str) -> dict[str, float]:
    """Order-sheet numbers of H-seq-NH2 (hand-independent; enantiomers share them)."""
    mol = peptide_mol(seq, "L")
    mono = Descriptors.ExactMolWt(mol)
    return {"avg_mass_da": Descriptors.MolWt(mol), "mono_mass_da": mono, "mh_plus": mono + PROTON,
            "net_charge_ph7_4": net_charge(seq, 7.4), "pI": isoelectric_point(seq), "gravy": gravy(seq),
            "ext_coeff_280": extinction_280(seq), "no_W_Y_at_280": extinction_280(seq) == 0}
