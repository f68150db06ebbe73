"""Shared substrate reused by several papers: a small language-model stack, trivial baselines, confidence intervals,
sample-size plans and the claim model.

- ``tokenizer``: a byte-level tokenizer (vocabulary 256, lossless for any UTF-8 text).
- ``corpus``: a real-text corpus that needs no download (the Python standard library's own source files), a
  deterministic file-level train/validation split, Parquet round trip, and fixed-length batch sampling.
- ``transformer``: a tiny decoder-only transformer (pre-norm, causal self-attention, MLP) in plain torch.
- ``masked_diffusion``: a masked-diffusion language model's forward corruption and loss.
- ``ngram``: count bigram models (add-one, interpolated Witten-Bell) of a byte sequence.
- ``baselines``: the trivial-baseline ladder papers share (Kneser-Ney n-grams, k-NN and logistic regression on raw
  inputs, a fitted Gaussian, training-data replay and nearest-neighbour retrieval).
- ``stats``: confidence intervals by type, each with its unit (t, paired t, cluster, Clopper-Pearson / Wilson,
  bootstrap ratio, fitted slope), re-computable at any level.
- ``plans``: sample-size plans (power, design, budget, group-sequential) declared in params.yaml.
- ``verdicts``: the claim model (evidence, checks, preconditions with their ladders) and the shared decision rules
  (superiority, non-inferiority, equivalence, trend, exact, all_of with Holm) every paper's ``claims.py`` uses.
"""
