"""The trivial baselines papers share (``../shared/papers.md``, the baseline ladder): one concept per module.

- ``ngram``: interpolated modified Kneser-Ney count n-gram language models, a ladder of orders chosen on validation
  windows and scored on the same test windows as the models they bound;
- ``byte_lm``: the ladder of a byte-level language model (Kneser-Ney orders 2-5 and the count bigrams) on the very
  validation windows the model is scored on, the order chosen on held-out windows that share no byte with them;
- ``classifiers``: k-nearest neighbours and logistic regression on the raw inputs, hyper-parameters chosen on
  validation;
- ``generators``: a fitted Gaussian, training-data replay and nearest-neighbour retrieval of training items by key.
"""
