"""PepMirror: chirality-aware equivariant peptide design and a wet-lab-ready D-peptide candidate export.

Claim under test (ICML 2026; code https://github.com/YZY010418/PepMirror): injecting axial features into
E(3)-equivariant (polar) vector features lets a model trained on homo-chiral (L-L) data design for hetero-chiral
(D-L) tasks; a polar-only model cannot: having learned the native hand, it mirrors its designs with the target.
Restated at small scale: both models design L peptides on native targets (sanity); on mirrored targets the polar
one gives ~no L residue, the axial one a clear L majority.

Methods: a coordinate-space DDPM (Ho et al. 2020) over the peptide's N, CA, C, CB atoms given a fixed pocket
(diffusion.py), whose denoiser is an E(3)-equivariant message-passing network with polar vector channels (EGNN,
Satorras et al. 2021; GVP, Jing et al. 2021) and frame-Gram invariants in two variants (model.py): polar-only
(the baseline) and polar + axial (cross products: rotation-equivariant, reflection-sensitive). Sequences come from
a backbone + pocket sequence head (seqhead.py); D-peptides for an L target are designed as L peptides on the
mirrored target, mirrored back (design.py, selection.py), built full-atom and amber14-minimised in mirror space with
OpenMM/PDBFixer (fullatom.py). Certificates: float64 equivariance errors (certificates.py) and the per-residue sign
of ((N - CA) x (C - CA)) . (CB - CA) (geometry.py). Export: FASTA, order sheet, SMILES + InChIKey + SDF (RDKit,
CIP-checked), backbone and full-atom PDB/mmCIF complexes with D residue names (package.py).

Data: PDB/mmCIF files shipped in the PyPI package MDAnalysisTests (data.py): 4E43 (HIV protease + peptide),
3PWP, 3KPR, 1BD2 (MHC class I + peptide), the DSSP test chains, adenylate kinase, 1A28, 19HC, 1OSM, 5PTI;
prepare records the package version, files, chains and a content hash in provenance.json.
"""
