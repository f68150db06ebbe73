"""Full-atom candidates, built and minimised in mirror space, mirrored back (OpenMM amber14, PDBFixer templates).

For a D-peptide design on an L target (backbone N, CA, C, CB in the target's frame) and reflection
M x = P (x - c) + c about the pocket centroid c, P = diag(-1, 1, 1):
1. receptor: target residues with a heavy atom within ``shell`` A of the design, whole; each contiguous run is a
   chain, a run cut out of a longer chain is capped (ACE / NME from the neighbouring residue's own atoms, or from
   ideal peptide geometry across a gap), true chain ends stay charged termini. Missing heavy atoms are added by
   PDBFixer in the native (L) frame, then the receptor is mirrored: M(receptor) is a D-protein.
2. mirror space: the L peptide M(design) with sequence S (H- free amine, -NH2 amide: amber14 NHE) against
   M(receptor); side chains from PDBFixer's L templates superposed on N, CA, C, O, CB and soft-core relaxed, then
   hydrogens at ``ph`` (OpenMM Modeller), Ile / Thr beta carbons checked L (fix_beta_centres). Everything is built
   where the chemistry is the familiar L one.
3. amber14-all (ff14SB), no solvent model, CutoffNonPeriodic (reaction field, eps_rf = 78.3) at ``cutoff_nm``;
   receptor heavy atoms restrained harmonically (k = ``restraint_k``) and every peptide stereocentre held to its
   hand by a flat-bottomed dihedral restraint (both in their own force group, never reported: huge initial clashes
   could otherwise push a CB through its N-CA-C plane); L-BFGS (OpenMM LocalEnergyMinimizer) until the RMS force
   F_rms = sqrt(sum_i |F_i|^2 / 3N) (restraints included) is below ``min_tolerance`` (or ``max_iterations``), after
   SOFT_ITERATIONS on a soft-core copy (PDBFixer's repulsion instead of the nonbonded terms) that lets atoms built
   inside each other pass through. The reported complex is a minimum: F_rms after minimisation is recorded and
   ``converged`` = F_rms <= min_tolerance. (OpenMM's default tolerance, 10 kJ/mol/nm, stops while restrained side
   chains are still moving: a Glu carboxylate O was left 2.47 A from a Tyr OH that relaxes to 2.71 A at 1.)
4. before and after minimisation: E_int = E(complex) - E(receptor) - E(peptide) at the complex's coordinates,
   heavy-atom clashes (d < r_i + r_j - clash_overlap, Bondi radii; N/O pairs, which may H-bond, below
   HBOND_MIN_A), buried surface SASA(pep) + SASA(rec) - SASA(complex) (freesasa, heavy atoms, Bondi radii) and
   peptide-receptor H-bonds (Baker-Hubbard: d(H, A) < hbond_dist, angle D-H-A > hbond_angle).
5. M back: the D-peptide on the native target. Every amber14 term depends on distances, angles and cos(n phi) with
   phases 0 or pi (no CMAP in ff14SB), all unchanged by a reflection, so E(M x) = E(x): both recomputed in double
   precision (Reference platform) and recorded.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass

import freesasa
import gemmi
import numpy as np
import openmm as mm
import pyarrow as pa
from openmm import app, unit
from pdbfixer import PDBFixer

from . import chem
from .data import AA1, AA3
from .geometry import carbonyl_oxygen, mirror
from .params import FullAtomParams

BONDI = {"C": 1.70, "N": 1.55, "O": 1.52, "S": 1.80}  # A
HBOND_MIN_A = 2.5  # N/O pairs closer than this clash (they are too close even for a hydrogen bond)
KJ = unit.kilojoule_per_mole
SOFT_C = 50.0  # kJ/mol: height of the soft repulsion of the clash-relief stage (soft_system)
SOFT_ITERATIONS = 200  # L-BFGS iterations of that stage
RESTARTS = 3  # L-BFGS restarts while the RMS force is above the tolerance (a single-precision line search can stall)
CHIRAL_K = 5000.0  # kJ/mol/rad^2 of the stereocentre restraint (chirality_restraint)
CHIRAL_WIDTH_DEG = 35.0  # its flat bottom: dihedrals (a, X, b, c) within 120 +- 35 degrees of their hand are free
AMIDE = "NH2"  # wwPDB code of the C-terminal amide; amber14 template NHE (matched by bonds)
CAP_RESIDUES = ("ACE", "NME", AMIDE)
FORCEFIELD = "amber14-all.xml"
# beta-carbon stereocentres: sign of ((a - CB) x (b - CB)) . (c - CB) for substituents (a, b, c) in the L form
# (+1 in PDBFixer's L templates ILE.pdb and THR.pdb: 2S,3S-Ile and 2S,3R-Thr); D residues have the opposite sign
L_BETA_SUBSTITUENTS = {"I": ("CA", "CG1", "CG2"), "T": ("CA", "OG1", "CG2")}
L_BETA_SIGN = {"I": 1.0, "T": 1.0}


@dataclass
class FullAtomComplex:
    """A built complex: OpenMM topology, positions (A, [n, 3]), which atoms are peptide, the peptide chain id."""

    topology: app.Topology
    xyz: np.ndarray
    is_peptide: np.ndarray
    peptide_chain: str


def place(a: np.ndarray, b: np.ndarray, c: np.ndarray, bond: float, angle: float, torsion: float) -> np.ndarray:
    """Atom d with |cd| = bond, angle(b, c, d) = angle and dihedral(a, b, c, d) = torsion (degrees; NeRF)."""
    bc = (c - b) / np.linalg.norm(c - b)
    n = np.cross(b - a, bc)
    n /= np.linalg.norm(n)
    m = np.cross(n, bc)
    th, ph = np.radians(angle), np.radians(torsion)
    return c - bond * np.cos(th) * bc + bond * np.sin(th) * (np.cos(ph) * m + np.sin(ph) * n)


def dihedral(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> float:
    """Dihedral angle a-b-c-d in degrees (IUPAC sign convention)."""
    b0, b1, b2 = a - b, c - b, d - c
    b1 = b1 / np.linalg.norm(b1)
    v, w = b0 - (b0 @ b1) * b1, b2 - (b2 @ b1) * b1
    return float(np.degrees(np.arctan2(np.cross(b1, v) @ w, v @ w)))


def _residues(atoms: pa.Table) -> list[dict]:
    """target_atoms rows grouped into residues in file order: chain, resseq, resname, {atom: (element, xyz)}."""
    t = atoms.to_pydict()
    out: list[dict] = []
    for ch, rs, rn, an, el, x, y, z in zip(t["chain"], t["resseq"], t["resname"], t["atom"], t["element"],
                                           t["x"], t["y"], t["z"]):
        if not out or (out[-1]["chain"], out[-1]["resseq"]) != (ch, rs):
            out.append({"chain": ch, "resseq": rs, "resname": rn, "atoms": {}})
        out[-1]["atoms"][an] = (el, np.array([x, y, z]))
    return out


def _bonded(r: dict, s: dict) -> bool:
    """Peptide bond C(r)-N(s) shorter than 2 A within one chain."""
    return (r["chain"] == s["chain"] and "C" in r["atoms"] and "N" in s["atoms"]
            and float(np.linalg.norm(r["atoms"]["C"][1] - s["atoms"]["N"][1])) < 2.0)


def _xyz(r: dict, name: str) -> np.ndarray:
    return r["atoms"][name][1]


def receptor_runs(residues: list[dict], peptide_xyz: np.ndarray, shell: float) -> list[tuple[int, int]]:
    """Index ranges [a, b] of consecutive bonded residues with a heavy atom within ``shell`` A of the peptide;
    a single unselected residue between two selected ones is kept (its atoms would otherwise be both caps)."""
    pep = peptide_xyz.reshape(-1, 3)
    near = [bool((np.linalg.norm(np.stack([v[1] for v in r["atoms"].values()])[:, None] - pep[None], axis=-1)
                  < shell).any()) for r in residues]
    for i in range(1, len(residues) - 1):
        if near[i - 1] and near[i + 1] and _bonded(residues[i - 1], residues[i]) and \
                _bonded(residues[i], residues[i + 1]):
            near[i] = True
    runs: list[tuple[int, int]] = []
    for i, keep in enumerate(near):
        if not keep:
            continue
        if runs and runs[-1][1] == i - 1 and _bonded(residues[i - 1], residues[i]):
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def _cap_atoms(residues: list[dict], a: int, b: int) -> tuple[dict | None, dict | None]:
    """(ACE before run a..b, NME after it) as {atom: xyz}; None at a true chain end or without backbone atoms."""
    first, last = residues[a], residues[b]
    ace = nme = None
    chain_start = a == 0 or residues[a - 1]["chain"] != first["chain"]
    chain_end = b == len(residues) - 1 or residues[b + 1]["chain"] != last["chain"]
    if not chain_start and all(k in first["atoms"] for k in ("N", "CA", "C")):
        prev = residues[a - 1]
        if _bonded(prev, first) and all(k in prev["atoms"] for k in ("CA", "C", "O")):
            ace = {"CH3": _xyz(prev, "CA"), "C": _xyz(prev, "C"), "O": _xyz(prev, "O")}
        else:  # a gap before the run: ideal trans peptide, phi = -60
            n, ca, c = _xyz(first, "N"), _xyz(first, "CA"), _xyz(first, "C")
            cc = place(c, ca, n, 1.329, 121.7, -60.0)
            ace = {"CH3": place(ca, n, cc, 1.522, 116.6, 180.0), "C": cc, "O": place(ca, n, cc, 1.229, 122.7, 0.0)}
    if not chain_end and all(k in last["atoms"] for k in ("CA", "C", "O")):
        nxt = residues[b + 1]
        if _bonded(last, nxt) and all(k in nxt["atoms"] for k in ("N", "CA")):
            nme = {"N": _xyz(nxt, "N"), "CH3": _xyz(nxt, "CA")}
        else:  # a gap after the run: the amide N in the plane of CA, C, O, trans omega
            ca, c, o = _xyz(last, "CA"), _xyz(last, "C"), _xyz(last, "O")
            n = place(o, ca, c, 1.329, 116.2, 180.0)
            nme = {"N": n, "CH3": place(ca, c, n, 1.458, 121.7, 180.0)}
    return ace, nme


def _pdb_line(serial: int, name: str, resname: str, chain: str, resnum: int, xyz: np.ndarray, element: str) -> str:
    name = f" {name:<3}" if len(name) < 4 else name
    return (f"ATOM  {serial:5d} {name:<4} {resname:>3} {chain}{resnum:4d}    "
            f"{xyz[0]:8.3f}{xyz[1]:8.3f}{xyz[2]:8.3f}  1.00  0.00          {element:>2}")


RECEPTOR_CHAINS = "ABCDEFGHIJKLMNOQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"  # P is the peptide's


def receptor_pdb(residues: list[dict], runs: list[tuple[int, int]]) -> tuple[str, dict[str, tuple[str, list[str]]]]:
    """PDB text of the capped receptor runs (one chain each, residues numbered from 1) and, per chain, the source
    chain and the source residue numbers (caps numbered next to the residues they replace)."""
    if len(runs) > len(RECEPTOR_CHAINS):
        raise ValueError(f"full-atom receptor: {len(runs)} pieces, at most {len(RECEPTOR_CHAINS)}")
    lines, numbering, serial = [], {}, 1
    for ch, (a, b) in zip(RECEPTOR_CHAINS, runs):
        ace, nme = _cap_atoms(residues, a, b)
        body = [("ACE", {k: ("O" if k == "O" else "C", v) for k, v in ace.items()})] if ace else []
        body += [(r["resname"], r["atoms"]) for r in residues[a: b + 1]]
        body += [("NME", {k: (k[0], v) for k, v in nme.items()})] if nme else []
        nums = [r["resseq"] for r in residues[a: b + 1]]
        first, last = (int("".join(filter(lambda x: x.isdigit() or x == "-", n))) for n in (nums[0], nums[-1]))
        numbering[ch] = (residues[a]["chain"],
                         ([str(first - 1)] if ace else []) + nums + ([str(last + 1)] if nme else []))
        for num, (resname, atoms) in enumerate(body, 1):
            for name, (element, xyz) in atoms.items():
                lines.append(_pdb_line(serial, name, resname, ch, num, xyz, element))
                serial += 1
        lines.append("TER")
    return "\n".join(lines + ["END", ""]), numbering


def _angstrom(positions) -> np.ndarray:
    return np.asarray(positions.value_in_unit(unit.angstrom), dtype=np.float64)


def _nm(xyz: np.ndarray) -> list[mm.Vec3]:
    return [mm.Vec3(*p) for p in (xyz / 10.0).tolist()] * unit.nanometer


def complete_receptor(text: str, seed: int) -> tuple[app.Topology, np.ndarray]:
    """PDBFixer: missing heavy atoms of the receptor (and OXT at true C-termini), native frame; positions in A."""
    fixer = PDBFixer(pdbfile=io.StringIO(text))
    fixer.missingResidues = {}
    fixer.findMissingAtoms()
    random.seed(seed)
    fixer.addMissingAtoms(seed=seed)
    return fixer.topology, _angstrom(fixer.positions)


def _topology_pdb(top: app.Topology, xyz: np.ndarray) -> list[str]:
    lines, serial = [], 1
    for chain in top.chains():
        for num, res in enumerate(chain.residues(), 1):
            for atom in res.atoms():
                lines.append(_pdb_line(serial, atom.name, res.name, chain.id, num, xyz[atom.index],
                                       atom.element.symbol))
                serial += 1
        lines.append("TER")
    return lines


def peptide_pdb(backbone: np.ndarray, sequence: str, chain: str, first_serial: int) -> list[str]:
    """Backbone N, CA, C, O, CB of an L peptide (L residue names) and the C-terminal amide N (HETATM NH2, bonded
    by CONECT): the input of PDBFixer's side-chain placement."""
    o = carbonyl_oxygen(backbone)
    lines, serial = [], first_serial
    for i, aa in enumerate(sequence):
        pos = {"N": backbone[i, 0], "CA": backbone[i, 1], "C": backbone[i, 2], "O": o[i], "CB": backbone[i, 3]}
        for name in ("N", "CA", "C", "O", "CB")[: 4 if aa == "G" else 5]:
            lines.append(_pdb_line(serial, name, AA3[AA1.index(aa)], chain, i + 1, pos[name], name[0]))
            serial += 1
    n_amide = place(o[-1], backbone[-1, 1], backbone[-1, 2], 1.329, 116.2, 180.0)
    lines.append("HETATM" + _pdb_line(serial, "N", AMIDE, chain, len(sequence) + 1, n_amide, "N")[6:])
    c_last = serial - (2 if sequence[-1] == "G" else 3)
    return lines + ["TER", f"CONECT{c_last:5d}{serial:5d}", f"CONECT{serial:5d}{c_last:5d}"]


def fix_beta_centres(top: app.Topology, xyz: np.ndarray, chain: str) -> np.ndarray:
    """The L form of every Ile / Thr beta carbon of the peptide chain: PDBFixer's relaxation of a side chain built
    into a crowded pocket can leave it allo (seen: an N-terminal Ile built 2S,3R). Where
    sign(((a - CB) x (b - CB)) . (c - CB)) != L_BETA_SIGN, the directions of HB and CG2 from CB are exchanged (bond
    lengths kept, CG2's hydrogens moved with it): swapping two substituents inverts the centre."""
    xyz = xyz.copy()
    for res in top.residues():
        if res.chain.id != chain or res.name not in ("ILE", "THR"):
            continue
        aa = "I" if res.name == "ILE" else "T"
        idx = {a.name: a.index for a in res.atoms()}
        cb = xyz[idx["CB"]]
        a, b, c = (xyz[idx[k]] - cb for k in L_BETA_SUBSTITUENTS[aa])
        if np.sign(np.cross(a, b) @ c) == L_BETA_SIGN[aa]:
            continue
        hb, cg2 = xyz[idx["HB"]] - cb, xyz[idx["CG2"]] - cb
        shift = cb + np.linalg.norm(cg2) * hb / np.linalg.norm(hb) - xyz[idx["CG2"]]
        for name in ("CG2", "HG21", "HG22", "HG23"):
            xyz[idx[name]] += shift
        xyz[idx["HB"]] = cb + np.linalg.norm(hb) * cg2 / np.linalg.norm(cg2)
    return xyz


def build_mirror_complex(rec_top: app.Topology, rec_xyz_mirrored: np.ndarray, backbone_l: np.ndarray, sequence: str,
                         forcefield: app.ForceField, ph: float, seed: int) -> FullAtomComplex:
    """The mirror-space complex: mirrored receptor + L peptide with side chains (PDBFixer templates, soft-core
    relaxed against the receptor), amide, and hydrogens on everything (Modeller at ``ph``)."""
    chain = "P"
    lines = _topology_pdb(rec_top, rec_xyz_mirrored)
    lines += peptide_pdb(backbone_l, sequence, chain, rec_top.getNumAtoms() + 1)
    fixer = PDBFixer(pdbfile=io.StringIO("\n".join(lines + ["END", ""])))
    fixer.missingResidues = {}
    fixer.findMissingAtoms()
    fixer.missingTerminals = {r: t for r, t in fixer.missingTerminals.items() if r.chain.id != chain}
    random.seed(seed)
    fixer.addMissingAtoms(seed=seed)
    modeller = app.Modeller(fixer.topology, fixer.positions)
    random.seed(seed)  # Modeller jitters new hydrogens with the global RNG before relaxing them
    modeller.addHydrogens(forcefield, pH=ph)
    xyz = fix_beta_centres(modeller.topology, _angstrom(modeller.positions), chain)
    is_pep = np.array([a.residue.chain.id == chain for a in modeller.topology.atoms()])
    return FullAtomComplex(modeller.topology, xyz, is_pep, chain)


def _system(top: app.Topology, forcefield: app.ForceField, cutoff_nm: float) -> mm.System:
    return forcefield.createSystem(top, nonbondedMethod=app.CutoffNonPeriodic,
                                   nonbondedCutoff=cutoff_nm * unit.nanometer, constraints=None, rigidWater=False)


def _context(system: mm.System) -> mm.Context:
    return mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("CPU"), {"Threads": "1"})


def _energy(ctx: mm.Context, xyz: np.ndarray) -> float:
    ctx.setPositions(_nm(xyz))
    return ctx.getState(getEnergy=True, groups={0}).getPotentialEnergy().value_in_unit(KJ)


def _subtopology(cx: FullAtomComplex, keep_peptide: bool) -> app.Topology:
    m = app.Modeller(cx.topology, _nm(cx.xyz))
    m.delete([c for c in m.topology.chains() if (c.id == cx.peptide_chain) != keep_peptide])
    return m.topology


def stereocentres(top: app.Topology, chain: str) -> list[tuple[int, int, int, int]]:
    """Atom indices (a, X, b, c) of every stereocentre X of the peptide chain: CA with (N, C, CB) for non-Gly
    residues, CB with (CA, CG1, CG2) for Ile and (CA, OG1, CG2) for Thr; the dihedral a-X-b-c carries the hand."""
    out = []
    for res in top.residues():
        if res.chain.id != chain:
            continue
        idx = {a.name: a.index for a in res.atoms()}
        if "CB" in idx and "CA" in idx:
            out.append((idx["N"], idx["CA"], idx["C"], idx["CB"]))
        for name, (a, b, c) in (("ILE", ("CA", "CG1", "CG2")), ("THR", ("CA", "OG1", "CG2"))):
            if res.name == name:
                out.append((idx[a], idx["CB"], idx[b], idx[c]))
    return out


def chirality_restraint(cx: FullAtomComplex) -> mm.CustomTorsionForce:
    """Flat-bottomed restraint holding the hand of every peptide stereocentre while the minimiser removes clashes:
    E = CHIRAL_K/2 max(0, |theta - theta0| - CHIRAL_WIDTH)^2 (angle difference wrapped to [0, pi]) on the dihedral
    theta of (a, X, b, c) (see stereocentres), theta0 = s 120 degrees with s its sign at the start: zero for a
    tetrahedral centre of that hand, growing as it flattens (force group 1, never reported)."""
    force = mm.CustomTorsionForce(
        f"0.5*{CHIRAL_K}*max(0, d - {np.radians(CHIRAL_WIDTH_DEG)})^2; d = min(a, 2*pi - a); a = abs(theta - theta0);"
        f" pi = {np.pi}")
    force.addPerTorsionParameter("theta0")
    for quad in stereocentres(cx.topology, cx.peptide_chain):
        sign = np.sign(dihedral(*(cx.xyz[i] for i in quad)))
        force.addTorsion(*quad, [float(sign * np.radians(120.0))])
    force.setForceGroup(1)
    return force


def soft_system(system: mm.System, top: app.Topology, cutoff_nm: float) -> mm.System:
    """A copy of the restrained complex whose nonbonded force is replaced by PDBFixer's soft repulsion
    SOFT_C / ((r / 0.2 nm)^4 + 1) between atoms more than three bonds apart: finite at r = 0, so atoms placed
    inside each other (threaded rings, buried side chains) can pass through before the real force field applies."""
    soft = mm.XmlSerializer.deserialize(mm.XmlSerializer.serialize(system))
    soft.removeForce(next(i for i, f in enumerate(soft.getForces()) if isinstance(f, mm.NonbondedForce)))
    rep = mm.CustomNonbondedForce(f"{SOFT_C}/((r/0.2)^4+1)")
    rep.setNonbondedMethod(mm.CustomNonbondedForce.CutoffNonPeriodic)
    rep.setCutoffDistance(cutoff_nm)
    for _ in range(soft.getNumParticles()):
        rep.addParticle([])
    rep.createExclusionsFromBonds([(a.index, b.index) for a, b in top.bonds()], 3)
    soft.addForce(rep)
    return soft


class EnergyModel:
    """amber14 energies of one complex and of its two partners (group 0; the restraint is group 1)."""

    def __init__(self, cx: FullAtomComplex, forcefield: app.ForceField, p: FullAtomParams):
        self.cx = cx
        system = _system(cx.topology, forcefield, p.cutoff_nm)
        restraint = mm.CustomExternalForce("0.5*k_rest*((x-x0)^2+(y-y0)^2+(z-z0)^2)")
        restraint.addGlobalParameter("k_rest", p.restraint_k)
        for name in ("x0", "y0", "z0"):
            restraint.addPerParticleParameter(name)
        for atom, pep in zip(cx.topology.atoms(), cx.is_peptide):
            if not pep and atom.element.symbol != "H":
                restraint.addParticle(atom.index, (cx.xyz[atom.index] / 10.0).tolist())
        restraint.setForceGroup(1)
        system.addForce(restraint)
        system.addForce(chirality_restraint(cx))
        self.complex = _context(system)
        self.exact = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
        self.soft = _context(soft_system(system, cx.topology, p.cutoff_nm))
        self.receptor = _context(_system(_subtopology(cx, False), forcefield, p.cutoff_nm))
        self.peptide = _context(_system(_subtopology(cx, True), forcefield, p.cutoff_nm))

    def energies(self, xyz: np.ndarray) -> dict[str, float]:
        """E(complex), E(receptor), E(peptide) and E_int = E(complex) - E(receptor) - E(peptide), kJ/mol."""
        e = {"complex": _energy(self.complex, xyz), "receptor": _energy(self.receptor, xyz[~self.cx.is_peptide]),
             "peptide": _energy(self.peptide, xyz[self.cx.is_peptide])}
        return e | {"interaction": e["complex"] - e["receptor"] - e["peptide"]}

    def exact_energy(self, xyz: np.ndarray) -> float:
        """E(complex) in double precision (OpenMM Reference platform), for the mirror check."""
        return _energy(self.exact, xyz)

    def minimise(self, xyz: np.ndarray, tolerance: float, max_iterations: int) -> np.ndarray:
        """SOFT_ITERATIONS of L-BFGS on the soft-core system (soft_system), then L-BFGS on the restrained complex
        (OpenMM LocalEnergyMinimizer) to RMS force ``tolerance`` (kJ/mol/nm), restarted (fresh curvature memory) at
        most RESTARTS times while rms_force is above it; positions in A."""
        self.soft.setPositions(_nm(xyz))
        mm.LocalEnergyMinimizer.minimize(self.soft, tolerance, SOFT_ITERATIONS)
        xyz = _angstrom(self.soft.getState(getPositions=True).getPositions(asNumpy=True))
        for _ in range(1 + RESTARTS):
            self.complex.setPositions(_nm(xyz))
            mm.LocalEnergyMinimizer.minimize(self.complex, tolerance, max_iterations)
            xyz = _angstrom(self.complex.getState(getPositions=True).getPositions(asNumpy=True))
            if self.rms_force(xyz) <= tolerance:
                break
        return xyz

    def rms_force(self, xyz: np.ndarray) -> float:
        """F_rms = sqrt(sum_i |F_i|^2 / 3N) of the minimised function (force field + restraints), kJ/mol/nm: the
        quantity OpenMM's minimiser drives below its tolerance."""
        self.complex.setPositions(_nm(xyz))
        f = self.complex.getState(getForces=True).getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
        return float(np.sqrt(np.mean(np.square(f))))


def interface(cx: FullAtomComplex, xyz: np.ndarray, p: FullAtomParams) -> dict[str, float]:
    """Heavy-atom clashes, the deepest one (A below its limit; 0 without a clash), buried surface (A^2) and H-bonds
    between the peptide and the receptor (module docstring)."""
    atoms = list(cx.topology.atoms())
    el = np.array([a.element.symbol for a in atoms])
    heavy = el != "H"
    pep, rec = heavy & cx.is_peptide, heavy & ~cx.is_peptide
    radii = np.array([BONDI.get(e, 1.8) for e in el])
    d = np.linalg.norm(xyz[pep][:, None] - xyz[rec][None], axis=-1)
    polar = np.isin(el[pep], ("N", "O"))[:, None] & np.isin(el[rec], ("N", "O"))[None]
    limit = np.where(polar, HBOND_MIN_A, radii[pep][:, None] + radii[rec][None] - p.clash_overlap)
    neighbours: dict[int, list[int]] = {a.index: [] for a in atoms}
    for a, b in cx.topology.bonds():
        neighbours[a.index].append(b.index)
        neighbours[b.index].append(a.index)
    donors = [(h, neighbours[h][0]) for h in np.nonzero(el == "H")[0]
              if neighbours[h] and el[neighbours[h][0]] in ("N", "O")]
    acceptor = np.array([e == "O" or (e == "N" and len(neighbours[i]) < 3 and
                                      all(el[j] != "H" for j in neighbours[i])) for i, e in enumerate(el)])
    hbonds = 0
    for h, dn in donors:
        other = acceptor & (cx.is_peptide != cx.is_peptide[h])
        r_ha = xyz[other] - xyz[h]
        dist = np.linalg.norm(r_ha, axis=-1)
        r_hd = xyz[dn] - xyz[h]
        cos = (r_ha @ r_hd) / (dist * np.linalg.norm(r_hd) + 1e-12)
        hbonds += int(((dist < p.hbond_dist) & (cos < np.cos(np.radians(p.hbond_angle)))).sum())
    sasa = [freesasa.calcCoord(xyz[m].reshape(-1).tolist(), radii[m].tolist()).totalArea() for m in (pep, rec, heavy)]
    return {"clashes": int((d < limit).sum()), "clash_depth": float(max(0.0, (limit - d).max(initial=0.0))),
            "buried_surface": sasa[0] + sasa[1] - sasa[2], "hbonds": hbonds}


def _seqid(label: str) -> gemmi.SeqId:
    num = "".join(ch for ch in label if ch.isdigit() or ch == "-")
    icode = label[len(num):] or " "
    return gemmi.SeqId(int(num), icode[0])


def native_structure(cx: FullAtomComplex, xyz: np.ndarray, numbering: dict[str, tuple[str, list[str]]],
                     peptide_name: str, title: str) -> gemmi.Structure:
    """gemmi Structure of the complex at coordinates xyz (native frame): receptor residues under their source
    chains and numbers, the peptide as chain ``peptide_name`` with wwPDB D-amino-acid codes and the NH2 amide."""
    st = gemmi.Structure()
    st.name = title
    model = gemmi.Model("1")
    chains: dict[str, gemmi.Chain] = {}
    for chain in cx.topology.chains():
        pep = chain.id == cx.peptide_chain
        name, labels = (peptide_name, [str(i + 1) for i, _ in enumerate(chain.residues())]) if pep else \
            numbering[chain.id]
        out = chains.setdefault(name, gemmi.Chain(name))
        for res, label in zip(chain.residues(), labels):
            r = gemmi.Residue()
            r.name = chem.D_NAMES[res.name] if pep and res.name in chem.D_NAMES else res.name
            r.seqid = _seqid(label)
            r.het_flag = "H" if pep or res.name in CAP_RESIDUES else "A"
            for atom in res.atoms():
                a = gemmi.Atom()
                a.name, a.element = atom.name, gemmi.Element(atom.element.symbol)
                a.pos = gemmi.Position(*xyz[atom.index])
                a.occ, a.b_iso = 1.0, 0.0
                r.add_atom(a)
            out.add_residue(r)
    for c in chains.values():
        model.add_chain(c)
    st.add_model(model)
    st.setup_entities()
    return st


def structure_texts(st: gemmi.Structure, remark: str) -> tuple[str, str]:
    """(PDB, mmCIF) texts of a structure, the PDB opening with ``remark``."""
    pdb = st.make_pdb_string()
    doc = st.make_mmcif_document()
    return f"REMARK   1 {remark}\n" + pdb, doc.as_string()


def check_fullatom_chirality(text: str, chain: str, sequence: str, eps: float) -> int:
    """Parse a PDB or mmCIF text (gemmi) and require, in the peptide chain: the sequence's D residue codes, the
    amide, every chiral CA D (((N - CA) x (C - CA)) . (CB - CA) < -eps) and the beta carbons of Ile and Thr the
    mirror image of L's (L_BETA_SIGN). Returns the number of stereocentres checked; ValueError otherwise."""
    st = gemmi.make_structure_from_block(gemmi.cif.read_string(text).sole_block()) if text.startswith("data_") \
        else gemmi.read_pdb_string(text)
    residues = list(st[0][chain])
    if [r.name for r in residues] != [chem.D_NAMES[AA3[AA1.index(a)]] for a in sequence] + [AMIDE]:
        raise ValueError(f"full-atom check: peptide residues {[r.name for r in residues]} for {sequence}")
    checked = 0
    for res, aa in zip(residues, sequence):
        pos = {a.name: np.array(a.pos.tolist()) for a in res}
        if aa == "G":
            continue
        n, ca, c, cb = (pos[k] for k in ("N", "CA", "C", "CB"))
        if np.cross(n - ca, c - ca) @ (cb - ca) > -eps:
            raise ValueError(f"chirality check: residue {res.seqid.num} ({res.name}) CA is not D")
        checked += 1
        if aa in L_BETA_SIGN:
            a, b, d = (pos[k] - cb for k in L_BETA_SUBSTITUENTS[aa])
            if np.sign(np.cross(a, b) @ d) != -L_BETA_SIGN[aa]:
                raise ValueError(f"chirality check: residue {res.seqid.num} ({res.name}) CB is not the D form")
            checked += 1
    return checked


@dataclass
class FullAtomResult:
    """One candidate's full-atom model: its record (flat numbers), the mirror-space complex, the minimised
    coordinates mirrored back to the native frame (A) and the receptor's source numbering."""

    record: dict
    complex: FullAtomComplex
    native_xyz: np.ndarray
    numbering: dict[str, tuple[str, list[str]]]

    def texts(self, name: str, remark: str) -> tuple[str, str, str]:
        """(PDB, mmCIF, peptide chain id) of the D complex on the native target."""
        used = {src for src, _ in self.numbering.values()}
        chain = next(c for c in "PQRSTUVWXYZ" + RECEPTOR_CHAINS if c not in used)
        pdb, cif = structure_texts(native_structure(self.complex, self.native_xyz, self.numbering, chain, name),
                                   remark)
        return pdb, cif, chain


def full_atom(design_d: np.ndarray, sequence: str, atoms: pa.Table, center: np.ndarray, p: FullAtomParams, seed: int
              ) -> FullAtomResult:
    """Steps 1-5 of the module docstring for one D design (backbone [L, 4, 3], native frame): the record holds
    the energies (kJ/mol), clashes, buried surface (A^2) and H-bonds before and after minimisation, the RMS force
    after it (and whether it is below min_tolerance) and the mirror check |E(M x) - E(x)| of the minimised complex.

    Deterministic: OpenMM's CPU platform on one thread (its multi-threaded sums are not reproducible), PDBFixer's
    integrator seeded with seed + 1 (OpenMM draws a fresh seed for 0), Python's RNG seeded before each
    placement step (Modeller jitters new hydrogens with it)."""
    mm.Platform.getPlatformByName("CPU").setPropertyDefaultValue("Threads", "1")
    seed = seed + 1
    forcefield = app.ForceField(FORCEFIELD)
    residues = _residues(atoms)
    runs = receptor_runs(residues, design_d, p.shell)
    text, numbering = receptor_pdb(residues, runs)
    rec_top, rec_xyz = complete_receptor(text, seed)
    cx = build_mirror_complex(rec_top, mirror(rec_xyz, center), mirror(design_d, center), sequence, forcefield, p.ph,
                              seed)
    model = EnergyModel(cx, forcefield, p)
    before = model.energies(cx.xyz) | interface(cx, cx.xyz, p)
    xyz = model.minimise(cx.xyz, p.min_tolerance, p.max_iterations)
    after = model.energies(xyz) | interface(cx, xyz, p)
    f_rms = model.rms_force(xyz)
    native = mirror(xyz, center)
    e_mirror, e_native = model.exact_energy(xyz), model.exact_energy(native)
    record = {"n_atoms": len(xyz), "n_receptor_residues": sum(b - a + 1 for a, b in runs), "receptor_pieces": len(runs),
              **{f"{k}_before": v for k, v in before.items()}, **{f"{k}_after": v for k, v in after.items()},
              "rms_force_after": f_rms, "converged": f_rms <= p.min_tolerance,
              "energy_mirror_space_double": e_mirror, "energy_native_frame_double": e_native,
              "mirror_energy_abs_diff": abs(e_native - e_mirror),
              "mirror_energy_rel_diff": abs(e_native - e_mirror) / max(abs(e_mirror), 1.0)}
    return FullAtomResult(record, cx, native, numbering)


def relaxation_failure(record: dict) -> str | None:
    """Why a minimised complex (full_atom's record) is not a relaxed model, or None: a heavy-atom clash left, or the
    minimiser stopped above its tolerance. The export rejects such a candidate and takes the next ranked design."""
    problems = []
    if record["clashes_after"] > 0:
        problems.append(f"{record['clashes_after']} heavy-atom clash(es) left after minimisation (deepest "
                        f"{record['clash_depth_after']:.2f} A below its limit)")
    if not record["converged"]:
        problems.append(f"minimisation stopped above its tolerance (RMS force {record['rms_force_after']:.2g} kJ/mol/nm)")
    return "; ".join(problems) or None
