"""mHC: manifold-constrained hyper-connections (Xie et al. 2025, DeepSeek-AI, arXiv:2512.24880; ICML 2026 submission).

Claim under test: hyper-connections (HC) widen the residual stream to n copies mixed by learned matrices H_res,
which breaks the identity mapping: the composite mixing gain prod_l H_res grows (about 3000 in a 27B model) and
training becomes unstable. Projecting H_res onto the doubly stochastic matrices (Sinkhorn-Knopp) restores a gain
near 1 (about 1.6), keeps training stable, lowers the final loss (0.021 below the baseline at 27B) at 6.7% step-time
overhead (n = 4, fused kernels).

Methods (connections.py, model.py): mHC with sigmoid read-in / write-back and Sinkhorn-Knopp residual mixing
(sinkhorn.py; Sinkhorn & Knopp 1967); baselines: HC (Zhu et al. 2024, arXiv:2409.19606), unconstrained tanh maps,
and the plain residual connection (He et al. 2016) of the shared substrate's GPT (paperdag.common.transformer).
All three share one byte-level transformer, data, optimizer, budget and seeds, at two stream widths and in a
learning-rate stress sweep (stability.py: post-warm-up loss and gradient surges, divergence).

Data: the shared substrate's corpus, source files of CPython's standard library read from the running interpreter
(paperdag.common.corpus; no download). prepare records the Python version, the file list and a sha256.
"""
