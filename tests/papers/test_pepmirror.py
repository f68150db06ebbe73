"""PepMirror: equivariance, chirality geometry, peptide stereochemistry, the export package, the certificate and
claim verdicts, and the re-verifier rejecting tampered artifacts. The platform contract (imports, params, smoke
run, claims file) is checked for every paper by tests/test_paper_contract.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from Bio import SeqIO
from rdkit import Chem
from rdkit.Chem import rdCIPLabeler

from paperdag.papers.pepmirror import chem, data, geometry
from paperdag.papers.pepmirror.certificates import judge
from paperdag.papers.pepmirror.claims import claims
from paperdag.papers.pepmirror.model import Denoiser, cross_channels
from paperdag.papers.pepmirror.package import Candidate, build_package, check_pdb_chirality
from paperdag.papers.pepmirror.params import CertificateParams, ClaimParams
from paperdag.papers.pepmirror.reverify import VERIFIED_FILE, reverify

torch.set_num_threads(1)
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


@pytest.fixture(scope="module")
def d_candidate() -> tuple[Candidate, dict]:
    """The native 4E43 peptide, mirrored to D, placed in its real L pocket."""
    root = data.data_dir()
    ex = data.complex_example(data.read_chains(root / "4E43.pdb", "4E43.pdb"), "C", 10.0, 40, "target")
    import pyarrow as pa

    atoms = {ex["id"]: pa.table(data.target_atoms(root / "4E43.pdb", ex))}
    pep = np.asarray(ex["pep_xyz"]).reshape(-1, 4, 3)
    center = np.asarray(ex["pocket_xyz"]).reshape(-1, 4, 3)[:, 1].mean(0)
    # mirror the peptide through a plane through its own centroid: a D peptide at the same site
    cand = Candidate("PM001", ex["id"], ex["pep_seq"], geometry.mirror(pep, pep[:, 1].mean(0)), "test-v0",
                     {"in_silico": 1.0})
    assert np.isfinite(center).all()
    return cand, atoms


def test_export_package_parses_back(tmp_path, d_candidate) -> None:
    cand, atoms = d_candidate
    for name, blob in build_package([cand], atoms, {}, BONDS).items():
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


def test_export_rejects_bad_inputs(d_candidate) -> None:
    cand, atoms = d_candidate
    with pytest.raises(ValueError, match="empty design set"):
        build_package([], atoms, {}, BONDS)
    with pytest.raises(ValueError, match="non-standard residue"):
        build_package([Candidate("X", cand.target_id, "NLLQKB", cand.xyz, "v")], atoms, {}, BONDS)
    bad = cand.xyz.copy()
    bad[0, 1] = np.nan
    with pytest.raises(ValueError, match="malformed structure"):
        build_package([Candidate("X", cand.target_id, cand.sequence, bad, "v")], atoms, {}, BONDS)
    l_form = geometry.mirror(cand.xyz, cand.xyz[:, 1].mean(0))  # an L peptide must not pass as D
    with pytest.raises(ValueError, match="chirality check"):
        build_package([Candidate("X", cand.target_id, cand.sequence, l_form, "v")], atoms, {}, BONDS)
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


def _measured(polar_l: float, axial_l: float, recovery_axial: float) -> dict[str, float]:
    m = {f"{k}_{v}_mirrored": 1.0 for k in ("contacts", "buried_surface", "native_recovery", "clashes")
         for v in ("polar", "axial")} | {"native_recovery_axial_mirrored": recovery_axial}
    for v, ratio in (("polar", polar_l), ("axial", axial_l)):
        m |= {f"L_ratio_{v}_mirrored_target": ratio, f"L_ratio_{v}_native_target": 0.5,
              f"L_ratio_raw_{v}_mirrored_target": ratio, f"undefined_ratio_raw_{v}_mirrored_target": 0.0,
              f"{v}_rotation_error": 0.0, f"{v}_reflection_error": 0.0}
    return m


def test_claims_follow_their_thresholds() -> None:
    p = ClaimParams(near_zero=0.1, clear_majority=0.7, noninferiority_margin=0.1)
    cert = CertificateParams(equiv_tol=1e-8, reflection_min_violation=1e-3)
    ok = {"polar": True, "axial": True}

    def verdicts(m: dict[str, float], passes: dict[str, bool], package: dict[str, int]) -> dict[str, bool]:
        return {c.id: c.holds for c in claims(m, passes, package, p, cert)}

    assert all(verdicts(_measured(0.05, 0.8, 0.95), ok, {"n_exported": 2, "n_pass": 2}).values())
    wrong = verdicts(_measured(0.5, 0.6, 0.85), {"polar": True, "axial": False}, {"n_exported": 2, "n_pass": 1})
    assert not any(wrong.values())
    assert not verdicts(_measured(0.05, 0.8, 0.95), ok, {"n_exported": 0, "n_pass": 0})["export_checks"]


@pytest.mark.slow
def test_smoke_run_designs_certifies_and_exports(smoke_runs, tmp_path: Path) -> None:
    runs = smoke_runs("pepmirror")
    metrics = runs.metrics()
    assert {c["id"] for c in metrics["claims"]} == {
        "equivariance_certificates", "polar_wrong_hand_on_mirrored_targets", "axial_requested_hand_majority",
        "axial_quality_noninferior", "export_checks"}
    holds = {c["id"]: c["holds"] for c in metrics["claims"]}
    assert holds["equivariance_certificates"] and holds["export_checks"]
    m = metrics["metrics"]
    assert m["export_n_exported"] >= 1 and m["export_n_pass"] == m["export_n_exported"]
    assert m["polar_design_mirror_deviation_A"] < 1e-9  # polar designs on a mirrored target are exact mirror images
    assert reverify(runs["verify"])[0] and reverify(runs["export"])[0]
    export = shutil.copytree(runs["export"], tmp_path / "export")
    sdf = next((export / "sdf").iterdir())
    sdf.write_text(sdf.read_text().replace("D", "L", 1))
    assert reverify(export) == (False, f"checksum mismatch: sdf/{sdf.name}")
    verify = shutil.copytree(runs["verify"], tmp_path / "verify")
    table = pq.read_table(verify / VERIFIED_FILE)
    hands = table["residue_hands"].to_pylist()
    i = next(i for i, h in enumerate(hands) if "L" in h)
    hands[i] = hands[i].replace("L", "D", 1)  # one residue recorded with the wrong hand
    column = table.schema.get_field_index("residue_hands")
    pq.write_table(table.set_column(column, "residue_hands", pa.array(hands)), verify / VERIFIED_FILE)
    assert not reverify(verify)[0]
