"""Hyperbolic associative memory networks (HAMN) vs Euclidean modern Hopfield networks (ICML 2026 submission).

Claim under test (hierarchy-sensitivity hypothesis): HAMN retrieves better than the Euclidean MHN on deep
hierarchies and comparably on shallow ones; its wrong retrievals are closer in the tree; retrieval stays on the
manifold. The abstract gives no number; we measure leaf retrieval from noisy queries on balanced trees of depth
2..6, the noise calibrated once at depth 2 (pooled over held-out seeds) so all memories score alike there.

Methods: HAMN (hyperbolic_memory.py): exp_0 onto the Poincare ball, an energy on the Minkowski inner product of the
hyperboloid images with a regulariser towards the origin, Riemannian gradient descent with exp-map updates and a
curvature-aware backtracked step (geoopt: Kochurov, Karimov & Kozlukov 2020). Baselines (modern_hopfield.py): the
modern Hopfield network (Ramsauer et al. 2021, ICLR) on L2-normalised patterns and its distance-softmax form, each
cell's beta set by one storage rule for every memory (queries.storage_beta); Ramsauer's MHN on the raw patterns is
run and reported but cannot store deep trees (dot products on unequal norms), so it is no baseline of a claim.
Memories: Poincare embeddings (Nickel & Kiela 2017, NeurIPS) vs Euclidean embeddings of the same tree with the same
loss, dimension, optimiser, burn-in and budget (embedding.py), in dimension 3, where the Poincare embedding
reconstructs the deepest trees better (at dimension 5 it did not at b=2).

Data: procedural only (tree.py): complete b-ary trees, b in {2, 3}, depth D in {2..6}. No real hierarchy: WordNet
is not shipped inside a PyPI package (nltk and wn download it at run time). prepare records the trees and a sha256.
"""
