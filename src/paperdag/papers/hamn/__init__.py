"""Hyperbolic associative memory networks (HAMN) vs Euclidean modern Hopfield networks (ICML 2026 submission).

Claim under test (hierarchy-sensitivity hypothesis): HAMN retrieves better than the Euclidean MHN on deep
hierarchies and comparably on shallow ones; its wrong retrievals are closer in the tree; retrieval stays on the
manifold. The abstract gives no number; we measure leaf retrieval from noisy queries on balanced trees of depth
2..6, the noise calibrated once at depth 2 so both score alike there.

Methods: HAMN (hyperbolic_memory.py): exp_0 onto the Poincare ball, an energy on the Minkowski inner product of the
hyperboloid images with a regulariser towards the origin, Riemannian gradient descent with exp-map updates and a
curvature-aware backtracked step (geoopt: Kochurov, Karimov & Kozlukov 2020). Baseline: the modern Hopfield network
(modern_hopfield.py; Ramsauer et al. 2021, ICLR). Memories: Poincare embeddings (Nickel & Kiela 2017, NeurIPS) vs
Euclidean embeddings of the same tree with the same loss, dimension, optimiser and budget (embedding.py).

Data: procedural only (tree.py): complete b-ary trees, b in {2, 3}, depth D in {2..6}. No real hierarchy: WordNet
is not shipped inside a PyPI package (nltk and wn download it at run time). prepare records the trees and a sha256.
"""
