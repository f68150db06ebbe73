"""paperdag.common.baselines: Kneser-Ney against a textbook brute force and a known entropy rate, k-NN and logistic
regression against brute force and their own selection rule, the trivial generators against their definitions."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy.special import logsumexp

from paperdag.common.baselines import generators
from paperdag.common.baselines.classifiers import knn, logistic
from paperdag.common.baselines.generators import (
    fit_gaussian,
    nearest_neighbour_retrieval,
    replay,
    sample_gaussian,
)
from paperdag.common.baselines.ngram import (
    FALLBACK_DISCOUNTS,
    KneserNey,
    kneser_ney_ladder,
    window_nll,
)

# ---------------------------------------------------------------------------------------------------- Kneser-Ney


def textbook_kn(tokens: list[int], order: int, vocab: int):
    """Interpolated modified Kneser-Ney from dict counts, formula by formula (Chen & Goodman 1998, eqs. 17-19)."""
    raw = {k: Counter(tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1)) for k in range(1, order + 1)}
    cont = {k: Counter(g[1:] for g in raw[k + 1]) for k in range(1, order)}

    def discount_of(counts: Counter) -> tuple[float, ...]:
        n1, n2, n3, n4 = (sum(1 for c in counts.values() if c == r) for r in (1, 2, 3, 4))
        if 0 in (n1, n2, n3, n4):
            return FALLBACK_DISCOUNTS
        y = n1 / (n1 + 2 * n2)
        d = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
        return d if 0 < d[0] <= 1 and 0 < d[1] <= 2 and 0 < d[2] <= 3 else FALLBACK_DISCOUNTS

    tables = {("raw", k): c for k, c in raw.items()} | {("cont", k): c for k, c in cont.items()}
    disc = {key: discount_of(c) for key, c in tables.items()}

    def p(w: int, h: tuple[int, ...], kind: str) -> float:
        k = len(h) + 1
        lower = 1.0 / vocab if k == 1 else p(w, h[1:], "cont")
        row = [tables[kind, k].get(h + (v,), 0) for v in range(vocab)]
        total = sum(row)
        if total == 0:
            return lower
        d = disc[kind, k]
        cut = [d[min(c, 3) - 1] if c > 0 else 0.0 for c in row]
        return max(row[w] - cut[w], 0.0) / total + sum(cut) / total * lower

    def prob(w: int, context: tuple[int, ...]) -> float:
        known = list(context)
        while -1 in known:
            known = known[known.index(-1) + 1 :]
        return p(w, tuple(known), "raw")

    return prob, disc


@pytest.mark.parametrize(("vocab", "order", "n"), [(6, 3, 300), (5, 4, 400), (8, 2, 150)])
def test_kneser_ney_matches_textbook_brute_force(vocab: int, order: int, n: int) -> None:
    rng = np.random.default_rng(0)
    tokens = rng.choice(vocab, size=n, p=rng.dirichlet(np.full(vocab, 0.5)))
    model = KneserNey.fit(tokens, order, vocab)
    prob, disc = textbook_kn(tokens.tolist(), order, vocab)
    built = {("raw", k + 1): t.discounts for k, t in enumerate(model.raw)}
    built |= {("cont", k + 1): t.discounts for k, t in enumerate(model.cont)}
    assert built == {key: pytest.approx(d, abs=1e-12) for key, d in disc.items()}
    assert built["raw", order] != FALLBACK_DISCOUNTS  # the count-of-counts formula itself is exercised
    # every context over {-1, 0..V-1} (seen, unseen, short, -1 in the middle) and every target
    rows = [(c, w) for c in itertools.product(range(-1, vocab), repeat=order - 1) for w in range(vocab)]
    context = np.array([c for c, _ in rows], dtype=np.int64).reshape(len(rows), order - 1)
    target = np.array([w for _, w in rows])
    expected = np.log([prob(w, c) for c, w in rows])
    np.testing.assert_allclose(model.log_probs(context, target), expected, rtol=0, atol=1e-10)


def test_kneser_ney_normalised_for_every_context_and_order() -> None:
    rng = np.random.default_rng(3)
    vocab, order = 16, 5
    model = KneserNey.fit(rng.choice(vocab, size=5000, p=rng.dirichlet(np.full(vocab, 0.5))), order, vocab)
    context = rng.integers(0, vocab, size=(60, order - 1))
    context[rng.random(context.shape) < 0.15] = -1  # short (and mid-padded) contexts
    context[:5] = -1
    lp = model.level_log_probs(np.repeat(context, vocab, axis=0), np.tile(np.arange(vocab), len(context)))
    assert np.isfinite(lp).all()
    np.testing.assert_allclose(logsumexp(lp.reshape(order, len(context), vocab), axis=2), 0.0, atol=1e-12)


def test_truncation_is_the_lower_order_fit_and_window_nll_uses_window_contexts() -> None:
    rng = np.random.default_rng(4)
    vocab = 6
    tokens = rng.integers(0, vocab, size=3000)
    model, model3 = KneserNey.fit(tokens, 4, vocab), KneserNey.fit(tokens, 3, vocab)
    x, y = rng.integers(0, vocab, size=(3, 7)), rng.integers(0, vocab, size=(3, 7))
    manual = np.zeros((3, 7))
    for b, t in itertools.product(range(3), range(7)):
        context = [-1, -1] + list(x[b, : t + 1])  # what precedes y[b, t] in its window, -1 before the window
        manual[b, t] = -model.log_probs(np.array([context[-3:]]), y[b, [t]])[0]
    np.testing.assert_allclose(window_nll(model, x, y), manual, rtol=0, atol=1e-12)
    np.testing.assert_allclose(window_nll(model.truncated(3), x, y), window_nll(model3, x, y), rtol=0, atol=1e-12)


def markov2(vocab: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random second-order Markov chain: (tokens, transition P[a, b, c], stationary pair distribution pi[a, b])."""
    trans = rng.dirichlet(np.full(vocab, 0.3), size=(vocab, vocab))
    pair = np.zeros((vocab * vocab, vocab * vocab))
    for a, b, c in itertools.product(range(vocab), repeat=3):
        pair[a * vocab + b, b * vocab + c] = trans[a, b, c]
    vals, vecs = np.linalg.eig(pair.T)
    pi = np.abs(np.real(vecs[:, np.argmin(np.abs(vals - 1))]))
    cum, u = np.cumsum(trans, axis=2), rng.random(n)
    seq = [0, 0]
    for i in range(n - 2):
        seq.append(min(int(np.searchsorted(cum[seq[-2], seq[-1]], u[i])), vocab - 1))
    return np.array(seq), trans, (pi / pi.sum()).reshape(vocab, vocab)


def test_ladder_finds_the_order_and_the_entropy_rate_of_a_markov_chain() -> None:
    rng = np.random.default_rng(5)
    vocab, t_len = 8, 128
    seq, trans, pi = markov2(vocab, 100_000 + 300 * (t_len + 1), rng)
    train, rest = seq[:100_000], seq[100_000:].reshape(300, t_len + 1)
    valid, test = (rest[:100, :-1], rest[:100, 1:]), (rest[100:, :-1], rest[100:, 1:])
    ladder = kneser_ney_ladder(train, valid, test, vocab)
    assert ladder.names() == {2: "KN 2-gram", 3: "KN 3-gram", 4: "KN 4-gram", 5: "KN 5-gram"}
    assert ladder.chosen >= 3 and ladder.valid_nll[3] < ladder.valid_nll[2] - 0.1
    assert ladder.test_nll[3].shape == (200,)
    # the true model on the same targets: p(y_0 | x_0) from the stationary pairs, then P[x_{t-1}, x_t, y_t]
    x, y = test
    first = (pi[:, x[:, 0]] * trans[:, x[:, 0], y[:, 0]]).sum(0) / pi[:, x[:, 0]].sum(0)
    true_nll = -np.concatenate([np.log(first)[:, None], np.log(trans[x[:, :-1], x[:, 1:], y[:, 1:]])], axis=1)
    entropy_rate = float(-(pi[..., None] * trans * np.log(trans)).sum())
    assert abs(true_nll.mean() - entropy_rate) < 0.03  # the test windows are typical
    assert 0 <= ladder.test_nll[ladder.chosen].mean() - true_nll.mean() < 0.015
    assert ladder.test_nll[2].mean() - true_nll.mean() > 0.1  # a bigram cannot see the structure


def test_kneser_ney_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="vocab\\*\\*order"):
        KneserNey.fit(np.zeros(10, dtype=np.int64), 8, 256)
    with pytest.raises(ValueError, match="tokens in"):
        KneserNey.fit(np.array([0, 1, 7]), 2, 4)
    model = KneserNey.fit(np.array([0, 1, 2, 3]), 2, 4)
    with pytest.raises(ValueError, match="tokens must lie"):
        model.log_probs(np.array([[0]]), np.array([4]))


# ---------------------------------------------------------------------------------------------------- classifiers


def blobs(n: int, rng: np.random.Generator, spread: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Three Gaussian classes in 2x3 'images' (flattened by the baselines)."""
    y = rng.integers(0, 3, size=n)
    centres = np.array([[0, 0, 0, 0, 0, 0], [2, 0, 1, 0, 0, 1], [0, 2, 0, 1, 1, 0]], dtype=float)
    return (centres[y] + spread * rng.standard_normal((n, 6))).reshape(n, 2, 3), y


def split(rng: np.random.Generator, spread: float) -> tuple[np.ndarray, ...]:
    (trx, tr_y), (vax, va_y), (tex, te_y) = (blobs(n, rng, spread) for n in (300, 150, 150))
    return trx, tr_y, vax, va_y, tex, te_y


def test_one_nn_matches_brute_force() -> None:
    data = split(np.random.default_rng(6), 1.0)
    trx, tr_y, _, _, tex, te_y = data
    nearest = ((tex.reshape(150, 1, 6) - trx.reshape(1, 300, 6)) ** 2).sum(-1).argmin(1)
    fitted = knn(*data, ks=(1,))
    assert fitted.name == "1-NN (raw inputs)" and fitted.chosen == {"k": 1}
    np.testing.assert_array_equal(fitted.test_correct, (tr_y[nearest] == te_y).astype(float))
    targets = trx.sum(axis=(1, 2))  # regression on a continuous target
    reg = knn(trx, targets, data[2], data[2].sum(axis=(1, 2)), tex, tex.sum(axis=(1, 2)), ks=(1,), task="regression")
    np.testing.assert_allclose(reg.test_correct, (targets[nearest] - tex.sum(axis=(1, 2))) ** 2)


def test_selection_picks_the_best_validation_score() -> None:
    data = split(np.random.default_rng(7), 1.5)
    ks, cs = (1, 3, 5, 9, 15), (0.001, 0.01, 0.1, 1.0)
    knn_scores = [knn(*data, ks=(k,)).valid_score for k in ks]
    assert len(set(knn_scores)) > 1
    assert knn(*data, ks=ks).chosen == {"k": ks[int(np.argmax(knn_scores))]}
    reg = [knn(*data, ks=(k,), task="regression").valid_score for k in ks]  # MSE on the labels: lowest wins
    assert knn(*data, ks=ks, task="regression").chosen == {"k": ks[int(np.argmin(reg))]}
    lr_scores = [logistic(*data, cs=(c,)).valid_score for c in cs]
    assert len(set(lr_scores)) > 1
    best = logistic(*data, cs=cs)
    assert best.chosen == {"C": cs[int(np.argmax(lr_scores))]} and best.valid_score == max(lr_scores)


def test_logistic_separates_separable_data_and_is_deterministic() -> None:
    data = split(np.random.default_rng(8), 0.1)
    fitted = logistic(*data)
    assert fitted.valid_score == 1.0 and fitted.test_correct.mean() == 1.0
    assert fitted.name == f"logistic regression (C={fitted.chosen['C']:g})"
    noisy = split(np.random.default_rng(9), 1.5)
    for fit in (logistic, knn):
        a, b = fit(*noisy), fit(*noisy)
        assert 0 < a.test_correct.mean() < 1
        assert (a.name, a.valid_score, a.test_correct.tobytes()) == (b.name, b.valid_score, b.test_correct.tobytes())


# ---------------------------------------------------------------------------------------------------- generators


def test_gaussian_recovers_moments_and_ridges_the_covariance() -> None:
    rng = np.random.default_rng(10)
    mean, a = np.array([1.0, -2.0, 0.5]), rng.standard_normal((3, 3))
    cov = a @ a.T + 0.1 * np.eye(3)
    m, c = fit_gaussian(sample_gaussian(mean, cov, 200_000, rng).reshape(200_000, 3, 1))
    np.testing.assert_allclose(m, mean, atol=0.02)
    np.testing.assert_allclose(c, cov, atol=0.03)
    few = rng.standard_normal((4, 10))  # n < d: singular sample covariance, the ridge makes it definite
    _, c = fit_gaussian(few)
    sample_cov = np.cov(few, rowvar=False)
    np.testing.assert_allclose(c - sample_cov, 1e-6 * np.trace(sample_cov) / 10 * np.eye(10), atol=1e-15)
    assert sample_gaussian(np.zeros(10), c, 5, rng).shape == (5, 10)


def test_replay_returns_training_rows() -> None:
    train = np.arange(40).reshape(10, 2, 2)
    drawn = replay(train, 10, np.random.default_rng(11))
    assert sorted(drawn[:, 0, 0].tolist()) == train[:, 0, 0].tolist()  # without replacement: a permutation
    many = replay(train, 25, np.random.default_rng(11))
    assert many.shape == (25, 2, 2) and all((row == train).all(axis=(1, 2)).any() for row in many)
    np.testing.assert_array_equal(replay(train, 25, np.random.default_rng(11)), many)


def test_retrieval_matches_brute_force(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(12)
    keys, queries = rng.standard_normal((200, 5)), rng.standard_normal((333, 5))
    items = rng.standard_normal((200, 3, 4))
    nearest = np.linalg.norm(queries[:, None] - keys[None], axis=-1).argmin(1)
    monkeypatch.setattr(generators, "CHUNK", 1000)  # several chunks of queries
    np.testing.assert_array_equal(nearest_neighbour_retrieval(items, keys, queries), items[nearest])
