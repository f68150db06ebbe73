"""NorMuon: optimizer maths, distributed equivalence, shared LM substrate, and the smoke pipeline end to end."""

from __future__ import annotations

import math
import socket
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from paperdag.common.corpus import collect_stdlib_corpus, is_validation, load_split_tokens, write_corpus
from paperdag.common.tokenizer import decode, encode
from paperdag.common.transformer import GPT, GPTConfig
from paperdag.papers.normuon.analysis import steps_to_target
from paperdag.papers.normuon.distributed import DistributedNorMuon
from paperdag.papers.normuon.optim import Muon, NorMuon, newton_schulz5, row_normalize, shape_scale, state_bytes
from paperdag.papers.normuon.training import RunConfig, train_run
from paperdag.testing import run_smoke

torch.set_num_threads(1)


def _matrix(shape: tuple[int, int], seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _spectrum_matrix(m: int, n: int, smin: float, seed: int) -> torch.Tensor:
    """U diag(s) V^T with s log-spaced in [smin, 1] and random orthogonal U, V."""
    gen = torch.Generator().manual_seed(seed)
    u, _ = torch.linalg.qr(torch.randn(m, m, generator=gen))
    v, _ = torch.linalg.qr(torch.randn(n, n, generator=gen))
    k = min(m, n)
    s = torch.logspace(math.log10(smin), 0, k)
    return u[:, :k] @ torch.diag(s) @ v[:, :k].T


@pytest.mark.parametrize("shape", [(64, 256), (256, 64), (96, 128)])
def test_newton_schulz_singular_values_in_band(shape: tuple[int, int]) -> None:
    g = _spectrum_matrix(*shape, smin=0.02, seed=1)
    s = torch.linalg.svdvals(newton_schulz5(g))
    assert s.min() > 0.6 and s.max() < 1.25, (s.min().item(), s.max().item())
    # the unnormalised input's singular values span 50x; the iteration must have compressed them
    one_step = torch.linalg.svdvals(newton_schulz5(g, steps=1))
    assert one_step.min() < 0.3


def test_newton_schulz_approximates_polar_factor() -> None:
    g = _matrix((128, 48), seed=2)
    u, _, vh = torch.linalg.svd(g, full_matrices=False)
    o = newton_schulz5(g)
    cosine = (o * (u @ vh)).sum() / (o.norm() * (u @ vh).norm())
    assert cosine > 0.98


def test_muon_first_step_is_scaled_orthogonalized_gradient() -> None:
    w = torch.nn.Parameter(torch.zeros(256, 64))
    w.grad = _matrix((256, 64), seed=3)
    Muon([w], lr=1.0).step()
    # step 1: momentum (1 - mu) g and Nesterov g.lerp(buf, mu) are both multiples of g, and NS5 is scale-free
    expected = -newton_schulz5(w.grad) * shape_scale(w)
    torch.testing.assert_close(w.detach(), expected, rtol=1e-4, atol=1e-5)
    assert shape_scale(w) == 2.0


def test_row_normalize_keeps_frobenius_norm_and_equalises_rows() -> None:
    o = newton_schulz5(_matrix((256, 64), seed=4))
    row_norms = o.norm(dim=1)
    assert row_norms.std() / row_norms.mean() > 0.02  # a tall orthogonalized matrix has unequal rows
    v = torch.zeros(256)
    out = row_normalize(o, v, beta2=0.95, eps=1e-8)
    torch.testing.assert_close(out.norm(), o.norm(), rtol=1e-5, atol=0)
    out_rows = out.norm(dim=1)
    assert out_rows.std() / out_rows.mean() < 1e-4
    torch.testing.assert_close(v, 0.05 * o.square().mean(dim=1))


def test_normuon_step_keeps_pre_normalisation_norm() -> None:
    w = torch.nn.Parameter(torch.zeros(192, 64))
    opt = NorMuon([w], lr=1.0)
    expected_norms = []
    for seed in range(3):
        w.grad = _matrix((192, 64), seed=10 + seed)
        before = w.detach().clone()
        buf = opt.state[w]["momentum_buffer"].clone() if w in opt.state else torch.zeros_like(w)
        buf.lerp_(w.grad, 0.05)
        expected_norms.append(newton_schulz5(w.grad.lerp(buf, 0.95)).norm() * shape_scale(w))
        opt.step()
        torch.testing.assert_close((before - w.detach()).norm(), expected_norms[-1], rtol=1e-4, atol=0)
    assert state_bytes(opt) == (192 * 64 + 192) * 4  # momentum plus one second moment per row


def test_normuon_rows_more_uniform_than_muon_over_steps() -> None:
    """Gradients whose rows have persistent scales 0.1..10 (fresh noise each step): Muon's tall update keeps
    unequal row norms (leverage scores), NorMuon's running row second moment evens them out."""
    row_scales = torch.logspace(-1, 1, 256)[:, None]

    def mean_row_cv(cls: type[Muon]) -> float:
        w = torch.nn.Parameter(torch.zeros(256, 64))
        opt, cvs = cls([w], lr=1.0), []
        for seed in range(6):
            w.grad = row_scales * _matrix((256, 64), seed=20 + seed)
            before = w.detach().clone()
            opt.step()
            r = (before - w.detach()).norm(dim=1)
            cvs.append((r.std() / r.mean()).item())
        return float(np.mean(cvs))

    assert mean_row_cv(NorMuon) < 0.25 * mean_row_cv(Muon)


def test_weight_decay_is_decoupled() -> None:
    w = torch.nn.Parameter(torch.ones(8, 8))
    w.grad = torch.zeros(8, 8)  # zero gradient: the update is pure decay
    NorMuon([w], lr=0.1, weight_decay=0.5).step()
    torch.testing.assert_close(w.detach(), torch.full((8, 8), 1 - 0.1 * 0.5))


def test_normuon_deterministic_under_seed() -> None:
    def run() -> torch.Tensor:
        torch.manual_seed(5)
        w = torch.nn.Parameter(torch.randn(64, 32))
        opt = NorMuon([w], lr=0.05, weight_decay=0.1)
        for _ in range(4):
            w.grad = torch.randn(64, 32)
            opt.step()
        return w.detach().clone()

    assert torch.equal(run(), run())


def _shapes() -> list[tuple[int, int]]:
    return [(32, 16), (16, 48), (64, 16), (24, 24), (40, 8)]  # odd count: the last block is padded


def _run_steps(opt_cls: type[NorMuon], params: list[torch.nn.Parameter], steps: int) -> torch.optim.Optimizer:
    opt = opt_cls(params, lr=0.03, weight_decay=0.1)
    gen = torch.Generator().manual_seed(123)
    for _ in range(steps):
        for p in params:
            p.grad = torch.randn(p.shape, generator=gen)
        opt.step()
    return opt


def _distributed_worker(rank: int, world: int, port: int, out: str) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        torch.set_num_threads(1)
        torch.manual_seed(0)
        params = [torch.nn.Parameter(torch.randn(s)) for s in _shapes()]
        opt = _run_steps(DistributedNorMuon, params, steps=3)
        owned = [i for i, p in enumerate(params) if p in opt.state]
        torch.save({"params": [p.detach() for p in params], "owned": owned}, Path(out) / f"rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_distributed_normuon_equals_single_process(tmp_path: Path) -> None:
    mp.spawn(_distributed_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True)
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(s)) for s in _shapes()]
    _run_steps(NorMuon, params, steps=3)
    for rank in range(2):
        got = torch.load(tmp_path / f"rank{rank}.pt")
        for p, q in zip(params, got["params"], strict=True):
            torch.testing.assert_close(q, p.detach(), rtol=1e-5, atol=1e-6)
        assert got["owned"] == [i for i in range(len(params)) if i % 2 == rank]  # round-robin state sharding


def test_steps_to_target_interpolates() -> None:
    assert steps_to_target([0, 10, 20], [5.0, 3.0, 2.0], 2.5) == pytest.approx(15.0)
    assert steps_to_target([0, 10, 20], [5.0, 3.0, 2.0], 6.0) == 0.0
    assert steps_to_target([0, 10, 20], [5.0, 3.0, 2.0], 1.0) == math.inf


def test_tokenizer_round_trip() -> None:
    text = "def f(x):\n    return 'é' * x\n"
    assert decode(encode(text)) == text
    assert encode(text).max() < 256


def test_corpus_split_deterministic(tmp_path: Path) -> None:
    cols = collect_stdlib_corpus(["json", "email"], 150_000, 0.2)
    assert cols == collect_stdlib_corpus(["json", "email"], 150_000, 0.2)
    assert sum(cols["n_bytes"]) <= 150_000 and len(cols["path"]) > 3
    assert all((s == "val") == is_validation(p, 0.2) for p, s in zip(cols["path"], cols["split"]))
    assert all("test" not in p.split("/")[:-1] for p in cols["path"])
    write_corpus(tmp_path / "c.parquet", cols)
    train = load_split_tokens(tmp_path / "c.parquet", "train")
    texts = [t for t, s in zip(cols["text"], cols["split"]) if s == "train"]
    assert decode(train) == "\n\n".join(texts)


def test_transformer_is_causal() -> None:
    torch.manual_seed(0)
    model = GPT(GPTConfig(context=16, n_layer=1, n_head=2, d_model=16))
    x = torch.randint(0, 256, (1, 16))
    y = x.clone()
    y[0, 10:] = (y[0, 10:] + 1) % 256
    with torch.no_grad():
        torch.testing.assert_close(model(x)[0, :10], model(y)[0, :10])
        assert not torch.allclose(model(x)[0, 10:], model(y)[0, 10:])
    assert len(model.hidden_matrices()) == 4


def test_train_run_deterministic_and_learns(tmp_path: Path) -> None:
    tokens = encode("abcabcabd " * 400)
    val = [
        (torch.from_numpy(tokens[:32].astype(np.int64))[None], torch.from_numpy(tokens[1:33].astype(np.int64))[None])
    ]
    cfg = GPTConfig(context=32, n_layer=1, n_head=2, d_model=16)
    run = RunConfig(
        "normuon", 0.05, 0.01, 0.0, steps=40, warmup=2, final_lr_frac=0.1, batch_size=4, eval_every=10, seed=0
    )
    a = train_run(cfg, run, tokens, val, "cpu", lambda *_: None)
    b = train_run(cfg, run, tokens, val, "cpu", lambda *_: None)
    assert a["val_loss"] == b["val_loss"] and a["row_cv"][1:] == b["row_cv"][1:]
    assert a["val_loss"][-1] < 0.5 * a["val_loss"][0]


@pytest.mark.slow
def test_smoke_pipeline_end_to_end(tmp_path: Path) -> None:
    body = run_smoke("normuon", tmp_path)
    claims = {c["id"]: c for c in body["claims"]}
    assert set(claims) == {"fewer_steps_than_adamw", "larger_gain_than_muon", "more_uniform_neuron_updates",
                           "lowest_final_loss"}  # fmt: skip
    assert all(isinstance(c["holds"], bool) for c in claims.values())
    m = body["metrics"]
    assert m["adamw_hidden_state_bytes"] > m["normuon_hidden_state_bytes"] > m["muon_hidden_state_bytes"]
    assert (tmp_path / "artifacts" / "normuon" / "evaluate" / "curves.png").stat().st_size > 10_000
