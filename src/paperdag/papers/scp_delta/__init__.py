"""scp_delta (ICML 2026 submission): SCP-Delta_r, a near-access-free (NAF) defence against training-data extraction.

Claim under test: keeping the min-combined relative shift q_i / p0 only on a few influential tokens and smoothing
the rest back to a base model p0 gives much tighter NAF bounds than CP-Delta (paper: orders of magnitude), strong
protection against extraction, and little utility loss. We certify every bound exactly by enumerating the 256-byte
vocabulary at every position and rank canaries by enumerating the whole 10^D code space.

Methods: SCP-Delta_r (combine.py, our documented construction); baselines CP-Delta and CP-k (Vyas, Kakade & Barak
2023, ICML) and the unprotected q_full; attacks: exposure (Carlini et al. 2019, USENIX Security), greedy and sampled
completion (extraction.py).

Data: public corpus = CPython standard-library sources (paperdag.common.corpus, no download) to pretrain p0; private
set = procedural templated records plus secret D-digit canaries in two disjoint shards, a few duplicated in both
(records.py). prepare records the Python version, the seeds and sha256 hashes in provenance.json.
"""
