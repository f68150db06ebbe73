"""mhc science against independent oracles: Sinkhorn-Knopp against the Birkhoff polytope and finite differences,
the hyper-connection block against the substrate's residual block, the gain against numpy's matrix norms, the
spike counter and the manifold check against planted inputs, and the smoke pipeline end to end. The platform
contract (imports, params, smoke run, claims file) is checked for every paper by tests/test_paper_contract.py."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from paperdag.common.transformer import GPT, GPTConfig
from paperdag.io import read_table
from paperdag.papers.mhc.analysis import Connection
from paperdag.papers.mhc.baseline import unigram_cross_entropy
from paperdag.papers.mhc.claims import claims
from paperdag.papers.mhc.connections import HyperConnection, ManifoldHyperConnection
from paperdag.papers.mhc.gain import mixing_gain
from paperdag.papers.mhc.model import StreamConfig, StreamGPT
from paperdag.papers.mhc.params import ClaimParams
from paperdag.papers.mhc.sinkhorn import check_doubly_stochastic, sinkhorn_knopp, sinkhorn_reference
from paperdag.papers.mhc.stability import spike_steps
from paperdag.papers.mhc.verify import MANIFOLD_FILE

SLUG = "mhc"
F64 = torch.float64


def _birkhoff_point(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random doubly stochastic matrix as a convex combination of permutation matrices (Birkhoff-von Neumann)."""
    perms = list(itertools.permutations(range(n)))
    w = rng.dirichlet(np.ones(len(perms)))
    return sum(wi * np.eye(n)[list(p)] for wi, p in zip(w, perms, strict=True))


def test_sinkhorn_output_is_doubly_stochastic() -> None:
    """Columns are exact after the last (column) step; rows converge geometrically: at t = 20 for unit-scale
    logits, and only with more iterations for wider logits."""
    logits = torch.randn(64, 4, 4, dtype=F64, generator=torch.Generator().manual_seed(0))
    m = sinkhorn_knopp(logits, 20)
    assert (m > 0).all()
    assert torch.allclose(m.sum(-2), torch.ones(64, 4, dtype=F64), atol=1e-12)
    assert torch.allclose(m.sum(-1), torch.ones(64, 4, dtype=F64), atol=1e-6)
    assert check_doubly_stochastic(m, 1e-6).passed
    wide = 2 * logits
    assert not check_doubly_stochastic(sinkhorn_knopp(wide, 20), 1e-3).passed
    assert check_doubly_stochastic(sinkhorn_knopp(wide, 100), 1e-6).passed


def test_sinkhorn_fixes_the_birkhoff_polytope() -> None:
    """SK(log H) = H for a doubly stochastic H with positive entries: the projection leaves the manifold fixed."""
    h = torch.as_tensor(_birkhoff_point(np.random.default_rng(1), 4))
    assert torch.allclose(sinkhorn_knopp(torch.log(h), 20), h, atol=1e-12)


def test_sinkhorn_gradient_matches_the_unrolled_loop_and_finite_differences() -> None:
    logits = (1.5 * torch.randn(3, 2, 4, 4, dtype=F64, generator=torch.Generator().manual_seed(2))).requires_grad_()
    g = torch.randn(3, 2, 4, 4, dtype=F64, generator=torch.Generator().manual_seed(3))
    fast, = torch.autograd.grad(sinkhorn_knopp(logits, 20), logits, g)
    ref, = torch.autograd.grad(sinkhorn_reference(logits, 20), logits, g)
    assert torch.allclose(fast, ref, atol=1e-12)
    assert torch.autograd.gradcheck(lambda x: sinkhorn_knopp(x, 4), (logits[:1, :1].detach().requires_grad_(),))


def test_manifold_check_rejects_off_manifold_matrices() -> None:
    good = torch.as_tensor(_birkhoff_point(np.random.default_rng(4), 4)).expand(3, 4, 4).clone()
    assert check_doubly_stochastic(good, 1e-9).passed
    scaled = good.clone()
    scaled[1] *= 1.01  # rows and columns sum to 1.01: an HC-style gain
    negative = good.clone()
    negative[2, 0] += torch.tensor([0.2, -0.2, 0.0, 0.0], dtype=F64)  # sums kept, one entry pushed below 0
    negative[2, 1] -= torch.tensor([0.2, -0.2, 0.0, 0.0], dtype=F64)
    assert not check_doubly_stochastic(scaled, 1e-3).passed
    assert negative.min() < 0 and not check_doubly_stochastic(negative, 1e-3).passed


def test_hc_and_mhc_start_from_the_same_maps() -> None:
    x = torch.randn(2, 5, 4, 8)
    hc, mhc = HyperConnection(4, 8, 3, 0.2, 0.01), ManifoldHyperConnection(4, 8, 3, 0.2, 0.01, 20)
    for a, b in zip(hc(x), mhc(x), strict=True):
        assert torch.allclose(a, b, atol=1e-6)
    pre, post, res = hc(x)
    assert torch.allclose(pre[0, 0], torch.tensor([0.05, 0.05, 0.05, 0.85]))  # layer 3 reads stream 3
    assert torch.allclose(post, torch.ones_like(post)) and torch.allclose(res.sum(-1), torch.ones(2, 5, 4))


def test_identity_maps_reduce_the_stream_model_to_the_residual_transformer() -> None:
    """H_res = I, H_pre = 1/n, H_post = 1 (HC with zero gates): each stream carries the residual stream of the
    substrate's GPT with the same weights, so the logits agree (the head reads RMSNorm(sum of the n equal
    streams), which is RMSNorm of one of them)."""
    cfg = GPTConfig(context=16, n_layer=3, n_head=2, d_model=16)
    torch.manual_seed(0)
    gpt = GPT(cfg)
    torch.nn.init.normal_(gpt.tok_emb.weight)  # unit-scale stream: RMSNorm's eps is negligible at 4x the scale too
    stream = StreamGPT(cfg, "hc", StreamConfig(4, 0.2, 0.0, 20))
    with torch.no_grad():
        for name in ("tok_emb", "pos_emb", "head", "norm"):
            getattr(stream, name).load_state_dict(getattr(gpt, name).state_dict())
        for i, layer in enumerate(stream.layers):
            block = gpt.blocks[i // 2]
            layer.f.load_state_dict((block.attn if i % 2 == 0 else block.mlp).state_dict())
            layer.norm.load_state_dict((block.norm1 if i % 2 == 0 else block.norm2).state_dict())
            layer.connection.b_pre.fill_(0.25)
            layer.connection.b_post.fill_(1.0)
            layer.connection.b_res.copy_(torch.eye(4))
    idx = torch.randint(0, 256, (2, 16), generator=torch.Generator().manual_seed(1))
    assert torch.allclose(stream(idx), gpt(idx), atol=1e-4)


def test_mixing_gain_against_numpy_norms() -> None:
    rng = np.random.default_rng(5)
    mats = [rng.normal(size=(3, 4, 4)) for _ in range(5)]
    g = mixing_gain([torch.as_tensor(m) for m in mats])
    prods = [np.linalg.multi_dot([m[t] for m in reversed(mats)]) for t in range(3)]
    assert g.forward == pytest.approx(max(np.linalg.norm(p, np.inf) for p in prods), rel=1e-12)
    assert g.backward == pytest.approx(max(np.linalg.norm(p, 1) for p in prods), rel=1e-12)
    assert g.layer_max == pytest.approx(max(np.linalg.norm(m[t], np.inf) for m in mats for t in range(3)))
    ds = [torch.as_tensor(_birkhoff_point(rng, 4))[None] for _ in range(10)]
    assert mixing_gain(ds).forward == pytest.approx(1.0) and mixing_gain(ds).backward == pytest.approx(1.0)


def test_spikes_are_found_where_planted() -> None:
    v = np.linspace(3.0, 2.0, 100) + 0.01 * np.sin(np.arange(100))
    assert len(spike_steps(v, 10, 1.1)) == 0
    v[[30, 71]] *= 1.5
    assert spike_steps(v, 10, 1.1).tolist() == [30, 71]


def test_unigram_baseline_is_the_cross_entropy() -> None:
    train, val = np.array([0, 0, 1], dtype=np.uint8), np.array([0, 1], dtype=np.uint8)
    p0, p1 = 3 / 259, 2 / 259  # add-one counts over 256 symbols
    assert unigram_cross_entropy(train, val) == pytest.approx(-(np.log(p0) + np.log(p1)) / 2)


def _connection(loss: list[float], gain: list[float], spikes: int) -> Connection:
    k = len(loss)
    return Connection(np.array(loss), np.array(gain), np.full(k, spikes), np.zeros(k), np.ones(k))


def test_claims_fail_when_mhc_is_worse() -> None:
    p = ClaimParams(hc_gain_min=10, mhc_gain_max=2, loss_match_tol=0.01, max_overhead_pct=10, manifold_tol=1e-3)
    c = {"residual": _connection([2.0, 2.0], [1, 1], 0), "hc": _connection([2.0, 2.1], [5, 50], 1),
         "mhc": _connection([2.2, 2.3], [1, 3], 2)}
    v = {x.id: x.holds for x in claims(c, 3.0, 1, 0.1, 250.0, p)}
    assert v == {"all_models_learn": True, "mhc_on_manifold": False, "hc_gain_explodes": False,
                 "mhc_gain_bounded": False, "mhc_more_stable_than_hc": False, "mhc_as_stable_as_residual": False,
                 "mhc_matches_hc_loss": False, "mhc_matches_residual_loss": False, "step_time_overhead": False}


def test_smoke_pipeline_end_to_end(smoke_runs) -> None:
    runs = smoke_runs(SLUG)
    manifold = read_table(runs["verify"] / MANIFOLD_FILE).to_pydict()
    mhc = [ok for c, ok in zip(manifold["connection"], manifold["passed"], strict=True) if c == "mhc"]
    assert len(mhc) == 3 * 4 and all(mhc)  # 3 seeds x 2 blocks x 2 sub-layers, every one on the manifold
    metrics = runs.metrics()
    assert {c["id"] for c in metrics["claims"]} >= {"hc_gain_explodes", "mhc_gain_bounded", "step_time_overhead"}
    assert metrics["metrics"]["mhc_peak_gain_max"] <= 1.0 + 1e-3
