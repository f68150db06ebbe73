"""NorMuon: neuron-wise normalized Muon (ICML 2026), reproduced at small scale.

Paper: Z. Li, L. Liu, C. Liang, W. Chen, T. Zhao, "NorMuon: Making Muon more efficient and scalable"
(arXiv:2510.05491). Muon: K. Jordan et al., "Muon: An optimizer for hidden layers in neural networks" (2024);
Newton-Schulz coefficients (3.4445, -4.7750, 2.0315) from that work. AdamW: Loshchilov & Hutter (ICLR 2019).

Method: Muon orthogonalizes the Nesterov momentum of each hidden weight matrix with a quintic Newton-Schulz
iteration; NorMuon then divides each row (output neuron) of the orthogonalized update by the square root of an EMA
of its mean square and rescales to the update's original Frobenius norm (``optim.py``). The fused Q, K, V
projection is one 3d x d matrix, orthogonalised as one block (not three). ``distributed.py`` shards the per-matrix
work round-robin across ranks and all-gathers the updates.

Experiment: a 2-layer byte-level transformer (``paperdag.common``) trained with AdamW, Muon and NorMuon from the same
initialisations on the same batches, several seeds, each optimizer at the lr its own pilot chose from the same grid
shape around its published rate (a pilot seed, a tuning slice of the training documents: ``runs.py``); evaluate compares steps to AdamW's final
validation loss, per-neuron update-norm uniformity (Muon's against random semi-orthogonal matrices, ``reference.py``),
time per step and optimizer memory. ``trend.py`` (no stage) trains the three at doubling budgets on the CPU against
the Kneser-Ney ladder: how far the default is from competence, and whether the gpu profile's sizes reach it.

Data: source files of a few CPython standard-library packages, read from the running interpreter (no download);
the prepare stage records the Python version, the file list and a sha256 of the text.
"""
