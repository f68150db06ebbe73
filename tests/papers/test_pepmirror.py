"""PepMirror: equivariance, chirality geometry, peptide stereochemistry, the export package, the certificate and
claim verdicts, and the re-verifier rejecting tampered artifacts. The platform contract (imports, params, smoke
run, claims file) is checked for every paper by tests/test_paper_contract.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from Bio import SeqIO
from rdkit import Chem
from rdkit.Chem import rdCIPLabeler

from paperdag.common.verdicts import resolve
from paperdag.papers.pepmirror import chem, data, fullatom, geometry, seqhead
from paperdag.papers.pepmirror.certificates import judge
from paperdag.common.plans import SamplePlan
from paperdag.papers.pepmirror.claims import claims
from paperdag.papers.pepmirror.fullatom import FullAtomResult
from paperdag.papers.pepmirror.model import Denoiser, cross_channels, frame_gram, side_hand
from paperdag.papers.pepmirror.package import Candidate, build_package, check_pdb_chirality, recheck_package
from paperdag.papers.pepmirror.params import CertificateParams, ClaimParams, FullAtomParams, Plans
from paperdag.papers.pepmirror.reverify import VERIFIED_FILE
from paperdag.verification import Outcome
from paperdag.verification import reverify as verify_folder

BONDS = (1.2, 1.8)


def _random_batch(rng: np.random.Generator, b: int = 2, length: int = 7, k: int = 10) -> dict[str, torch.Tensor]:
    t = lambda a: torch.as_tensor(a, dtype=torch.float64)
    mask = np.zeros((b, 12))
    mask[:, :length] = 1
    return {"pep_x": t(rng.normal(size=(b, 12, 4, 3)) * 4 * mask[..., None, None]), "pep_mask": t(mask),
            "pos_feat": t(rng.normal(size=(b, 12, 5))), "t": t(rng.uniform(size=b)),
            "pocket_x": t(rng.normal(size=(b, k, 4, 3)) * 6), "pocket_aa": torch.as_tensor(rng.integers(20, size=(b, k))),
            "pocket_mask": t(np.ones((b, k)))}


def _apply(model: Denoiser, batch: dict, Q: np.ndarray, shift: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    q, s = torch.as_tensor(Q), torch.as_tensor(shift)
    args = lambda x, px: (x, batch["pep_mask"], batch["pos_feat"], batch["t"], px, batch["pocket_aa"],
                          batch["pocket_mask"])
    with torch.no_grad():
        base = model(*args(batch["pep_x"], batch["pocket_x"]))
        moved = model(*args((batch["pep_x"] @ q.T + s) * batch["pep_mask"][..., None, None], batch["pocket_x"] @ q.T + s))
    return moved, base @ q.T


@pytest.mark.parametrize("axial", [False, True])
def test_equivariance_on_random_point_clouds(axial: bool) -> None:
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    model = Denoiser(16, 4, 2, axial).double()
    batch = _random_batch(rng)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q if np.linalg.det(q) > 0 else -q
    moved, expected = _apply(model, batch, q, rng.normal(size=3))
    assert (moved - expected).abs().max() < 1e-9 * expected.abs().max()
    moved, expected = _apply(model, batch, geometry.MIRROR, np.zeros(3))
    err = float((moved - expected).abs().max() / expected.abs().max())
    if axial:
        assert err > 1e-3  # pseudovectors flip sign under P: the axial network is not reflection-equivariant
    else:
        assert err < 1e-9


def test_side_hand_is_a_true_scalar_that_sees_planar_residues() -> None:
    """side_hand is unchanged by a reflection and a rotation, and (unlike det G_ij) not zero at a planar residue."""
    g = torch.Generator().manual_seed(0)
    vp, v = torch.randn(1, 2, 4, 3, generator=g, dtype=torch.float64), torch.randn(1, 5, 4, 3, generator=g,
                                                                                    dtype=torch.float64)
    vp[0, 0, 2] = 0.3 * vp[0, 0, 0] - 0.8 * vp[0, 0, 1]  # residue 0 planar: CB in its N-CA-C plane
    unit = torch.nn.functional.normalize(torch.randn(1, 2, 5, 3, generator=g, dtype=torch.float64), dim=-1)
    q, _ = torch.linalg.qr(torch.randn(3, 3, generator=g, dtype=torch.float64))
    for m in (torch.as_tensor(geometry.MIRROR), q):
        assert torch.allclose(side_hand(vp @ m.T, v @ m.T, unit @ m.T), side_hand(vp, v, unit))
    assert side_hand(vp, v, unit)[0, 0].abs().min() > 0
    assert frame_gram(vp, v)[0, 0, :, -1].abs().max() < 1e-12


def test_cross_channels_are_pseudovectors() -> None:
    v = torch.randn(5, 4, 3, dtype=torch.float64)
    P = torch.as_tensor(geometry.MIRROR)
    assert torch.allclose(cross_channels(v @ P.T), -(cross_channels(v) @ P.T))


def test_chirality_sign_on_gramicidin_l_and_d_residues() -> None:
    """Gramicidin A (1GRM) alternates L and D residues: D-Leu/D-Val at positions 4, 6, 8, 10, 12, 14."""
    chain = data.read_chains(data.data_dir() / "1grm_single.pdb", "1grm")[0]
    hands = dict(zip(chain.resseq, geometry.residue_hand(chain.xyz)))
    assert [hands[str(i)] for i in (4, 6, 8, 10, 12, 14)] == ["D"] * 6
    assert [hands[str(i)] for i in (1, 3, 5, 7, 9, 11, 13, 15)] == ["L"] * 8
    center = chain.xyz[:, 1].mean(0)
    mirrored = geometry.residue_hand(geometry.mirror(chain.xyz, center))
    assert mirrored[chain.resnames.index("ALA")] == "D"


def test_d_peptide_stereocentres() -> None:
    mol = chem.peptide_mol("CIT", "D")
    rdCIPLabeler.AssignCIPLabels(mol)
    labels = {(a.GetPDBResidueInfo().GetResidueNumber(), a.GetPDBResidueInfo().GetName().strip()): a.GetProp("_CIPCode")
              for a in mol.GetAtoms() if a.HasProp("_CIPCode")}
    assert labels == {(1, "CA"): "S", (2, "CA"): "R", (2, "CB"): "R", (3, "CA"): "R", (3, "CB"): "S"}
    assert chem.stereo_problems(mol, "CIT", "D") == []
    assert chem.stereo_problems(chem.peptide_mol("CIT", "L"), "CIT", "D") != []
    assert Chem.MolToSmiles(chem.peptide_mol("A", "D")) == Chem.CanonSmiles("C[C@@H](N)C(N)=O")  # D-alaninamide
    key_d, key_l = (Chem.MolToInchiKey(chem.peptide_mol("LKG", h)) for h in "DL")
    assert key_d != key_l and key_d[:14] == key_l[:14]


def test_peptide_properties() -> None:
    assert chem.gravy("IV") == pytest.approx(4.35)
    assert chem.extinction_280("WYA") == 6990
    assert chem.net_charge("KK", 7.4) == pytest.approx(2.94, abs=0.02)  # amidated: N-term + two Lys
    assert chem.net_charge("DD", 7.4) == pytest.approx(-1.0, abs=0.1)  # amidated: N-term +1, two Asp -1
    assert 3.0 < chem.isoelectric_point("DD") < 9.0
    assert chem.risk_flags("QDGLLIVFC") == ["DG_motif", "N-terminal_Q/E_pyroglutamate", "hydrophobic_run_6",
                                            "cys_count_1"]
    assert chem.three_letter("LGK", "D") == "H-D-Leu-Gly-D-Lys-NH2"
    props = chem.properties("G")  # glycinamide C2H6N2O
    assert props["mono_mass_da"] == pytest.approx(74.048, abs=1e-3)


FA_PARAMS = FullAtomParams(shell=6.0, ph=7.0, cutoff_nm=1.0, restraint_k=1000.0, min_tolerance=10.0,
                           max_iterations=50, clash_overlap=0.5, hbond_dist=2.5, hbond_angle=120.0)


@pytest.fixture(scope="module")
def d_candidate() -> tuple[Candidate, dict, FullAtomResult, np.ndarray]:
    """The mirror image of the 4E43 complex: a D peptide (the native sequence) on a D-protein 'target', so that
    its mirror space is the real L complex; with its full-atom model (small shell, short minimisation)."""
    root = data.data_dir()
    ex = data.complex_example(data.read_chains(root / "4E43.pdb", "4E43.pdb"), "C", 10.0, 40, "target")
    pep = np.asarray(ex["pep_xyz"]).reshape(-1, 4, 3)
    center = np.asarray(ex["pocket_xyz"]).reshape(-1, 4, 3)[:, 1].mean(0)
    table = pa.table(data.target_atoms(root / "4E43.pdb", ex))
    xyz = geometry.mirror(np.stack([table[k].to_numpy() for k in "xyz"], 1), center)
    table = table.set_column(table.schema.get_field_index("x"), "x", pa.array(xyz[:, 0]))
    cand = Candidate("PM001", ex["id"], ex["pep_seq"], geometry.mirror(pep, center), "test-v0", {"in_silico": 1.0})
    model = fullatom.full_atom(cand.xyz, cand.sequence, table, center, FA_PARAMS, seed=0)
    return cand, {ex["id"]: table}, model, center


def test_export_package_parses_back(tmp_path, d_candidate) -> None:
    cand, atoms, model, _ = d_candidate
    for name, blob in build_package([cand], atoms, {}, BONDS, [model]).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(blob)
    rec = next(SeqIO.parse(tmp_path / "candidates.fasta", "fasta"))
    assert "chirality=D" in rec.description and str(rec.seq) == cand.sequence.lower()
    mol = Chem.MolFromMolFile(str(tmp_path / "sdf/PM001.sdf"))
    key = Chem.MolToInchiKey(mol)
    assert key == Chem.MolToInchiKey(chem.peptide_mol(cand.sequence, "D"))
    assert key != Chem.MolToInchiKey(chem.peptide_mol(cand.sequence, "L"))
    smiles = (tmp_path / "order_sheet.csv").read_text().splitlines()[1]
    assert "H-D-Asn-D-Leu" in (tmp_path / "candidates_three_letter.txt").read_text() and "PM001" in smiles
    pdb = (tmp_path / "complexes/PM001.pdb").read_text()
    assert " DLE " in pdb and " DAL " not in pdb and " DSG " in pdb
    check_pdb_chirality(pdb, "P", cand.sequence)
    assert "not experimentally validated" in (tmp_path / "candidate_manifest.json").read_text()
    for ext in ("pdb", "cif"):  # every chiral CA of the full-atom files is D (parsed by hand, not by the pipeline)
        vols = _peptide_ca_volumes((tmp_path / f"fullatom/PM001.{ext}").read_text(), "P")
        assert len(vols) == sum(a != "G" for a in cand.sequence) and all(v < -1.5 for v in vols.values())
    assert recheck_package(tmp_path) == {"n_exported": 1, "n_pass": 1}


def _peptide_ca_volumes(text: str, chain: str) -> dict[int, float]:
    """((N - CA) x (C - CA)) . (CB - CA) of every peptide residue with a CB, read from PDB columns or mmCIF
    atom_site rows by hand (no structure library), keyed by residue number."""
    atoms: dict[int, dict[str, np.ndarray]] = {}
    if text.startswith("data_"):
        lines = text.splitlines()
        keys = [ln.split(".", 1)[1].strip() for ln in lines if ln.startswith("_atom_site.")]
        for ln in lines:
            f = ln.split()
            if ln.startswith(("ATOM", "HETATM")) and len(f) == len(keys):
                row = dict(zip(keys, f))
                if row["auth_asym_id"] == chain:
                    xyz = np.array([float(row[f"Cartn_{k}"]) for k in "xyz"])
                    atoms.setdefault(int(row["auth_seq_id"]), {})[row["label_atom_id"].strip('"')] = xyz
    else:
        for ln in text.splitlines():
            if ln.startswith(("ATOM", "HETATM")) and ln[21] == chain:
                xyz = np.array([float(ln[30:38]), float(ln[38:46]), float(ln[46:54])])
                atoms.setdefault(int(ln[22:26]), {})[ln[12:16].strip()] = xyz
    return {k: float(np.cross(a["N"] - a["CA"], a["C"] - a["CA"]) @ (a["CB"] - a["CA"]))
            for k, a in atoms.items() if "CB" in a}


def test_fullatom_mirror_energy_and_d_stereocentres(d_candidate) -> None:
    """The mirror-space (L peptide) complex and the exported D complex have the same amber14 energy to double
    precision (OpenMM Reference platform); every stereocentre of the exported files is D; an L copy is rejected."""
    import openmm as mm
    from openmm import app

    cand, _, model, center = d_candidate
    ff = app.ForceField(fullatom.FORCEFIELD)
    system = ff.createSystem(model.complex.topology, nonbondedMethod=app.CutoffNonPeriodic, constraints=None)

    def energy(xyz: np.ndarray) -> float:
        ctx = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
        ctx.setPositions(xyz / 10.0)
        return ctx.getState(getEnergy=True).getPotentialEnergy()._value

    e_l, e_d = energy(geometry.mirror(model.native_xyz, center)), energy(model.native_xyz)
    assert abs(e_l - e_d) <= 1e-9 * abs(e_l)
    assert model.record["mirror_energy_rel_diff"] < 1e-9 and model.record["clashes_after"] <= model.record[
        "clashes_before"]
    pdb, cif, chain = model.texts("PM001", "test")
    vols = _peptide_ca_volumes(pdb, chain)
    assert vols == pytest.approx(_peptide_ca_volumes(cif, chain), abs=1e-2)
    assert len(vols) == 6 and all(v < -1.5 for v in vols.values())
    n = fullatom.check_fullatom_chirality(pdb, chain, cand.sequence, geometry.CHIRAL_EPS)
    assert n == fullatom.check_fullatom_chirality(cif, chain, cand.sequence, geometry.CHIRAL_EPS) == 6
    l_copy = FullAtomResult(model.record, model.complex, geometry.mirror(model.native_xyz, center), model.numbering)
    with pytest.raises(ValueError, match="CA is not D"):
        fullatom.check_fullatom_chirality(l_copy.texts("PM001", "L")[0], chain, cand.sequence, geometry.CHIRAL_EPS)


def test_fullatom_minimisation_runs_to_convergence(d_candidate) -> None:
    """The fixture stops after 50 iterations, and its record says whether its RMS force is below the tolerance;
    minimising on to 2 kJ/mol/nm (no iteration cap) ends below it, at a lower energy and without clashes."""
    from openmm import app

    _, _, model, center = d_candidate
    rec = model.record
    assert rec["converged"] == (rec["rms_force_after"] <= FA_PARAMS.min_tolerance)
    energy = fullatom.EnergyModel(model.complex, app.ForceField(fullatom.FORCEFIELD), FA_PARAMS)
    start = geometry.mirror(model.native_xyz, center)  # the minimised complex back in mirror space
    assert energy.rms_force(start) == pytest.approx(rec["rms_force_after"], rel=1e-3)
    xyz = energy.minimise(start, 2.0, 0)
    assert energy.rms_force(xyz) <= 2.0
    assert energy.energies(xyz)["complex"] < rec["complex_after"]
    assert fullatom.interface(model.complex, xyz, FA_PARAMS)["clashes"] == 0


def test_beta_carbon_signs_match_pdbfixer_l_templates() -> None:
    from pathlib import Path as P

    import pdbfixer

    for aa, subs in fullatom.L_BETA_SUBSTITUENTS.items():
        xyz = {ln[12:16].strip(): np.array([float(ln[30:38]), float(ln[38:46]), float(ln[46:54])])
               for ln in (P(pdbfixer.__file__).parent / f"templates/{data.AA3[data.AA1.index(aa)]}.pdb").open()
               if ln.startswith(("ATOM", "HETATM"))}
        a, b, c = (xyz[k] - xyz["CB"] for k in subs)
        assert np.sign(np.cross(a, b) @ c) == fullatom.L_BETA_SIGN[aa]


def test_allo_beta_carbons_are_inverted_to_l() -> None:
    """An allo-Ile CB (HB and CG2 exchanged, as PDBFixer once built an N-terminal Ile) becomes L, bond lengths
    kept and the methyl hydrogens carried along; an L residue and the receptor are left alone."""
    from openmm import app
    from openmm.app.element import carbon, hydrogen

    cb, ca, cg1 = np.zeros(3), np.array([1.53, 0.0, 0.0]), np.array([-0.51, 1.44, 0.0])
    hb, cg2 = np.array([-0.36, -0.51, 0.89]), np.array([-0.51, -0.72, -1.25])
    names = {"CA": ca, "CB": cb, "CG1": cg1, "HB": hb, "CG2": cg2, "HG21": cg2 + [0.0, 0.0, -1.09],
             "HG22": cg2 + [1.0, 0.0, 0.0], "HG23": cg2 + [0.0, -1.0, 0.0]}
    top = app.Topology()
    for chain_id in ("P", "A"):
        res = top.addResidue("ILE", top.addChain(chain_id))
        for name in names:
            top.addAtom(name, hydrogen if name.startswith("H") else carbon, res)
    xyz = np.concatenate([np.stack(list(names.values()))] * 2)
    sign = lambda x: np.sign(np.cross(x[0] - x[1], x[2] - x[1]) @ (x[4] - x[1]))  # (CA, CG1, CG2) about CB
    assert sign(xyz[:8]) == -fullatom.L_BETA_SIGN["I"]
    fixed = fullatom.fix_beta_centres(top, xyz, "P")
    assert sign(fixed[:8]) == fullatom.L_BETA_SIGN["I"] and np.array_equal(fixed[8:], xyz[8:])
    assert np.linalg.norm(fixed[4]) == pytest.approx(np.linalg.norm(cg2))
    assert np.linalg.norm(fixed[3]) == pytest.approx(np.linalg.norm(hb))
    assert np.allclose(fixed[5:8] - fixed[4], xyz[5:8] - xyz[4])
    assert np.array_equal(fullatom.fix_beta_centres(top, fixed, "P"), fixed)


def test_nerf_placement_against_gemmi() -> None:
    import gemmi

    rng = np.random.default_rng(3)
    a, b, c = rng.normal(size=(3, 3)) * 2
    for bond, angle, torsion in ((1.33, 116.2, 180.0), (1.52, 110.0, -60.0), (1.0, 95.0, 33.0)):
        d = fullatom.place(a, b, c, bond, angle, torsion)
        pos = [gemmi.Position(*v) for v in (a, b, c, d)]
        assert np.linalg.norm(d - c) == pytest.approx(bond)
        assert np.degrees(gemmi.calculate_angle(pos[1], pos[2], pos[3])) == pytest.approx(angle)
        assert np.degrees(gemmi.calculate_dihedral(*pos)) == pytest.approx(torsion if torsion < 180 else -180.0,
                                                                           abs=1e-6) or torsion == 180.0
        assert fullatom.dihedral(a, b, c, d) == pytest.approx(np.degrees(gemmi.calculate_dihedral(*pos)))


def test_sequence_features_ignore_rotation_and_reflection() -> None:
    """A complex and its rotated mirror image get the same features, so a design and its mirror image get the
    same sequence; the sin terms really carry the backbone's dihedrals (they change with the hand alone)."""
    root = data.data_dir()
    ex = data.complex_example(data.read_chains(root / "4E43.pdb", "4E43.pdb"), "C", 10.0, 32, "target")
    pep = np.asarray(ex["pep_xyz"]).reshape(-1, 4, 3)
    pocket = np.asarray(ex["pocket_xyz"]).reshape(-1, 4, 3)
    aa = np.asarray(ex["pocket_aa"])
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))
    move = lambda x: (x @ geometry.MIRROR.T) @ q.T + 3.0
    f = seqhead.residue_features(pep, pocket, aa)
    assert f.shape == (len(pep), seqhead.N_FEAT)
    assert np.allclose(seqhead.residue_features(move(pep), move(pocket), aa), f, atol=1e-5)
    swapped = pep.copy()
    swapped[:, 3] = 2 * pep[:, 1] - pep[:, 3]  # CB reflected through CA: every residue changes hand
    assert not np.allclose(seqhead.residue_features(swapped, pocket, aa)[:, :6], f[:, :6])


def test_sequence_baselines_by_hand() -> None:
    y_train = np.array([0, 0, 0, 1, 2, -1])  # 3 A, 1 R, 1 N; Laplace-smoothed p = (4, 2, 2, 1 x 17) / 25
    y_test = np.array([[0, 1, -1], [3, -1, -1]])
    b = seqhead.baselines(y_train, y_test)
    assert b["majority_class"] == "A" and b["majority_recovery"] == pytest.approx(1 / 3)
    assert b["composition_perplexity"] == pytest.approx(np.exp(-(np.log(4 / 25) + np.log(2 / 25) + np.log(1 / 25)) / 3))
    logp = np.log(np.full((2, 3, 20), 1 / 20))
    assert seqhead.recovery_perplexity(logp, y_test)["perplexity"] == pytest.approx(20.0)


def test_export_rejects_bad_inputs(d_candidate) -> None:
    cand, atoms, model, _ = d_candidate
    with pytest.raises(ValueError, match="empty design set"):
        build_package([], atoms, {}, BONDS, [])
    with pytest.raises(ValueError, match="non-standard residue"):
        build_package([Candidate("X", cand.target_id, "NLLQKB", cand.xyz, "v")], atoms, {}, BONDS, [model])
    bad = cand.xyz.copy()
    bad[0, 1] = np.nan
    with pytest.raises(ValueError, match="malformed structure"):
        build_package([Candidate("X", cand.target_id, cand.sequence, bad, "v")], atoms, {}, BONDS, [model])
    l_form = geometry.mirror(cand.xyz, cand.xyz[:, 1].mean(0))  # an L peptide must not pass as D
    with pytest.raises(ValueError, match="chirality check"):
        build_package([Candidate("X", cand.target_id, cand.sequence, l_form, "v")], atoms, {}, BONDS, [model])
    with pytest.raises(ValueError, match="malformed structure"):
        data.read_chains(data.data_dir() / "empty_atom.gro", "empty_atom.gro")


def test_refinement_is_reflection_equivariant() -> None:
    from paperdag.papers.pepmirror.refine import refine

    rng = np.random.default_rng(1)
    x = torch.as_tensor(rng.normal(size=(2, 12, 4, 3)) * 3)
    mask = torch.ones(2, 12)
    pocket = torch.as_tensor(rng.normal(size=(2, 8, 4, 3)) * 8)
    P = torch.as_tensor(geometry.MIRROR)
    y = refine(x, mask, pocket, torch.ones(2, 8), iters=30)
    y_m = refine(x @ P.T, mask, pocket @ P.T, torch.ones(2, 8), iters=30)
    assert torch.allclose(y_m, y @ P.T, atol=1e-8)
    assert geometry.bond_lengths(y[0].numpy())[:, 0].std() < geometry.bond_lengths(x[0].numpy())[:, 0].std()


def test_certificate_verdicts() -> None:
    p = CertificateParams(equiv_tol=1e-8, reflection_min_violation=1e-3)
    exact = {"rotation_error": 1e-15, "reflection_error": 0.0, "improper_rotation_error": 1e-15}
    broken = {"rotation_error": 1e-15, "reflection_error": 0.09, "improper_rotation_error": 0.09}
    assert judge(exact, axial=False, p=p)["passes"] and judge(broken, axial=True, p=p)["passes"]
    assert not judge(broken, axial=False, p=p)["passes"]  # a polar model must be reflection-equivariant
    assert not judge(exact, axial=True, p=p)["passes"]  # an axial model that cannot tell the hands apart fails
    assert not judge(broken | {"rotation_error": 1e-3}, axial=True, p=p)["passes"]


def _measured(polar_l: float, native: float = 0.95) -> dict[str, float]:
    m = {"seq_recovery": 0.2, "seq_majority_recovery": 0.1, "seq_recovery_gain_ci_low": 0.05,
         "seq_recovery_gain_ci_high": 0.15, "seq_perplexity": 14.0, "seq_composition_perplexity": 18.0,
         "seq_nll_gain_ci_low": 0.1, "seq_nll_gain_ci_high": 0.4, "seq_recovery_real_complexes": 0.2,
         "seq_n_heldout_files": 13.0, "seq_composition_expected_recovery": 0.06,
         "fullatom_n": 2.0, "fullatom_max_clashes_before": 9.0, "fullatom_max_clashes_after": 0.0,
         "fullatom_median_interaction_before": 1e4, "fullatom_median_interaction_after": -500.0,
         "fullatom_max_interaction_after": -300.0, "fullatom_mean_buried_surface_after": 900.0,
         "fullatom_mean_hbonds_after": 4.0, "fullatom_max_mirror_energy_rel_diff": 1e-13,
         "fullatom_converged_fraction": 1.0, "fullatom_max_rms_force_after": 0.5,
         "polar_design_mirror_deviation_A": 1e-14, "D_ratio_polar_native_target": polar_l}
    for v in ("polar", "axial"):
        m |= {f"L_ratio_{v}_mirrored_target": polar_l if v == "polar" else 0.8, f"L_ratio_{v}_native_target": native,
              f"L_ratio_raw_{v}_mirrored_target": 0.8, f"undefined_ratio_raw_{v}_mirrored_target": 0.0,
              f"{v}_rotation_error": 0.0, f"{v}_reflection_error": 0.0}
    return m | {"L_ratio_axial_trivial_majority_hand": 1.0}


TARGETS = 8


def _hands(ratio: float, rng: np.random.Generator, length: int = 10) -> str:
    """A residue-hand string with round(ratio * length) L residues, the rest D, in random order."""
    k = int(round(float(np.clip(ratio, 0, 1)) * length))
    return "".join(rng.permutation(list("L" * k + "D" * (length - k))))


def _designs(native_l: float, axial_mirrored_l: float, axial_quality: float, n: int = 64,
             seeds: int = 1) -> pd.DataFrame:
    """Verified-design rows of seeds x 8 targets x n/8 samples per variant and hand: residue hands of 10 residues whose
    L share scatters around the given ratio by a target effect (+-0.08, so the samples of a unit correlate) and
    +-0.05 per design; quality 10 +- 1, the axial model's jittered by +-0.3 (on mirrored targets: axial_quality
    times that)."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(seeds):
        for v in ("polar", "axial"):
            for hand in ("L", "D"):
                ratio = native_l if hand == "L" else (1 - native_l if v == "polar" else axial_mirrored_l)
                for i in range(n):
                    scale = axial_quality if (v, hand) == ("axial", "D") else 1.0
                    q = scale * (10 + (-1) ** i * (1 + i / n) + (0.3 * np.sin(i + seed) if v == "axial" else 0.0))
                    hands = _hands(ratio + 0.08 * np.sin(3 * (i % TARGETS) + seed) + rng.uniform(-0.05, 0.05), rng)
                    rows.append({"variant": v, "target_hand": hand, "train_seed": 10 + seed,
                                 "target_id": f"T{i % TARGETS}", "sample": i // TARGETS, "residue_hands": hands,
                                 "L_ratio": hands.count("L") / len(hands), "contacts": q, "buried_surface": q,
                                 "native_recovery": q / 20, "clashes": 20 / q})
    return pd.DataFrame(rows)


def _paired(design_minus_trivial: float, n: int = 64, seeds: int = 1) -> dict[str, pd.DataFrame]:
    """Each variant's mirrored designs against trivial designs, in-silico scores differing by about the given gap."""
    base = np.linspace(100, 300, n)
    frame = pd.concat([pd.DataFrame({
        "train_seed": 10 + seed, "target_id": [f"T{i % TARGETS}" for i in range(n)], "sample": np.arange(n) // TARGETS,
        "in_silico_design": base + design_minus_trivial + 10 * np.sin(np.arange(n) + seed),
        "in_silico_trivial": base, "native_recovery_design": 0.3, "native_recovery_trivial": 0.2,
        "L_ratio_design": 0.9, "L_ratio_trivial": 1.0}) for seed in range(seeds)], ignore_index=True)
    return {"polar": frame, "axial": frame}


def _replay(score: float = -500.0, n: int = 64) -> pd.DataFrame:
    """Replayed training peptides of every (target, sample): in-silico scores around ``score``."""
    return pd.DataFrame({"target_id": [f"T{i % TARGETS}" for i in range(n)], "sample": np.arange(n) // TARGETS,
                         "in_silico": score + 20 * np.cos(np.arange(n))})


def _plan(unit: str, n: int) -> SamplePlan:
    return SamplePlan(unit=unit, n=n, basis="design", effect=None, power=None, pilot_n=0, pilot_sd=None, looks=1,
                      spending="none", why="the test's design size")


P_CLAIMS = ClaimParams(native_hand_min=0.9, clear_majority=0.7, quality_ratio_min=0.9, mirror_energy_rel_tol=1e-9)
CERT = CertificateParams(equiv_tol=1e-8, reflection_min_violation=1e-3)
UNIT = "(seed, target) unit"
PLANS = Plans(targets=_plan(UNIT, 8), files=_plan("file", 13))
OK = {"polar": True, "axial": True}
PACKAGE = {"n_exported": 2, "n_pass": 2}


def _claims(m: dict, designs: pd.DataFrame, paired: dict, passes: dict = OK, package: dict = PACKAGE,
            replay: pd.DataFrame | None = None, plans: Plans = PLANS) -> list:
    return claims(m, designs, paired, _replay() if replay is None else replay, passes, package, P_CLAIMS, CERT,
                  plans)


def _verdicts(m: dict, designs: pd.DataFrame, paired: dict, passes: dict = OK, package: dict = PACKAGE,
              replay: pd.DataFrame | None = None) -> dict[str, str]:
    return {c.id: c.verdict for c in resolve(_claims(m, designs, paired, passes, package, replay))}


def test_claims_follow_their_thresholds() -> None:
    good = _verdicts(_measured(0.03), _designs(0.98, 0.9, 1.0), _paired(50.0))
    assert set(good.values()) == {"holds"}, good
    worse_head = {"seq_perplexity": 20.0, "seq_nll_gain_ci_low": -0.2, "seq_nll_gain_ci_high": -0.02}
    broken_mirror = {"D_ratio_polar_native_target": 0.01}  # mirrored designs that are not the native ones mirrored
    bad = _verdicts(_measured(0.03) | worse_head | broken_mirror | {"fullatom_max_interaction_after": 9.0},
                    _designs(0.98, 0.5, 0.7), _paired(50.0), {"polar": True, "axial": False},
                    {"n_exported": 2, "n_pass": 1})
    assert bad["axial_requested_hand_majority"] == "fails" and bad["axial_quality_noninferior"] == "fails"
    assert bad["sequence_head_beats_trivial"] == "fails"
    assert all(bad[c] == "fails" for c in ("equivariance_certificates", "polar_wrong_hand_on_mirrored_targets",
                                           "fullatom_candidates_energy_checked", "export_checks"))
    stopped = _claims(_measured(0.03) | {"fullatom_converged_fraction": 0.9}, _designs(0.98, 0.9, 1.0),
                      _paired(50.0))  # a clash-free complex that is not yet a minimum
    fa = next(c for c in stopped if c.id == "fullatom_candidates_energy_checked")
    assert fa.verdict == "fails" and "stopped above its tolerance" in fa.reason


def test_fullatom_check_reports_replacements_and_fails_when_short() -> None:
    """A ranked design that could not be relaxed and was replaced leaves the check holding (the package is full),
    with the replacement in its reason; a package the export left short (more rejections than max_rejected) fails."""
    replaced = _measured(0.03) | {"fullatom_n": 10.0, "fullatom_n_requested": 10.0, "fullatom_n_rejected": 1.0,
                                  "fullatom_n_rejected_clash": 1.0, "fullatom_n_rejected_unconverged": 0.0}
    fa = next(c for c in _claims(replaced, _designs(0.98, 0.9, 1.0), _paired(50.0))
              if c.id == "fullatom_candidates_energy_checked")
    assert fa.verdict == "holds" and fa.measured["replacements"].startswith("1 of 11 ranked designs tried could not")
    short = replaced | {"fullatom_n": 7.0, "fullatom_n_rejected": 6.0}
    fa = next(c for c in _claims(short, _designs(0.98, 0.9, 1.0), _paired(50.0))
              if c.id == "fullatom_candidates_energy_checked")
    assert fa.verdict == "fails" and "package is short: 7 of 10" in fa.reason


def _export_rows(scores: list[float], targets: list[str]) -> tuple[list[dict], dict[str, np.ndarray]]:
    """Axial designs on mirrored targets, all-L (so D once mirrored back), sane, with the given in-silico scores."""
    rng = np.random.default_rng(1)
    ca = np.cumsum(rng.normal(size=(6, 3)) + [3.8, 0, 0], 0)
    n, c = ca + [-1.0, 1.0, 0.0], ca + [1.0, 1.0, 0.0]
    cb = geometry.virtual_cb(n, ca, c)
    xyz = np.stack([n, ca, c, cb], 1)  # L residues: mirrored back about the target centre they become D
    rows = [{"variant": "axial", "target_hand": "D", "target_id": t, "sample": i, "train_seed": 0, "xyz":
             xyz.reshape(-1).tolist(), "sequence": "AKLEVS", "geometry_ok": True, "buried_surface": s, "clashes": 0,
             "contacts": 5, "seq_logp": -1.0, "model_version": "v"} for i, (s, t) in enumerate(zip(scores, targets))]
    return rows, {t: np.zeros(3) for t in set(targets)}


def test_export_replaces_a_design_it_cannot_relax() -> None:
    """Ranked designs are tried in order; one whose relaxation fails is rejected (listed with its reason) and the next
    ranked design of an open target takes its place; ids follow the accepted ones; after more than max_rejected
    rejections the selection stops short."""
    from paperdag.papers.pepmirror.params import ExportParams
    from paperdag.papers.pepmirror.selection import select_candidates
    scores = [900.0, 800.0, 700.0, 600.0, 500.0, 400.0]
    rows, centers = _export_rows(scores, ["A", "A", "B", "A", "B", "C"])
    assert all(set(geometry.residue_hand(geometry.mirror(np.asarray(r["xyz"]).reshape(-1, 4, 3), np.zeros(3))))
               == {"D"} for r in rows)
    bad = {800.0}
    relax = lambda c: ({"score": c.scores["in_silico"]}, "a clash left" if c.scores["in_silico"] in bad else None)
    p = ExportParams(n_export=3, per_target=2, clash_penalty=10.0, max_rejected=1)
    chosen, models, rejected, counts = select_candidates(rows, centers, p, relax)
    # 900 (A) kept, 800 (A) rejected, 700 (B) kept, 600 (A) replaces it as A's second
    assert [c.scores["in_silico"] for c in chosen] == [900.0, 700.0, 600.0]
    assert [c.id for c in chosen] == ["PM001", "PM002", "PM003"] and models == [{"score": s} for s in (900, 700, 600)]
    assert [(r["tried"], r["score_in_silico"], r["reason"]) for r in rejected] == [(2, 800.0, "a clash left")]
    assert counts["relax_rejected"] == 1 and counts["relax_attempted"] == 4
    bad = {900.0, 800.0, 700.0}  # two rejections with max_rejected 1: the export stops short
    chosen, _, rejected, _ = select_candidates(rows, centers, p, relax)
    assert len(rejected) == 2 and len(chosen) == 0
    bad = set()  # nothing to replace: the plain top of the ranking, at most per_target per target
    chosen, _, rejected, _ = select_candidates(rows, centers, p, relax)
    assert [c.scores["in_silico"] for c in chosen] == [900.0, 800.0, 700.0] and rejected == []


def test_relaxation_failure_names_clash_and_non_convergence() -> None:
    ok = {"clashes_after": 0, "clash_depth_after": 0.0, "converged": True, "rms_force_after": 1.0}
    assert fullatom.relaxation_failure(ok) is None
    clash = fullatom.relaxation_failure(ok | {"clashes_after": 1, "clash_depth_after": 0.043})
    assert clash.startswith("1 heavy-atom clash(es) left") and "0.04 A" in clash
    assert "RMS force 12" in fullatom.relaxation_failure(ok | {"converged": False, "rms_force_after": 12.0})


def test_evidence_is_inconclusive_without_the_regime() -> None:
    """A denoiser that never learned the native hand (L ratio ~0.5): the axial claims are inconclusive whatever their
    own numbers. One whose mirrored designs are no better than the unmirrored L design keeps L by ignoring the
    target's hand: the hand claim fails on its condition (L ratio part holds), quality is inconclusive (gated)."""
    untrained = _verdicts(_measured(0.5, native=0.5), _designs(0.5, 0.9, 1.0), _paired(50.0))
    assert untrained["axial_learned_native_hand"] == "fails" and untrained["polar_learned_native_hand"] == "fails"
    assert untrained["axial_requested_hand_majority"] == "inconclusive"
    assert untrained["axial_quality_noninferior"] == "inconclusive"
    assert untrained["polar_wrong_hand_on_mirrored_targets"] == "holds"  # mirrors its designs, learned or not
    out = {c.id: c for c in resolve(_claims(_measured(0.03), _designs(0.98, 0.9, 1.0), _paired(-50.0)))}
    assert out["axial_beats_majority_hand_design"].verdict == "fails"
    hand = out["axial_requested_hand_majority"]
    assert hand.verdict == "fails" and hand.measured["parts"] == {"L ratio": "holds", "designs for the target": "fails"}
    assert out["axial_quality_noninferior"].verdict == "inconclusive"


def test_designs_are_judged_against_the_strongest_trivial_design() -> None:
    """Replayed training peptides that outscore the majority-hand design become the judged rung (the ladder keeps
    both, strongest first): designs 50 above the majority-hand design but below replay fail; the hand claim's
    condition is the unmirrored L design itself, so it still holds."""
    out = {c.id: c for c in resolve(_claims(_measured(0.03), _designs(0.98, 0.9, 1.0), _paired(50.0),
                                            replay=_replay(400.0)))}
    pre = out["axial_beats_majority_hand_design"]
    assert pre.verdict == "fails" and pre.against.startswith("training-data replay") and len(pre.ladder.rungs) == 2
    assert pre.unit == UNIT and pre.n == 8 and pre.plan is PLANS.targets
    assert out["axial_requested_hand_majority"].verdict == "holds"


def _copied(frame: pd.DataFrame, k: int = 8) -> pd.DataFrame:
    """Every sample of every target repeated k times (new sample numbers, same values)."""
    return pd.concat([frame.assign(sample=frame["sample"] * k + c) for c in range(k)], ignore_index=True)


def test_copying_every_sample_of_a_target_leaves_its_interval_unchanged() -> None:
    """The unit is the (seed, target) pair: repeating each of a target's designs 8 times changes no design interval
    (cluster intervals and the Korn-Graubard proportion over units, the quality ratios' bootstrap of unit means),
    where an interval over designs or residues would shrink by ~sqrt(8)."""
    designs, paired = _designs(0.98, 0.9, 1.0, seeds=2), _paired(50.0, seeds=2)
    plans = Plans(targets=_plan(UNIT, 16), files=_plan("file", 13))
    one = {c.id: c for c in _claims(_measured(0.03), designs, paired, plans=plans)}
    eight = {c.id: c for c in _claims(_measured(0.03), _copied(designs), {v: _copied(f) for v, f in paired.items()},
                                      replay=_copied(_replay()), plans=plans)}
    for cid in ("axial_requested_hand_majority", "axial_quality_noninferior", "polar_learned_native_hand",
                "axial_learned_native_hand", "axial_beats_majority_hand_design"):
        assert one[cid].n == eight[cid].n == 16 and one[cid].reason == eight[cid].reason, cid
        assert one[cid].measured == eight[cid].measured, cid
        assert "n=16 (seed, target) units = 2 seeds x 8 targets" in one[cid].reason, cid
    hand = one["axial_requested_hand_majority"].measured
    assert 0.7 < hand["L_ratio"]["ci"][0] < hand["L_ratio"]["mean"] < hand["L_ratio"]["ci"][1] <= 1.0
    # the same residues judged as independent (one unit per design) give a narrower interval: clustering counts
    from paperdag.papers.pepmirror.claims import hand_share

    rows = designs[(designs["variant"] == "axial") & (designs["target_hand"] == "D")]
    per_design = hand_share(rows.assign(target_id=rows["target_id"] + "/" + rows["sample"].astype(str)))
    clustered = hand_share(rows)
    clustered, per_design = clustered.interval, per_design.interval
    assert clustered.mean == per_design.mean and clustered.hi - clustered.lo > per_design.hi - per_design.lo


def test_all_l_designs_give_a_bounded_hand_interval() -> None:
    """Every residue L (the training hand's ceiling): the Korn-Graubard interval is [lo, 1] with lo < 1, so the
    native-hand precondition decides (the t interval of identical per-design ratios had zero width)."""
    out = {c.id: c for c in resolve(_claims(_measured(0.03), _designs(1.2, 0.9, 1.0), _paired(50.0)))}
    pre = out["axial_learned_native_hand"]
    assert pre.measured["L_ratio"]["mean"] == 1.0 and pre.measured["L_ratio"]["ci"][1] == 1.0
    assert 0.9 < pre.measured["L_ratio"]["ci"][0] < 1.0 and pre.verdict == "holds"


def test_both_variants_of_a_seed_share_its_streams() -> None:
    """Seed s gives both variants the same initialisation seed, minibatches, loss noise and design noise (a
    function of (seed, training seed, target) only); another training seed gives other draws."""
    from paperdag.papers.pepmirror.design import design_noise
    from paperdag.papers.pepmirror.train import seed_streams

    def draws(train_seed: int) -> tuple:
        rng, gen = seed_streams(0, train_seed, "cpu")
        init = torch.randn(3)  # torch's global generator: the network's initialisation
        return rng.integers(100, size=5).tolist(), torch.randn(4, generator=gen), init

    a, b, c = draws(1), draws(1), draws(2)
    assert a[0] == b[0] and torch.equal(a[1], b[1]) and torch.equal(a[2], b[2])
    assert a[0] != c[0] and not torch.equal(a[1], c[1]) and not torch.equal(a[2], c[2])
    assert torch.equal(design_noise(0, 1, 3, 2, 5), design_noise(0, 1, 3, 2, 5))
    assert not torch.equal(design_noise(0, 1, 3, 2, 5), design_noise(0, 2, 3, 2, 5))
    assert not torch.equal(design_noise(0, 1, 3, 2, 5), design_noise(0, 1, 4, 2, 5))


def test_a_variant_passes_its_certificate_only_when_every_seed_does() -> None:
    from paperdag.papers.pepmirror.certificates import worst_errors

    p = CertificateParams(equiv_tol=1e-8, reflection_min_violation=1e-3)
    exact = {"rotation_error": 1e-15, "reflection_error": 0.0, "improper_rotation_error": 1e-15}
    broken = {"rotation_error": 1e-15, "reflection_error": 0.09, "improper_rotation_error": 0.09}
    assert judge(worst_errors([exact, exact, exact], axial=False), axial=False, p=p)["passes"]
    assert not judge(worst_errors([exact, broken, exact], axial=False), axial=False, p=p)["passes"]
    assert judge(worst_errors([broken, broken], axial=True), axial=True, p=p)["passes"]
    assert not judge(worst_errors([broken, exact], axial=True), axial=True, p=p)["passes"]
    rotated = broken | {"rotation_error": 1e-3}
    assert not judge(worst_errors([broken, rotated], axial=True), axial=True, p=p)["passes"]


def test_majority_hand_design_is_the_unmirrored_native_design() -> None:
    """A native-target design equal to the native peptide: its trivial majority-hand design keeps the L hand but, in
    the mirrored pocket, misses the mirrored native (recovery < 1); it pairs one to one with the mirrored design of
    the same (target, sample)."""
    from paperdag.papers.pepmirror.baseline import majority_hand_designs, paired_with_mirrored
    from paperdag.papers.pepmirror.params import QualityParams

    rng = np.random.default_rng(3)
    native = rng.normal(size=(6, 4, 3)) * 3 + np.array([4.0, 0.0, 0.0])  # off the mirror plane: not symmetric
    pocket = rng.normal(size=(12, 4, 3)) * 8
    center = pocket[:, 1].mean(0)
    target = {"pocket_xyz": pocket.ravel().tolist(), "pep_xyz": native.ravel().tolist()}
    row = {"variant": "axial", "train_seed": 0, "target_id": "T", "sample": 0, "L_ratio": 1.0, "contacts": 1,
           "buried_surface": 1.0, "clashes": 0, "native_recovery": 1.0}
    designs = pd.DataFrame([row | {"target_hand": "L", "xyz": native.ravel().tolist()},
                            row | {"target_hand": "D", "xyz": geometry.mirror(native, center).ravel().tolist()}])
    q = QualityParams(clash_dist=3.0, recovery_dist=3.0, bond_min=1.2, bond_max=1.8, max_peptide_bond=2.0)
    trivial = majority_hand_designs(designs, {"T": target}, q, 8.0)
    assert len(trivial) == 1 and trivial["L_ratio"].iloc[0] == 1.0
    assert trivial["native_recovery"].iloc[0] < 1.0
    paired = paired_with_mirrored(designs, trivial, "axial", clash_penalty=10.0)
    assert len(paired) == 1
    assert paired["in_silico_trivial"].iloc[0] == trivial["buried_surface"].iloc[0] - 10 * trivial["clashes"].iloc[0]


def test_replay_places_a_training_peptide_at_its_own_pocket_offset() -> None:
    """A training complex that is the target's mirror image (its pocket and native peptide mirrored): replayed into
    the mirrored pocket it lands exactly on the mirrored native (recovery 1, the same contacts as scoring the mirrored
    native directly); the length-matched example is chosen over a closer-in-memory one of another length."""
    from paperdag.papers.pepmirror import quality
    from paperdag.papers.pepmirror.baseline import replay_designs
    from paperdag.papers.pepmirror.params import QualityParams

    rng = np.random.default_rng(5)
    native = rng.normal(size=(6, 4, 3)) * 3 + np.array([4.0, 0.0, 0.0])
    pocket = rng.normal(size=(12, 4, 3)) * 8
    center = pocket[:, 1].mean(0)
    target = {"pocket_xyz": pocket.ravel().tolist(), "pep_xyz": native.ravel().tolist(), "length": 6}
    shift = np.array([30.0, -7.0, 2.0])  # the training complex sits elsewhere in its own frame
    mirrored_pep, mirrored_pocket = geometry.mirror(native, center), geometry.mirror(pocket, center)
    train = [{"id": "other", "length": 7, "pep_xyz": rng.normal(size=(7, 4, 3)).ravel().tolist(),
              "pocket_xyz": pocket.ravel().tolist()},
             {"id": "mirror", "length": 6, "pep_xyz": (mirrored_pep + shift).ravel().tolist(),
              "pocket_xyz": (mirrored_pocket + shift).ravel().tolist()}]
    designs = pd.DataFrame([{"target_id": "T", "target_index": 0, "target_hand": "D", "sample": s} for s in range(3)])
    q = QualityParams(clash_dist=3.0, recovery_dist=3.0, bond_min=1.2, bond_max=1.8, max_peptide_bond=2.0)
    out = replay_designs(designs, {"T": target}, train, q, 8.0, 10.0, seed=0)
    assert out["source_id"].tolist() == ["mirror"] * 3 and (out["native_recovery"] == 1.0).all()
    assert (out["contacts"] == quality.contacts(mirrored_pep, mirrored_pocket, 8.0)).all()
    assert np.allclose(out["in_silico"], out["buried_surface"] - 10.0 * out["clashes"])


@pytest.mark.slow
def test_smoke_run_designs_certifies_and_exports(smoke_runs, tmp_path: Path) -> None:
    runs = smoke_runs("pepmirror")
    metrics = runs.metrics()
    assert {c["id"]: c["kind"] for c in metrics["claims"]} == {
        "polar_learned_native_hand": "precondition", "axial_learned_native_hand": "precondition",
        "polar_beats_majority_hand_design": "precondition", "axial_beats_majority_hand_design": "precondition",
        "sequence_head_beats_trivial": "precondition", "axial_requested_hand_majority": "evidence",
        "axial_quality_noninferior": "evidence", "equivariance_certificates": "check",
        "polar_wrong_hand_on_mirrored_targets": "check", "fullatom_candidates_energy_checked": "check",
        "export_checks": "check"}
    verdicts = {c["id"]: c["verdict"] for c in metrics["claims"]}
    assert verdicts["equivariance_certificates"] == "holds" == verdicts["export_checks"]
    m = metrics["metrics"]
    assert m["export_n_exported"] >= 1 and m["export_n_pass"] == m["export_n_exported"]
    assert m["polar_design_mirror_deviation_A"] < 1e-9  # polar designs on a mirrored target are exact mirror images
    seeds = set(pq.read_table(runs["verify"] / VERIFIED_FILE)["train_seed"].to_pylist())
    assert seeds == {2, 4}  # the smoke profile's two training seeds, each a network per variant
    hand = next(c for c in metrics["claims"] if c["id"] == "axial_requested_hand_majority")
    assert hand["n"] == 8 and "2 seeds x 4 targets" in hand["measured"]["units"]
    assert verify_folder("pepmirror", runs["verify"]).outcome is Outcome.VERIFIED
    assert verify_folder("pepmirror", runs["export"]).outcome is Outcome.VERIFIED
    assert m["fullatom_n"] == m["export_n_exported"] and m["fullatom_max_mirror_energy_rel_diff"] < 1e-9
    manifest = json.loads((runs["export"] / "candidate_manifest.json").read_text())
    for entry in manifest["candidates"]:  # every chiral CA in the exported full-atom files is D
        for ext in ("pdb", "cif"):
            text = (runs["export"] / f"fullatom/{entry['id']}.{ext}").read_text()
            vols = _peptide_ca_volumes(text, entry["fullatom_peptide_chain"])
            assert vols and all(v < -geometry.CHIRAL_EPS for v in vols.values())
    export = shutil.copytree(runs["export"], tmp_path / "export")
    sdf = next((export / "sdf").iterdir())
    sdf.write_text(sdf.read_text().replace("D", "L", 1))
    tampered = verify_folder("pepmirror", export)
    assert tampered.outcome is Outcome.REFUTED and tampered.message.startswith(f"checksum mismatch: sdf/{sdf.name}")
    verify = shutil.copytree(runs["verify"], tmp_path / "verify")
    table = pq.read_table(verify / VERIFIED_FILE)
    hands = table["residue_hands"].to_pylist()
    i = next(i for i, h in enumerate(hands) if "L" in h)
    hands[i] = hands[i].replace("L", "D", 1)  # one residue recorded with the wrong hand
    column = table.schema.get_field_index("residue_hands")
    pq.write_table(table.set_column(column, "residue_hands", pa.array(hands)), verify / VERIFIED_FILE)
    assert verify_folder("pepmirror", verify).outcome is Outcome.REFUTED
    assert verify_folder("pepmirror", tmp_path).outcome is Outcome.REFUSED  # neither an export nor a verify folder
    assert verify_folder("pepmirror", runs["verify"], budget=1).outcome is Outcome.UNDECIDED


def test_a_seed_effect_widens_the_quality_interval_to_its_seeds() -> None:
    """Three seeds whose axial networks differ (quality x1.08, x1.0, x0.84 on mirrored targets) but whose cells agree
    within a seed: the ratio's interval is the crossed design's (df ~2: the seeds, not the 24 cells), so clashes
    and the others are inconclusive, with the training seeds that would resolve them; pooling the 24 cells as
    independent would have held."""
    from paperdag.common.stats import cluster_mean_ci

    designs = _designs(0.98, 0.9, 1.0, seeds=3)
    mirrored_axial = (designs["variant"] == "axial") & (designs["target_hand"] == "D")
    scale = designs["train_seed"].map({10: 1.08, 11: 1.0, 12: 0.84})
    for k in ("contacts", "buried_surface", "native_recovery"):
        designs.loc[mirrored_axial, k] *= scale[mirrored_axial]
    designs.loc[mirrored_axial, "clashes"] /= scale[mirrored_axial]
    plans = Plans(targets=_plan(UNIT, 24), files=_plan("file", 13))
    out = {c.id: c for c in resolve(_claims(_measured(0.03), designs, _paired(50.0, seeds=3), plans=plans))}
    quality = out["axial_quality_noninferior"]
    assert quality.verdict == "inconclusive" and "training seeds x 8 targets at the observed variance" in quality.reason
    ratio = quality.measured["contacts"]["ratio"]
    assert ratio["components"]["seed"] > 0 and ratio["components"]["df"] < 3 and ratio["ci"][0] < 0.9
    polar, axial = (designs[(designs["variant"] == v) & (designs["target_hand"] == "D")].sort_values(
        ["train_seed", "target_id", "sample"]) for v in ("polar", "axial"))
    cells = polar["train_seed"].astype(str) + "/" + polar["target_id"]
    z = axial["contacts"].to_numpy() / polar["contacts"].mean() - ratio["mean"] * polar["contacts"].to_numpy() / \
        polar["contacts"].mean()
    independent = cluster_mean_ci(z, cells.to_numpy())  # the linearised ratio over cells taken as independent
    assert ratio["mean"] + independent.lo > 0.9


def test_seed_plan_power_grows_with_seeds_and_the_claim_needs_every_part() -> None:
    from paperdag.papers.pepmirror.seedplan import plan

    runs = [_designs(0.97, 0.9, 1.0, seeds=3)]
    rng = np.random.default_rng(3)
    for run in runs:  # noise in every quality metric of the axial designs, per design and per seed
        axial = (run["variant"] == "axial").to_numpy()
        noise = np.exp(rng.normal(0, 0.6, axial.sum()) + 0.05 * (run.loc[axial, "train_seed"].to_numpy() - 11))
        for k in ("contacts", "buried_surface", "native_recovery"):
            run.loc[axial, k] *= noise
        run.loc[axial, "clashes"] /= noise
    out = plan(runs, [4, 16], draws=300)
    few, many = out["rows"]
    assert few["claim"] < many["claim"] and many["claim"] == pytest.approx(np.prod(list(many["parts"].values())))
    assert set(out["components"]) == {"contacts", "buried_surface", "native_recovery", "clashes", "polar_native_hand"}
