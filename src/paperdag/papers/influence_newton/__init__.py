"""Influence functions vs a single Newton step for data attribution (ICML 2026 submission, data-attribution paper).

Claim under test: for convex ERM under *local* strong convexity and smoothness around the first Newton step, and
concretely for logistic regression with Gaussian features, removing k of n points in dimension d gives
    ||theta_T - theta_NS|| ~ k d / n^2,     ||theta_NS - theta_IF|| ~ (k + d) sqrt(k d) / n^2,
so the influence function's error exceeds the Newton step's by a factor ~ (k + d) / sqrt(k d).

Methods (attribution.py): influence function theta_hat + H^-1 g_T (Cook & Weisberg 1982, "Residuals and Influence
in Regression"; Koh & Liang 2017, ICML) and one Newton step theta_hat + (H - H_T)^-1 g_T (Pregibon 1981, Ann. Stat.
"Logistic regression diagnostics"; Koh, Ang, Teo & Liang 2019, NeurIPS, "On the accuracy of influence functions for
measuring group effects"), against exact leave-T-out refits by batched Newton (glm.py).

Data: procedural only, nothing downloaded (data.py): x ~ N(0, I_d), y ~ Bernoulli(sigmoid(x . theta*)),
||theta*|| = theta_norm; random removal subsets and coherent (same-label nearest-neighbour cluster) groups. The
prepare stage stores features, labels and subsets as Parquet and the generator and seeds in provenance.json.
"""
