"""PepMirror: chirality-aware equivariant peptide design and a wet-lab-ready D-peptide candidate export.

Paper: "D-peptide binders ... injecting axial features to E(3)-equivariant (polar) vector features ... cross-
chirality generalization from homo-chiral (L-L) training data to hetero-chiral (D-L) design tasks" (ICML 2026;
code https://github.com/YZY010418/PepMirror). Small-scale reproduction:

- Method: a coordinate-space DDPM over the peptide's N, CA, C, CB atoms given a fixed pocket, whose denoiser is an
  E(3)-equivariant message-passing network with polar vector channels (EGNN/GVP-style, ``model.py``), in two
  variants: polar-only (reflection-equivariant) and polar + axial (cross products and commutators of vector
  channels mixed back by a bias-free linear layer: rotation-equivariant, reflection-sensitive). Sequences come
  from a contact-based residue classifier (``seqhead.py``). D-peptides for an L target are designed directly:
  an L peptide on the mirrored target, mirrored back.
- Certificates (``verify.py``): rotation/reflection equivariance errors in float64, the per-residue sign of
  ((N - CA) x (C - CA)) . (CB - CA) of every design (L > 0, D < 0).
- Export (``package.py``): FASTA / three-letter / order sheet / SMILES + InChIKey + SDF (RDKit, D stereocentres
  checked by CIP) / PDB complexes with D residue names / manifest with checksums.
- Data: PDB/mmCIF files shipped in the PyPI package MDAnalysisTests (see ``data.py``): 4E43 (HIV protease +
  peptide), 3PWP, 3KPR, 1BD2 (MHC class I + peptide), the DSSP test chains, adenylate kinase, 1A28, 19HC,
  1OSM, 5PTI. Citations: Ho et al. 2020 (DDPM), Satorras et al. 2021 (EGNN), Jing et al. 2021 (GVP).
"""
