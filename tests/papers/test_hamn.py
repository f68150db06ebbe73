"""hamn science against independent oracles: the maps and distances of the Poincare ball against closed forms and
geoopt, the trees against brute force, the MAP against scikit-learn, the energies along their updates, the
on-manifold check, the claims' verdicts on inputs on both sides of their rules (and inconclusive where a
precondition fails), and the smoke run through the platform. The platform
contract is checked by tests/test_paper_contract.py."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import average_precision_score

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import Interval
from paperdag.common.verdicts import resolve
from paperdag.io import read_table
from paperdag.papers.hamn.analysis import SPAN, clean_means, tolerance
from paperdag.papers.hamn.claims import (plans_check, BASELINES, RANDOM_RANKING, UNTRAINED, Comparison, DecoderRung, EmbeddingRungs,
                                         Regime, claims)
from paperdag.papers.hamn.embedding import (average_distortion, poincare_distance, reconstruction_map, train_embedding,
                                           tree_metric_map)
from paperdag.papers.hamn.hyperbolic_memory import (STILL, energy_terms, hamn_energy, hamn_retrieve, hamn_step,
                                                     lorentz_lift, minkowski, poincare_ball)
from paperdag.papers.hamn.ladders import random_ranking_map
from paperdag.papers.hamn.modern_hopfield import distance_energy, distance_update, mhn_energy, mhn_update
from paperdag.papers.hamn.noise import noisy_queries
from paperdag.papers.hamn.params import ClaimParams, Plans
from paperdag.papers.hamn.queries import (Retriever, accuracy, calibrate_beta, calibrate_beta_noisy,
                                          calibrate_noise_on_decoder, clean_accuracy, decode_all,
                                          decoder_accuracy, input_space, leaf_queries, ml_leaf, nearest_leaf)
from paperdag.papers.hamn.pilot import FAMILIES, Spread, seed_spreads
from paperdag.papers.hamn.retrieve import CALIBRATION_FILE, PILOT_FILE, RETRIEVALS_FILE
from paperdag.papers.hamn.tree import ancestor_table, balanced_tree, closure_pairs, lca_level, related

F64 = torch.float64
SLUG = "hamn"


def _ball_points(n: int, dim: int, c: float, seed: int, radius: float = 3.0) -> torch.Tensor:
    """exp_0 of Gaussian tangent vectors of RMS norm radius / sqrt c (hyperbolic distance to 0 about 2 radius)."""
    g = torch.Generator().manual_seed(seed)
    return poincare_ball(c).expmap0(radius * torch.randn(n, dim, generator=g, dtype=F64) / (dim * c) ** 0.5)


@pytest.mark.parametrize("c", [0.5, 1.0, 2.0])
def test_exp_and_log_maps_invert_each_other(c: float) -> None:
    """log_0(exp_0(v)) = v; exp_0 of a vector of norm r lands at Euclidean norm tanh(sqrt c r) / sqrt c; the update
    exp_x(u) travels the Riemannian length of u, d(x, exp_x(u)) = lambda_x ||u|| (closed-form distance)."""
    ball = poincare_ball(c)
    v = 1.2 * torch.randn(50, 4, generator=torch.Generator().manual_seed(0), dtype=F64) / c**0.5
    x = ball.expmap0(v, project=False)
    # sqrt(c)||v|| up to ~5, the range of the embeddings (geoopt keeps sqrt(c)||p|| <= 1 - 1e-5, i.e. <= 6.1)
    assert torch.allclose(ball.logmap0(x), v, atol=1e-8)
    assert torch.allclose(x.norm(dim=1), torch.tanh(c**0.5 * v.norm(dim=1)) / c**0.5, atol=1e-12)
    x = _ball_points(50, 4, c, 1, radius=1.0)
    u = 0.05 * torch.randn(50, 4, generator=torch.Generator().manual_seed(1), dtype=F64)
    travelled = poincare_distance(x, ball.expmap(x, u, project=False), c)
    assert torch.allclose(travelled, ball.norm(x, u, keepdim=True).squeeze(-1), rtol=1e-7)


@pytest.mark.parametrize("c", [0.5, 1.0, 2.0])
def test_distances_match_the_closed_forms(c: float) -> None:
    """Our arcosh formula = geoopt's Mobius formula (at moderate distances: geoopt clamps artanh at 1 - 1e-7, so its
    distances saturate near 16 / sqrt c); c <L(x), L(y)>_L = -cosh(sqrt c d) up to d ~ 20; L(x) is on the
    hyperboloid; on a line through 0, d(0, t e_1) = 2 artanh(sqrt c t) / sqrt c."""
    x, y = _ball_points(40, 3, c, 2, radius=1.5), _ball_points(40, 3, c, 3, radius=1.5)
    assert torch.allclose(poincare_distance(x, y, c), poincare_ball(c).dist(x, y), rtol=1e-9)
    x, y = _ball_points(40, 3, c, 2), _ball_points(40, 3, c, 3)
    d = poincare_distance(x, y, c)
    lx, ly = lorentz_lift(x, c), lorentz_lift(y, c)
    assert torch.allclose(torch.diagonal(c * minkowski(lx, ly)), -torch.cosh(c**0.5 * d), rtol=1e-6)
    assert torch.allclose(torch.diagonal(minkowski(lx, lx)), torch.full((40,), -1 / c, dtype=F64), rtol=1e-6)
    t = torch.tensor([[0.3 / c**0.5, 0, 0]], dtype=F64)
    on_line = 2 * torch.atanh(torch.tensor(0.3, dtype=F64)) / c**0.5
    assert torch.allclose(poincare_distance(torch.zeros_like(t), t, c), on_line)
    assert torch.allclose(energy_terms(t, t, c)[0], torch.tensor([[-1.0]], dtype=F64))


def test_tree_closure_and_lca_against_brute_force() -> None:
    """Closure edges = sum of node levels; LCA level and relatedness by walking parents."""
    tree = balanced_tree(3, 3)
    assert tree.size == 40 and len(tree.leaves) == 27
    u, v = closure_pairs(tree)
    assert len(u) == tree.level.sum()

    def path(i: int) -> list[int]:
        out = [i]
        while tree.parent[out[-1]] >= 0:
            out.append(int(tree.parent[out[-1]]))
        return out

    anc = ancestor_table(tree)
    i, j = np.meshgrid(np.arange(tree.size), np.arange(tree.size), indexing="ij")
    lca = lca_level(anc, i.ravel(), j.ravel()).reshape(tree.size, tree.size)
    rel = related(anc, tree.level, i, j)
    for a in range(tree.size):
        for b in range(tree.size):
            common = set(path(a)) & set(path(b))
            assert lca[a, b] == max(tree.level[k] for k in common)
            assert rel[a, b] == (a in path(b) or b in path(a))


def test_reconstruction_map_matches_sklearn() -> None:
    """MAP of a random embedding = mean over nodes of sklearn's average precision of -distance for the closure
    neighbours."""
    tree = balanced_tree(2, 3)
    emb = torch.randn(tree.size, 2, generator=torch.Generator().manual_seed(4), dtype=F64)
    anc = ancestor_table(tree)
    idx = np.arange(tree.size)
    aps = []
    for u in idx:
        others = idx[idx != u]
        aps.append(average_precision_score(related(anc, tree.level, np.full_like(others, u), others),
                                           -(emb[others] - emb[u]).norm(dim=1).numpy()))
    assert reconstruction_map(tree, emb, "euclidean", 1.0) == pytest.approx(np.mean(aps), abs=1e-12)


def test_poincare_embedding_learns_the_tree() -> None:
    """A few dozen Riemannian Adam steps put a depth-3 tree on the ball with MAP far above the untrained one."""
    tree = balanced_tree(2, 3)
    trained, _ = train_embedding(tree, "poincare", 3, 1.0, 80, 0.1, 8, 1e-3, torch.Generator().manual_seed(0))
    untrained, _ = train_embedding(tree, "poincare", 3, 1.0, 0, 0.1, 8, 1e-3, torch.Generator().manual_seed(0))
    assert (trained.norm(dim=1) < 1).all()
    assert reconstruction_map(tree, trained, "poincare", 1.0) > 0.9
    assert reconstruction_map(tree, untrained, "poincare", 1.0) < 0.9


def test_riemannian_gradient_matches_a_finite_difference_along_geodesics() -> None:
    """d/dt E(exp_xi(t u)) at t = 0 equals <grad_R E(xi), u>_xi (central difference, step 1e-6)."""
    ball = poincare_ball(1.0)
    mem, xi = _ball_points(6, 3, 1.0, 5), _ball_points(4, 3, 1.0, 6, radius=2.0)
    u = torch.randn(4, 3, generator=torch.Generator().manual_seed(7), dtype=F64)
    x = xi.clone().requires_grad_(True)
    (egrad,) = torch.autograd.grad(hamn_energy(x, mem, 2.0, 0.01, 1.0).sum(), x)
    rgrad = ball.egrad2rgrad(xi, egrad)
    h = 1e-6
    fd = (hamn_energy(ball.expmap(xi, h * u), mem, 2.0, 0.01, 1.0)
          - hamn_energy(ball.expmap(xi, -h * u), mem, 2.0, 0.01, 1.0)) / (2 * h)
    assert torch.allclose(fd, ball.inner(xi, rgrad, u, keepdim=True).squeeze(-1), rtol=1e-5)


def test_energies_decrease_along_their_updates() -> None:
    """HAMN: every Riemannian step lowers each query's energy (or leaves it put) and the state ends at a memory;
    MHN: the CCCP update never raises its energy."""
    mem = poincare_ball(1.0).logmap0(_ball_points(8, 3, 1.0, 8))
    g = torch.Generator().manual_seed(9)
    q = mem.repeat(4, 1) + 0.4 * torch.randn(32, 3, generator=g, dtype=F64)
    ball = poincare_ball(1.0)
    P, xi = ball.expmap0(mem), ball.expmap0(q)
    energies = [hamn_energy(xi, P, 5.0, 1e-5, 1.0)]
    for _ in range(30):
        xi = hamn_step(ball, xi, P, 5.0, 1e-5, 1.0, 1e-4, 8)
        energies.append(hamn_energy(xi, P, 5.0, 1e-5, 1.0))
    e = torch.stack(energies)
    assert (e[1:] <= e[:-1] + 1e-12).all() and (e[-1] < e[0]).all()
    assert (ball.dist(xi[:, None], P[None]).min(dim=1).values < 0.05).all()
    m = 0.5 * torch.randn(10, 4, generator=g, dtype=F64)
    state = torch.randn(16, 4, generator=g, dtype=F64)
    for update, energy in ((mhn_update, mhn_energy), (distance_update, distance_energy)):
        x = state
        for _ in range(5):
            new = update(x, m, 3.0)
            assert (energy(new, m, 3.0) <= energy(x, m, 3.0) + 1e-12).all()
            x = new


def test_distance_update_is_the_mean_shift_of_a_gaussian_mixture() -> None:
    """The distance-softmax step equals the weighted mean with weights exp(-beta ||xi - m_i||^2 / 2) (summed by
    hand), and it is a unit gradient step on its energy: grad E = sum_i w_i (xi - m_i) = xi - update(xi)
    (autograd)."""
    g = torch.Generator().manual_seed(12)
    m, xi = torch.randn(7, 3, generator=g, dtype=F64), torch.randn(5, 3, generator=g, dtype=F64)
    w = torch.exp(-2.0 * ((xi[:, None] - m[None]) ** 2).sum(-1) / 2)
    assert torch.allclose(distance_update(xi, m, 2.0), (w / w.sum(1, keepdim=True)) @ m, atol=1e-12)
    x = xi.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(distance_energy(x, m, 2.0).sum(), x)
    assert torch.allclose(grad, xi - distance_update(xi, m, 2.0), atol=1e-10)


def test_average_distortion_against_a_loop() -> None:
    """A random embedding's distortion equals a pair-by-pair loop over the tree metric, and scaling the embedding
    leaves it unchanged."""
    tree = balanced_tree(2, 2)
    emb = torch.randn(tree.size, 2, generator=torch.Generator().manual_seed(3), dtype=F64)
    anc = ancestor_table(tree)
    ratios = []
    for u in range(tree.size):
        for v in range(u + 1, tree.size):
            d_tree = tree.level[u] + tree.level[v] - 2 * lca_level(anc, np.array([u]), np.array([v]))[0]
            ratios.append(float((emb[u] - emb[v]).norm()) / d_tree)
    r = np.array(ratios)
    expected = np.mean(np.abs(r / r.mean() - 1))
    assert average_distortion(tree, emb, "euclidean", 1.0) == pytest.approx(expected, abs=1e-12)
    assert average_distortion(tree, 5 * emb, "euclidean", 1.0) == pytest.approx(expected, abs=1e-12)


def test_noise_free_queries_retrieve_every_stored_leaf() -> None:
    """With rho = 0 every memory returns the stored pattern itself (HAMN: points on the ball; the Euclidean ones:
    the 8 patterns +-e_k of R^4, which have equal norms)."""
    nodes, z = leaf_queries(8, 16, 4, torch.Generator().manual_seed(0))
    for noise in ("tangent", "wrapped"):
        hamn = Retriever("hamn", noise, 1.0, 5.0, 10, 1e-5, 1.0, 1e-4, 8)
        assert accuracy(hamn, input_space("hamn", _ball_points(8, 4, 1.0, 10)), nodes, 0.0, z, 64) == 1.0
    patterns = torch.cat([torch.eye(4, dtype=F64), -torch.eye(4, dtype=F64)])
    for model in ("mhn", *BASELINES):
        r = Retriever(model, "euclidean", 1.0, 1000.0, 3)
        assert accuracy(r, input_space(model, patterns), nodes, 0.0, z, 64) == 1.0


def _memories(model: str, n: int, seed: int) -> torch.Tensor:
    """n stored patterns in the model's input space: ball points (HAMN), else Gaussian rows (scaled as the model
    reads them)."""
    if model == "hamn":
        return _ball_points(n, 3, 1.0, seed, radius=1.5)
    return input_space(model, torch.randn(n, 3, generator=torch.Generator().manual_seed(seed), dtype=F64))


def test_calibrate_beta_is_the_smallest_storing_beta_on_a_grid() -> None:
    """Against a scan of 400 log-spaced betas: the rule's beta stores the target share of the probed leaves, and
    no scanned beta more than one bisection step (a factor (beta_max / beta_min)^(1/2^k)) below it does."""
    for model in ("mhn_normed", "mhn_distance", "hamn"):
        noise = "tangent" if model == "hamn" else "euclidean"
        base = Retriever(model, noise, 1.0, 1.0, 5, 1e-5, 1.0, 1e-4, 8)
        cells = [(_memories(model, 16, s), torch.arange(16)) for s in (1, 2)]
        r, acc = calibrate_beta(base, cells, 0.99, 1e-6, 1e6, 12, 64)
        assert acc >= 0.99

        def pooled(beta: float) -> float:
            rb = Retriever(model, noise, 1.0, beta, 5, 1e-5, 1.0, 1e-4, 8)
            return sum(clean_accuracy(rb, m, s, 64) for m, s in cells) / 2

        step = (1e6 / 1e-6) ** (1 / 2**12)
        scan = np.exp(np.linspace(np.log(1e-6), np.log(r.beta / step / 1.001), 40))
        assert all(pooled(float(b)) < 0.99 for b in scan[-5:]), model
        assert pooled(r.beta) == acc


def _pooled_decoders(model: str, noise: str, sets, rho: float) -> tuple[list[torch.Tensor], float, float, float]:
    """(noisy queries per set, pooled ML-decoder accuracy, pooled nearest-leaf accuracy, pooled chance 1 / leaves),
    recomputed here by ml_leaf and nearest_leaf."""
    q = [noisy_queries(m, n, rho, z, noise, 1.0) for m, n, z in sets]
    n = sum(len(nd) for _, nd, _ in sets)
    ml = sum(int((ml_leaf(noise, qq, m, rho, 1.0) == nd).sum()) for qq, (m, nd, _) in zip(q, sets)) / n
    nn = sum(int((nearest_leaf(model, qq, m, 1.0) == nd).sum()) for qq, (m, nd, _) in zip(q, sets)) / n
    return q, ml, nn, sum(len(nd) / len(m) for m, nd, _ in sets) / n


@pytest.mark.parametrize("model", ["mhn_normed", "mhn_distance", "hamn"])
def test_noisy_beta_rule_is_the_smallest_competent_beta_on_a_grid(model: str) -> None:
    """calibrate_beta_noisy against a brute-force scan: its beta meets A_mem - chance >= (1 - g)(max(A_ml, A_nn) -
    chance) on the same noisy queries (both decoders' accuracies recomputed here by ml_leaf and nearest_leaf, chance
    1 / 16), the scanned betas more than one bisection step below it (above the start) do not, a start that already
    qualifies is kept, and a share no beta meets ends at beta_max. HAMN's queries here are wrapped normals (their ML
    decoder is its nearest leaf, so the argmax limit qualifies; tangent noise at 0 on these points is decoded far
    better by its ML decoder)."""
    noise = "wrapped" if model == "hamn" else "euclidean"
    start = Retriever(model, noise, 1.0, 1e-4, 5, 1e-5, 1.0, 1e-4, 8)
    sets = [(_memories(model, 16, s), *leaf_queries(16, 64, 3, torch.Generator().manual_seed(40 + s))) for s in (1, 2)]
    rho, g, beta_max, k = 0.4, 0.02, 1e6, 12
    q, ml, nn, chance = _pooled_decoders(model, noise, sets, rho)
    assert chance == 1 / 16

    def pooled(beta: float) -> float:
        r = replace(start, beta=beta)
        return sum(int((r.retrieve(qq, m)[0] == nd).sum()) for qq, (m, nd, _) in zip(q, sets)) / 128

    def competent(acc: float) -> bool:
        return acc - chance >= (1 - g) * (max(ml, nn) - chance) - 1e-12

    r, rule = calibrate_beta_noisy(start, sets, rho, g, beta_max, k, 64)
    assert rule.decoder == max(ml, nn) and rule.n_queries == 128 and rule.accuracy == pooled(r.beta)
    assert not competent(pooled(1e-4)) and competent(rule.accuracy), (model, pooled(1e-4), rule)
    step = (beta_max / 1e-4) ** (1 / 2**k)
    scan = np.exp(np.linspace(np.log(1e-4), np.log(r.beta / step / 1.001), 40))
    assert not any(competent(pooled(float(b))) for b in scan[-5:]), model
    kept, _ = calibrate_beta_noisy(replace(start, beta=r.beta * 10), sets, rho, g, beta_max, k, 64)
    assert kept.beta == r.beta * 10
    unmet, _ = calibrate_beta_noisy(start, sets, rho, -10.0, beta_max, 3, 64)
    assert unmet.beta == pytest.approx(beta_max)


@pytest.mark.parametrize("model", ["mhn_normed", "hamn"])
def test_noisy_beta_rule_at_a_confidence_level_asks_its_lower_bound_to_meet_the_rule(model: str) -> None:
    """With z = 1.645 (one-sided 95%) the rule's beta is at least the point rule's (z = 0), the lower bound
    mean(d) - z sd(d) / sqrt(n) of the per-query differences d_i = 1[memory] - (1 - g) 1[stronger decoder] - g / 16,
    recomputed here, is >= 0 at it and < 0 more than one bisection step below it (above the start)."""
    noise = "wrapped" if model == "hamn" else "euclidean"
    start = Retriever(model, noise, 1.0, 1e-4, 5, 1e-5, 1.0, 1e-4, 8)
    sets = [(_memories(model, 16, s), *leaf_queries(16, 64, 3, torch.Generator().manual_seed(40 + s))) for s in (1, 2)]
    rho, g, beta_max, k, z = 0.4, 0.02, 1e6, 12, 1.645
    q, ml, nn, _ = _pooled_decoders(model, noise, sets, rho)
    ref = torch.cat([(ml_leaf(noise, qq, m, rho, 1.0) if ml >= nn else nearest_leaf(model, qq, m, 1.0)) == nd
                     for qq, (m, nd, _) in zip(q, sets)]).double()

    def bound(beta: float) -> float:
        r = replace(start, beta=beta)
        mem = torch.cat([r.retrieve(qq, m)[0] == nd for qq, (m, nd, _) in zip(q, sets)]).double()
        d = mem - (1 - g) * ref - g / 16
        return float(d.mean() - z * d.std() / math.sqrt(len(d)))

    point, _ = calibrate_beta_noisy(start, sets, rho, g, beta_max, k, 64)
    r, rule = calibrate_beta_noisy(start, sets, rho, g, beta_max, k, 64, z=z)
    assert r.beta >= point.beta and rule.decoder == max(ml, nn)
    assert bound(r.beta) >= -1e-12 and bound(1e-4) < 0, (model, bound(r.beta), bound(1e-4))
    step = (beta_max / 1e-4) ** (1 / 2**k)
    assert all(bound(float(b)) < 0 for b in np.exp(np.linspace(np.log(1e-4), np.log(r.beta / step / 1.001), 40))[-5:])


def test_noisy_beta_rule_rejects_a_memory_that_decodes_nothing_above_chance() -> None:
    """Near chance an absolute gap admits a memory that has lost everything its decoder reads: at beta 1e-4 the
    L2-normalised memory sends every query to one state (accuracy = chance 1/16 exactly), which is within 0.025 of
    its decoders at rho 5 (0.086), so the absolute rule (A_mem >= A_ref - 0.025) keeps that beta; the relative rule
    (g = 0.03125) moves to a beta that keeps 1 - g of the decoder's accuracy above chance."""
    start = Retriever("mhn_normed", "euclidean", 1.0, 1e-4, 5)
    sets = [(_memories("mhn_normed", 16, s), *leaf_queries(16, 256, 3, torch.Generator().manual_seed(60 + s)))
            for s in (1, 2)]
    rho, g = 5.0, 0.03125
    q, ml, nn, chance = _pooled_decoders("mhn_normed", "euclidean", sets, rho)
    at_start = sum(int((start.retrieve(qq, m)[0] == nd).sum()) for qq, (m, nd, _) in zip(q, sets)) / 512
    ref = max(ml, nn)
    assert at_start == chance and ref - 0.025 <= at_start < ref  # the absolute rule keeps the start
    r, rule = calibrate_beta_noisy(start, sets, rho, g, 1e6, 12, 64)
    assert r.beta > 1e3 * start.beta and rule.accuracy - chance >= (1 - g) * (ref - chance)


def test_noise_is_calibrated_on_the_decoder_whatever_the_beta() -> None:
    """calibrate_noise_on_decoder: the rho it returns brings the ML decoder's pooled accuracy (decoder_accuracy,
    checked against ml_leaf) to the target within the bisection's resolution (the accuracy at rho -+ one step
    brackets the target), and the same rho comes back whatever the memory's beta (the memory plays no part)."""
    sets = []
    for s in (1, 2):
        nodes, z = leaf_queries(16, 400, 3, torch.Generator().manual_seed(50 + s))
        sets.append((Retriever("hamn", "tangent", 1.0, 1e-3, 5, 1e-5, 1.0, 1e-4, 8), _memories("hamn", 16, s),
                     nodes, z))
    rho, acc = calibrate_noise_on_decoder(sets, 0.8, 4.0, 12, 128)
    r, m, nd, z = sets[0]
    by_hand = float((ml_leaf("tangent", noisy_queries(m, nd, rho, z, "tangent", 1.0), m, rho, 1.0) == nd).double()
                    .mean())
    assert decoder_accuracy(r, m, nd, rho, z, 128) == by_hand
    step = 4.0 / 2**12

    def pooled(x: float) -> float:
        return sum(decoder_accuracy(rr, mm, nn, x, zz, 128) for rr, mm, nn, zz in sets) / 2

    assert pooled(rho - step) >= 0.8 >= pooled(rho + step) and abs(acc - 0.8) < 0.05
    hot = [(replace(r, beta=1e3), *rest) for r, *rest in sets]
    assert calibrate_noise_on_decoder(hot, 0.8, 4.0, 12, 128) == (rho, acc)


@pytest.mark.parametrize("model", ["mhn_normed", "mhn_distance", "hamn"])
def test_retrieval_equals_the_nearest_neighbour_decoder_as_beta_grows(model: str) -> None:
    """The share of noisy queries a memory decodes unlike its nearest-neighbour decoder (in its own geometry) falls
    to 0 as beta grows (at beta = 1e8 every update is an argmax), and is positive at a finite beta."""
    noise = "tangent" if model == "hamn" else "euclidean"
    mem = _memories(model, 24, 31)
    nodes, z = leaf_queries(24, 480, 3, torch.Generator().manual_seed(32))
    shares = []
    for beta in (1e-3 if model == "hamn" else 1.0, 1e2, 1e8):
        out = decode_all(Retriever(model, noise, 1.0, beta, 10, 1e-5, 1.0, 1e-4, 8), mem, nodes, 0.3, z, 128)
        shares.append(float((out.retrieved != out.nearest).double().mean()))
    assert shares[0] > 0.02 and shares[-1] == 0.0 and shares[0] >= shares[-1], shares


def _log_p(p: torch.Tensor, q: torch.Tensor, c: float) -> torch.Tensor:
    """log_p(q) = (2 / (sqrt c lambda_p)) artanh(sqrt c ||-p (+) q||) (-p (+) q) / ||-p (+) q|| with Moebius addition
    x (+) y = ((1 + 2c<x,y> + c||y||^2) x + (1 - c||x||^2) y) / (1 + 2c<x,y> + c^2 ||x||^2 ||y||^2), by hand."""
    x, y = -p.expand_as(q), q
    xy, xx, yy = (x * y).sum(-1, keepdim=True), (x * x).sum(-1, keepdim=True), (y * y).sum(-1, keepdim=True)
    m = ((1 + 2 * c * xy + c * yy) * x + (1 - c * xx) * y) / (1 + 2 * c * xy + c**2 * xx * yy)
    lam = 2 / (1 - c * (p * p).sum())
    norm = m.norm(dim=-1, keepdim=True)
    return 2 / (c**0.5 * lam) * torch.atanh(c**0.5 * norm) * m / norm


@pytest.mark.parametrize("c", [0.5, 1.0])
def test_wrapped_normal_has_the_declared_covariance_in_the_tangent_space(c: float) -> None:
    """HAMN's wrapped-normal query at a stored point p (here at sqrt c ||p|| = 0.9): u = lambda_p log_p(q), with
    log_p written out by hand, has sample mean 0 and sample covariance sigma^2 I, sigma = rho s / sqrt(dim) (each
    entry within 5 standard errors of 100,000 draws)."""
    mem = torch.tensor([[0.9, 0.0, 0.0], [0.0, 0.5, 0.1], [-0.3, 0.2, 0.4]], dtype=F64) / c**0.5
    n, rho = 100_000, 0.3
    nodes = torch.zeros(n, dtype=torch.long)
    z = torch.randn(n, 3, generator=torch.Generator().manual_seed(4), dtype=F64)
    q = noisy_queries(mem, nodes, rho, z, "wrapped", c)
    lam = 2 / (1 - c * (mem[0] ** 2).sum())
    u = lam * _log_p(mem[0], q, c)
    s = float((2 * torch.atanh(c**0.5 * mem.norm(dim=1)) / c**0.5).pow(2).mean().sqrt())
    sigma2 = (rho * s / 3**0.5) ** 2
    cov = torch.cov(u.T)
    se = sigma2 * (2 / n) ** 0.5
    assert (u.mean(0).abs() < 5 * (sigma2 / n) ** 0.5).all()
    assert ((cov - sigma2 * torch.eye(3, dtype=F64)).abs() < 5 * se).all(), (cov, sigma2)


def test_ml_decoders_against_brute_force() -> None:
    """Euclidean noise: the ML leaf is the Euclidean nearest; HAMN's tangent noise: the nearest leaf of log_0(q) among
    the log_0(p_i) (a loop), which differs from the hyperbolic nearest leaf on some queries; wrapped normal: the
    argmax of the wrapped-normal density, which is the hyperbolic nearest leaf (both of its terms fall with d)."""
    g = torch.Generator().manual_seed(3)
    mem = _ball_points(12, 3, 1.0, 5, radius=1.5)
    nodes, z = leaf_queries(12, 600, 3, g)
    ball = poincare_ball(1.0)
    q = noisy_queries(mem, nodes, 0.6, z, "tangent", 1.0)
    lt, mt = ball.logmap0(q), ball.logmap0(mem)
    loop = torch.tensor([min(range(12), key=lambda j: float((x - mt[j]).norm())) for x in lt])
    assert torch.equal(ml_leaf("tangent", q, mem, 0.6, 1.0), loop)
    closed = torch.stack([poincare_distance(q, mem[j].expand_as(q), 1.0) for j in range(12)], dim=1).argmin(1)
    assert torch.equal(nearest_leaf("hamn", q, mem, 1.0), closed) and not torch.equal(loop, closed)
    qw = noisy_queries(mem, nodes, 0.6, z, "wrapped", 1.0)
    closed_w = torch.stack([poincare_distance(qw, mem[j].expand_as(qw), 1.0) for j in range(12)], dim=1).argmin(1)
    assert torch.equal(ml_leaf("wrapped", qw, mem, 0.6, 1.0), closed_w)
    e = torch.randn(12, 3, generator=g, dtype=F64)
    qe = noisy_queries(e, nodes, 0.6, z, "euclidean", 1.0)
    loop_e = torch.tensor([min(range(12), key=lambda j: float((x - e[j]).norm())) for x in qe])
    assert torch.equal(ml_leaf("euclidean", qe, e, 0.6, 1.0), loop_e)
    assert torch.equal(nearest_leaf("mhn_distance", qe, e, 1.0), loop_e)


def test_tolerance_recovers_the_generating_psychometric_curve() -> None:
    """Queries drawn from P(correct | rho) = g + (1 - g) sigmoid(k (log rho_50 - log rho)) at 11 levels (2,000
    each): the fitted log rho_50 is within 0.05 of the generating one; a curve that stays above 1/2 over every level
    is held at most SPAN beyond the largest (it ran off to |log rho_50| ~ 1e5 unbounded)."""
    rng = np.random.default_rng(0)
    levels = np.repeat(np.exp(np.linspace(-3, 1, 11)), 2000)
    for x50, k, g in ((-1.0, 2.0, 1 / 64), (0.3, 4.0, 0.25)):
        p = g + (1 - g) / (1 + np.exp(-k * (x50 - np.log(levels))))
        assert tolerance(levels, rng.random(len(levels)) < p, g) == pytest.approx(x50, abs=0.05)
    flat = rng.random(len(levels)) < 0.9  # never falls to 1/2 over the tested levels: held at the bound
    assert np.log(levels).max() < tolerance(levels, flat, 0.25) <= np.log(levels).max() + SPAN + 1e-9


def test_raw_dot_product_loses_a_short_pattern_the_fair_baselines_keep() -> None:
    """Patterns e_1 and 2 e_1 + 0.1 e_2: at the short one's own position the long one scores higher (m_2 . m_1 = 2 >
    m_1 . m_1 = 1), so Ramsauer's MHN returns the long one; the L2-normalised MHN and the distance softmax return
    each pattern from itself."""
    patterns = torch.tensor([[1.0, 0.0], [2.0, 0.1], [-1.0, 0.0], [0.0, 1.0]], dtype=F64)
    nodes, z = torch.arange(4), torch.zeros(4, 2, dtype=F64)
    raw = Retriever("mhn", "euclidean", 1.0, 1000.0, 3)
    assert accuracy(raw, input_space("mhn", patterns), nodes, 0.0, z, 64) < 1.0
    for model in BASELINES:
        r = Retriever(model, "euclidean", 1.0, 1000.0, 3)
        assert accuracy(r, input_space(model, patterns), nodes, 0.0, z, 64) == 1.0


def test_on_manifold_check_records_the_largest_iterate_norm() -> None:
    """The recorded max_norm is the largest sqrt(c)||xi|| over the query and every later iterate (recomputed step
    by step), it is below 1 even for a query at tangent norm 40 (geoopt clamps tanh at 15), and the claim rejects a
    norm of 1."""
    ball = poincare_ball(1.0)
    mem = _ball_points(5, 2, 1.0, 11)
    q = torch.cat([ball.expmap0(ball.logmap0(mem[:3]) + 0.3), ball.expmap0(torch.tensor([[40.0, 0.0]], dtype=F64))])
    out = hamn_retrieve(q, mem, 5.0, 1e-5, 1.0, 6, 1.0, 1e-4, 8)
    xi, norms = q, []
    for _ in range(7):
        norms.append(xi.norm(dim=1))
        xi = hamn_step(ball, xi, mem, 5.0, 1e-5, 1.0, 1e-4, 8)
    assert torch.allclose(out.max_norm, torch.stack(norms).max(dim=0).values, atol=1e-12) and (out.max_norm < 1).all()
    assert _verdicts(max_norm=1.0)["retrieval_on_manifold"] == "fails"


def test_per_query_stopping_equals_descending_every_query_for_every_step() -> None:
    """hamn_retrieve stops each state once its step moves it by no more than STILL; on a batch with mixed
    convergence (stored points and noisy queries at three temperatures: states stop after 2 to 30 steps) it reads
    out the same leaf as descending the whole batch for every step (hamn_step, no stopping) and as the previous
    criterion (the whole batch until no state moves by more than STILL), with the same states and largest norms to
    within 1e-6 (the batch's composition changes the rounding; a state converges where the Armijo test can no longer
    see an energy decrease, ~1e-8 wide)."""
    ball, mem = poincare_ball(1.0), _ball_points(16, 3, 1.0, 7, radius=1.5)
    nodes, z = leaf_queries(16, 64, 3, torch.Generator().manual_seed(3))
    for beta in (1.0, 5.0, 50.0):
        q = torch.cat([mem, noisy_queries(mem, nodes, 0.5, z, "tangent", 1.0)])
        out = hamn_retrieve(q, mem, beta, 1e-5, 1.0, 30, 1.0, 1e-4, 8)
        assert out.steps.min() <= 3 and out.steps.max() >= 10 and len(out.steps.unique()) >= 5, beta
        full, top, every = q, q.norm(dim=1), None
        for _ in range(30):
            new = hamn_step(ball, full, mem, beta, 1e-5, 1.0, 1e-4, 8)
            if every is None and float((new - full).abs().max()) <= STILL:
                every = new  # the previous criterion's final states
            full, top = new, torch.maximum(top, new.norm(dim=1))
        for ref in (full, every if every is not None else full):
            assert torch.equal(energy_terms(ref, mem, 1.0)[0].argmax(dim=1), out.retrieved), beta
            assert torch.allclose(ref, out.states, atol=1e-6, rtol=0), beta
        assert torch.allclose(top, out.max_norm, atol=1e-6, rtol=0), beta


def _plan(unit: str, n: int) -> SamplePlan:
    return SamplePlan(unit=unit, n=n, basis="design", effect=None, power=None, pilot_n=0, pilot_sd=None, looks=1,
                      spending="none", why="the test's design size")


PILOT = [100, 101, 102, 103, 104]
PLANS = Plans(seeds=_plan("seed", 3), cells=_plan("cell", 6), error_cells=_plan("cell", 6), slopes=_plan("seed", 3),
              deepest=_plan("seed", 3), transfer=_plan("seed", 3), pilot_seeds=PILOT)
SPREADS = {f: Spread(0.1, "mhn_normed_b2", 5, {"mhn_normed_b2": 0.1}) for f in FAMILIES}
PARAMS = dict(shallow_tol=0.05, min_map_gain=0.5, min_clean_accuracy=0.95, min_dynamics_share=0.02)


def _verdicts(delta: float = 0.1, slope: float = 0.05, gap: float = 0.1, shallow: float = 0.8,
              shallow_half: float = 0.01, max_norm: float = 0.99, clean_base: float = 1.0, map_gap: float = 0.1,
              map_gain: float = 0.9, nn_gap: float = 0.0, disagreements: int = 100, share: float = 0.05,
              hamn_gain: float = 0.03) -> dict[str, str]:
    """The published verdicts (resolved: preconditions gate evidence) of claims on one branching b = 2; the
    numbers of the first baseline (``mhn_normed``) vary, the second's stay favourable. ``map_gain``: both
    embeddings' normalised MAP gain over the untrained embedding; ``nn_gap``: mhn_normed's accuracy minus its
    nearest-neighbour decoder's, per cell, on ``disagreements`` queries decoded differently, ``share`` per cell;
    ``shallow``: mhn_normed's D = 2 accuracy (calibrated to 0.8); ``hamn_gain``: HAMN over its nearest leaf."""
    def iv(m: float, half: float = 0.01) -> Interval:
        return Interval(m, m - half, m + half, 3)

    jitter = np.array([0.01, -0.012, 0.002])
    euclidean = np.array([0.50, 0.52, 0.48])
    ok = {(2, 2): 1.0, (2, 6): 1.0}
    untrained, ranking = np.array([0.10, 0.12, 0.11]), np.array([0.09, 0.10, 0.10])
    learned = untrained + map_gain * (1 - untrained) + jitter
    embedding = EmbeddingRungs({(2, 2): learned, (2, 6): learned},
                               {UNTRAINED: {(2, 2): untrained, (2, 6): untrained},
                                RANDOM_RANKING: {(2, 2): ranking, (2, 6): ranking}}, {(2, 2): 1.0, (2, 6): 1.0})
    nn, chance = np.array([0.8, 0.78, 0.82, 0.3, 0.32, 0.29]), np.full(6, 1 / 16)

    def decoder(offset: float, differ: int, per_cell: float) -> DecoderRung:
        return DecoderRung(nn + offset + np.tile(jitter, 2) / 10, nn, nn - 0.001, chance,
                           per_cell + np.tile(jitter, 2) / 10, 2400, differ)

    slopes = {m: {2: iv(-0.3)} for m in ("mhn_normed", "mhn_distance", "hamn")}
    regime = Regime({"mhn_normed": {(2, 2): 1.0, (2, 6): clean_base}, "mhn_distance": ok, "hamn": ok},
                    {"euclidean": {2: euclidean}, "poincare": {2: euclidean + map_gap + jitter / 10}},
                    {"poincare": embedding, "euclidean": embedding},
                    {"mhn_normed": decoder(nn_gap, disagreements, share), "mhn_distance": decoder(0.0, 100, 0.05),
                     "hamn": decoder(hamn_gain, 100, 0.05)},
                    {"mhn_normed": {2: iv(shallow, shallow_half)}, "mhn_distance": {2: iv(0.8)}, "hamn": {2: iv(0.8)}},
                    slopes)
    versus = {"mhn_normed": Comparison({2: iv(delta)}, {2: iv(slope)}, iv(gap)),
              "mhn_distance": Comparison({2: iv(0.1)}, {2: iv(0.05)}, iv(0.1))}
    out = claims(versus, max_norm, 100, regime, ClaimParams(**PARAMS), 0.8, PLANS, SPREADS, PILOT)
    return {c.id: c.verdict for c in resolve(out)}


DEEP_EVIDENCE = ("tolerance_falls_slower_vs_mhn_normed", "hamn_beats_mhn_normed_deepest",
                 "errors_closer_in_tree_vs_mhn_normed")
SHALLOW = "calibration_transfers_mhn_normed"


def test_claims_hold_and_fail_on_their_numbers() -> None:
    """Every claim holds on favourable numbers; each evidence claim or check fails when its own number turns
    against it, and nothing else changes."""
    assert set(_verdicts().values()) == {"holds"}, _verdicts()
    against = {"hamn_beats_mhn_normed_deepest": {"delta": -0.1},
               "tolerance_falls_slower_vs_mhn_normed": {"slope": -0.02},
               "errors_closer_in_tree_vs_mhn_normed": {"gap": -0.1}, SHALLOW: {"shallow": 0.6},
               "hamn_dynamics_beat_nearest_leaf": {"hamn_gain": -0.03},
               "retrieval_on_manifold": {"max_norm": 1.0}}
    for claim_id, kwargs in against.items():
        verdict = _verdicts(**kwargs)
        assert verdict[claim_id] == "fails" and sum(v != "holds" for v in verdict.values()) == 1, (claim_id, verdict)


def test_calibration_transfer_on_an_interval_wider_than_its_band_is_inconclusive() -> None:
    """3 seeds with a half-width of 0.07 > the 0.05 band around the target: neither transferred nor not."""
    assert _verdicts(shallow=0.79, shallow_half=0.07)[SHALLOW] == "inconclusive"


def test_evidence_is_inconclusive_when_its_precondition_fails() -> None:
    """A baseline that cannot retrieve its own noise-free leaves (0.667), a Poincare embedding no better than the
    Euclidean one, unlearned embeddings, retrieval below the baseline's decoders or dynamics that never act leave
    the comparisons inconclusive whatever their numbers; the calibration check is judged alone."""
    for kwargs, failed in (({"clean_base": 0.667}, "mhn_normed_stores_patterns"),
                           ({"map_gap": -0.03}, "poincare_beats_euclidean_map"),
                           ({"map_gain": 0.2}, "poincare_embedding_learned"),
                           ({"nn_gap": -0.2}, "mhn_normed_retrieves_as_nearest_neighbour"),
                           ({"share": 0.005}, "mhn_normed_dynamics_act"),
                           ({"share": 0.0, "disagreements": 0}, "mhn_normed_dynamics_act")):
        for numbers in ({}, {"delta": -0.1, "slope": -0.02, "gap": -0.1}):
            verdict = _verdicts(**kwargs, **numbers)
            assert verdict[failed] == "fails" and verdict[SHALLOW] == "holds", (kwargs, verdict)
            assert all(verdict[c] == "inconclusive" for c in DEEP_EVIDENCE), verdict


def test_memory_competence_is_judged_against_the_strongest_decoder() -> None:
    """Within the band below its strongest decoder a memory is competent; straddling the band's edge is
    inconclusive; the ladder records the nearest-neighbour decoder, the ML decoder beside it, and chance."""
    assert _verdicts(nn_gap=-0.02)["mhn_normed_retrieves_as_nearest_neighbour"] == "holds"
    assert _verdicts(nn_gap=-0.05)["mhn_normed_retrieves_as_nearest_neighbour"] == "inconclusive"


def test_random_ranking_map_lies_between_the_closure_density_and_the_tree_metric() -> None:
    """A random ranking's MAP on a tree is a fixed-seed draw per cell, at least the share of closure neighbours among
    the other nodes (a random ranking's precision, before the small-set bias of average precision) and far below the
    tree path metric's."""
    tree = balanced_tree(2, 5)
    anc = ancestor_table(tree)
    idx = np.arange(tree.size)
    rel = related(anc, tree.level, idx[:, None], idx[None, :])
    np.fill_diagonal(rel, False)
    density = float(np.mean(rel.sum(axis=1) / (tree.size - 1)))
    value = random_ranking_map(tree, 0, (2, 5, 1))
    assert value == random_ranking_map(tree, 0, (2, 5, 1)) != random_ranking_map(tree, 0, (2, 5, 2))
    assert density < value < 0.5 * tree_metric_map(tree)


def test_clean_means_average_the_seeds_per_cell() -> None:
    clean = pd.DataFrame({"model": ["mhn"] * 3 + ["hamn"], "branching": [3, 3, 3, 3], "depth": [6, 6, 5, 6],
                          "seed": [1, 2, 1, 1], "accuracy": [0.2, 0.1, 0.5, 1.0]})
    assert clean_means(clean) == {"mhn": {(3, 5): 0.5, (3, 6): pytest.approx(0.15)}, "hamn": {(3, 6): 1.0}}


def test_smoke_calibration_and_retrievals(smoke_runs) -> None:
    """Through the platform: each model's D=2 accuracy was calibrated close to the target, every leaf was queried
    in every cell, the recorded LCA levels are consistent with exact retrieval (LCA = D iff correct), and the share
    of level-1 queries each memory decodes unlike its nearest-neighbour decoder at its declared beta is the one in
    the metrics."""
    runs = smoke_runs(SLUG)
    metrics = json.loads((runs["evaluate"] / "metrics.json").read_text())["metrics"]
    for model in ("mhn", *BASELINES, "hamn"):
        calib = read_table(runs[f"retrieve_{model}"] / CALIBRATION_FILE).to_pylist()
        assert all(abs(r["accuracy"] - 0.8) < 0.15 for r in calib), calib
        rows = read_table(runs[f"retrieve_{model}"] / RETRIEVALS_FILE).to_pandas()
        for (b, d), cell in rows.groupby(["branching", "depth"]):
            assert sorted(cell["leaf"].unique()) == list(range(b**d))
        assert ((rows["lca_level"] == rows["depth"]) == (rows["leaf"] == rows["retrieved"])).all()
        if model != "mhn":
            main = rows[rows["level"] == 1.0]
            assert metrics[f"share_decoded_unlike_nn_{model}"] == pytest.approx(
                float((main["retrieved"] != main["nearest"]).mean()))


def _pilot_cells(slope: np.ndarray, deep: np.ndarray, shallow: np.ndarray) -> pd.DataFrame:
    """A pilot cell table (b = 2, D = 2..4, one row per model and seed): HAMN's log rho_50 rises by slope[s] per
    depth level over the baselines' (0), its accuracy at D = 4 exceeds theirs by deep[s], each memory's D = 2
    accuracy is shallow[s] (HAMN's plus 0.1 times the seed index)."""
    rows = []
    for s in range(len(slope)):
        for d in (2, 3, 4):
            for m in ("mhn_normed", "mhn_distance", "hamn"):
                hamn = m == "hamn"
                acc = shallow[s] + (0.1 * s if hamn else 0.0) if d == 2 else 0.3 + (deep[s] if hamn and d == 4 else 0)
                rows.append(dict(model=m, branching=2, depth=d, seed=100 + s, accuracy=acc, accuracy_ml=acc,
                                 log_rho50=(1.0 + s + slope[s] * d) if hamn else -0.5 * s))
    return pd.DataFrame(rows)


def test_pilot_spreads_are_the_sample_sds_of_one_seeds_statistic() -> None:
    """Each family's spread is the largest ddof-1 sd over its parts of the per-seed statistic, written out here by
    hand: the slope of HAMN's log rho_50 over the baseline's (a baseline drifting by -0.5 s per seed in level only
    adds nothing to a slope), HAMN's deepest advantage, and the D = 2 accuracy (HAMN's the widest: + 0.1 s)."""
    slope, deep, shallow = np.array([0.1, 0.4, 0.2, 0.3]), np.array([0.05, -0.02, 0.1, 0.0]), np.array(
        [0.8, 0.82, 0.77, 0.79])
    got = seed_spreads(_pilot_cells(slope, deep, shallow), BASELINES, ("mhn_normed", "mhn_distance", "hamn"), [2], 4, 2)
    assert got["slopes"].sd == pytest.approx(float(np.std(slope, ddof=1)))
    assert got["deepest"].sd == pytest.approx(float(np.std(deep, ddof=1)))
    assert got["transfer"].sd == pytest.approx(float(np.std(shallow + 0.1 * np.arange(4), ddof=1)))
    assert got["transfer"].part == "hamn_b2" and got["slopes"].n == 4
    assert got["transfer"].by_part["mhn_normed_b2"] == pytest.approx(float(np.std(shallow, ddof=1)))


def test_plans_check_rejects_a_pilot_sd_other_than_the_measured_one() -> None:
    """A power plan whose declared pilot sd is this run's (to 4 digits) holds; one whose sd or pilot size differs
    fails; a budget plan naming no pilot is not compared; the required n is Guenther's at the measured sd."""
    spreads = {f: Spread(0.061234, "hamn_b2", 5, {"hamn_b2": 0.061234}) for f in FAMILIES}

    def plans(sd: float, pilot_n: int = 5) -> Plans:
        power = SamplePlan(unit="seed", n=10, basis="power", effect=0.1, power=0.8, pilot_n=pilot_n, pilot_sd=sd,
                           looks=1, spending="none", why="the pilot's spread at the declared effect")
        return Plans(seeds=_plan("seed", 10), cells=_plan("cell", 6), error_cells=_plan("cell", 6), slopes=power,
                     deepest=power, transfer=_plan("seed", 10), pilot_seeds=PILOT)

    ok = plans_check(spreads, plans(0.06123), PILOT)
    assert ok.verdict == "holds" and ok.measured["slopes"]["required_n"] == 5  # (2.80 * 0.612)^2 + 1.92 = 4.86
    assert plans_check(spreads, plans(0.0650), PILOT).verdict == "fails"  # n 6 at 0.0650
    assert plans_check(spreads, plans(0.06123, pilot_n=4), PILOT).verdict == "fails"
    # the same pilot on another CPU: its spread moved 0.5% in round-off (measured on hamn's slopes pilot, AMD 0.08379
    # vs Intel 0.08416), the plan it sizes did not: the check is about the plan, so it still holds
    assert plans_check(spreads, plans(0.06123 * 0.995), PILOT).verdict == "holds"
    budget = SamplePlan(unit="seed", n=10, basis="budget", effect=None, power=None, pilot_n=5, pilot_sd=0.06123,
                        looks=1, spending="none", why="no effect declared")
    loose = Plans(seeds=_plan("seed", 10), cells=_plan("cell", 6), error_cells=_plan("cell", 6), slopes=budget,
                  deepest=budget, transfer=_plan("seed", 10), pilot_seeds=PILOT)
    assert plans_check(spreads, loose, PILOT).verdict == "holds"  # no effect and power: the sd to 4 digits
    assert plans_check(spreads, loose.model_copy(update={"slopes": budget.model_copy(update={"pilot_sd": 0.0611})}),
                       PILOT).verdict == "fails"


def test_a_replicates_fresh_pilot_is_judged_by_the_sizes_it_needs() -> None:
    """On calibration seeds other than the plans' pilot (a replicate), the declared sd is not compared with the
    measured one (no declaration can name a fresh pilot's spread); every power plan must reach Guenther's n at the
    measured spread, and a budget plan is reported, not judged."""
    fresh = [110, 111, 112, 113, 114]
    power = SamplePlan(unit="seed", n=10, basis="power", effect=0.1, power=0.8, pilot_n=5, pilot_sd=0.05, looks=1,
                       spending="none", why="the pilot's spread at the declared effect")
    budget = SamplePlan(unit="seed", n=10, basis="budget", effect=0.05, power=0.9, pilot_n=5, pilot_sd=0.05,
                        looks=1, spending="none", why="what the budget affords")
    plans = Plans(seeds=_plan("seed", 10), cells=_plan("cell", 6), error_cells=_plan("cell", 6), slopes=power,
                  deepest=power, transfer=budget, pilot_seeds=PILOT)
    wider = {f: Spread(0.08, "hamn_b2", 5, {"hamn_b2": 0.08}) for f in FAMILIES}  # n 7 at effect 0.1, 29 at 0.05
    assert plans_check(wider, plans, PILOT).verdict == "fails"  # its own pilot: the sd is not the declared one
    ok = plans_check(wider, plans, fresh)
    assert ok.verdict == "holds" and ok.measured["slopes"]["required_n"] == 7  # <= 10
    assert ok.measured["transfer"]["required_n"] == 29  # > 10, a budget plan: reported, not judged
    too_wide = {f: Spread(0.12, "hamn_b2", 5, {"hamn_b2": 0.12}) for f in FAMILIES}  # n 14 > 10
    bad = plans_check(too_wide, plans, fresh)
    assert bad.verdict == "fails" and "planned n 10 below the 14 seeds" in bad.reason


def test_smoke_pilot_is_the_calibration_seeds_decoded_like_the_evaluation(smoke_runs) -> None:
    """The pilot rows cover every (b, D) cell of each calibration seed and no evaluation seed, with the evaluation's
    columns and query levels; the metrics' pilot spreads are the run's own."""
    runs = smoke_runs(SLUG)
    metrics = json.loads((runs["evaluate"] / "metrics.json").read_text())["metrics"]
    for model in ("mhn", *BASELINES, "hamn"):
        pilot = read_table(runs[f"retrieve_{model}"] / PILOT_FILE).to_pandas()
        rows = read_table(runs[f"retrieve_{model}"] / RETRIEVALS_FILE).to_pandas()
        assert list(pilot.columns) == list(rows.columns)
        assert set(pilot["seed"]).isdisjoint(rows["seed"]) and len(set(pilot["seed"])) >= 2
        assert set(map(tuple, pilot[["branching", "depth"]].drop_duplicates().to_numpy())) == set(
            map(tuple, rows[["branching", "depth"]].drop_duplicates().to_numpy()))
        assert sorted(pilot["level"].unique()) == sorted(rows["level"].unique())
    assert all(metrics[f"pilot_sd_{f}"] > 0 for f in FAMILIES)
