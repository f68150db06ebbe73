"""Hyperbolic associative memory networks (HAMN) vs Euclidean modern Hopfield networks (ICML 2026 submission).

Claim under test (hierarchy-sensitivity hypothesis): HAMN retrieves better than the Euclidean MHN on deep
hierarchies and comparably on shallow ones; its wrong retrievals are closer in the tree; retrieval stays on the
manifold. The abstract gives no number; we measure leaf retrieval from noisy queries on balanced trees of depth
2..6: accuracy at a noise calibrated at depth 2 on held-out seeds (on the noise's ML decoder), and noise tolerance
(the noise at which a memory retrieves half its queries) against depth; every memory at a finite temperature set by
one rule on held-out seeds (queries.calibrate_beta_noisy: the smallest beta that stores its leaves and keeps a
declared share of its stronger decoder's accuracy above chance on noisy queries, by a 95% lower confidence bound)
and judged against the nearest-neighbour and ML decoders of its own geometry and noise.

Methods: HAMN (hyperbolic_memory.py): points of the Poincare ball, an energy on the Minkowski inner product of the
hyperboloid images with a regulariser towards the origin, Riemannian gradient descent with exp-map updates and a
curvature-aware backtracked step (geoopt: Kochurov, Karimov & Kozlukov 2020). Baselines (modern_hopfield.py): the
modern Hopfield network (Ramsauer et al. 2021, ICLR) on L2-normalised patterns and its distance-softmax form;
Ramsauer's MHN on the raw patterns is run and reported but cannot store deep trees (dot products on unequal norms),
so it is no baseline of a claim. Query noise (noise.py): Gaussian before each memory's map (exp_0 for HAMN); the
wrapped normal at the stored point is implemented and its uncalibratable accuracy floor recorded.
Memories: Poincare embeddings (Nickel & Kiela 2017, NeurIPS) vs Euclidean embeddings of the same tree with the same
loss, dimension, optimiser, burn-in and budget (embedding.py), in dimension 3.

Data: procedural only (tree.py): complete b-ary trees, b in {2, 3}, depth D in {2..6}. No real hierarchy: WordNet
is not shipped inside a PyPI package (nltk and wn download it at run time). prepare records the trees and a sha256.
"""
