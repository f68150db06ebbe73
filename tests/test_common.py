"""The shared substrate (paperdag.common): byte tokenizer, stdlib corpus, tiny transformer, across-seed statistics,
the competence trend's budget bound."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
import torch

from paperdag.common.corpus import (
    DOC_SEPARATOR,
    collect_stdlib_corpus,
    fixed_batches,
    is_validation,
    load_split_tokens,
    write_corpus,
)
from paperdag.common.stats import mean_ci, paired_diff_ci
from paperdag.common.trend import budget_needed
from paperdag.common.tokenizer import VOCAB_SIZE, decode, encode
from paperdag.common.transformer import GPT, GPTConfig


def test_tokenizer_round_trip() -> None:
    text = "def f(x):\n    return 'é' * x\n"
    assert decode(encode(text)) == text
    assert len(encode(text)) == len(text.encode("utf-8")) and encode(text).max() < VOCAB_SIZE


def test_corpus_split_deterministic(tmp_path: Path) -> None:
    cols = collect_stdlib_corpus(["json", "email"], 150_000, 0.2)
    assert cols == collect_stdlib_corpus(["json", "email"], 150_000, 0.2)
    assert sum(cols["n_bytes"]) <= 150_000 and len(cols["path"]) > 3
    assert all((s == "val") == is_validation(p, 0.2) for p, s in zip(cols["path"], cols["split"], strict=True))
    assert all("test" not in p.split("/")[:-1] for p in cols["path"])
    write_corpus(tmp_path / "c.parquet", cols)
    train = load_split_tokens(tmp_path / "c.parquet", "train")
    texts = [t for t, s in zip(cols["text"], cols["split"], strict=True) if s == "train"]
    assert decode(train) == DOC_SEPARATOR.join(texts)


def test_fixed_batches_are_shifted_windows_and_repeat_under_seed() -> None:
    tokens = encode("abcdefghijklmnopqrstuvwxyz" * 10)
    batches = fixed_batches(tokens, 3, 4, 8, seed=7)
    for (x, y), (x2, y2) in zip(batches, fixed_batches(tokens, 3, 4, 8, seed=7), strict=True):
        assert torch.equal(x, x2) and torch.equal(y, y2)
        assert x.shape == y.shape == (4, 8)
        torch.testing.assert_close(y[:, :-1], x[:, 1:])  # y is x shifted by one token
        assert torch.equal((x[:, 1:] - x[:, :-1]) % 26, torch.ones(4, 7, dtype=torch.long))  # contiguous text


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


def test_transformer_loss_at_init_is_near_uniform() -> None:
    """With N(0, 0.02^2) weights the logits are near zero, so the cross-entropy is close to ln(vocab)."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(context=16, n_layer=1, n_head=2, d_model=16))
    x = torch.randint(0, 256, (2, 16))
    assert abs(model.loss(x, x).item() - torch.log(torch.tensor(256.0)).item()) < 0.05


def test_mean_ci_matches_scipy_t_interval() -> None:
    v = np.array([0.2, 0.5, 0.1, 0.4, 0.3])
    lo, hi = scipy.stats.t.interval(0.9, len(v) - 1, loc=v.mean(), scale=scipy.stats.sem(v))
    ci = mean_ci(v, 0.9)
    assert ci.mean == pytest.approx(0.3) and (ci.lo, ci.hi) == pytest.approx((lo, hi))
    assert mean_ci([1.5]).rounded() == {"mean": 1.5, "ci": [1.5, 1.5]}


def test_paired_diff_ci_resolves_a_consistent_gain_and_rejects_unpaired_arms() -> None:
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.4, 2.6])
    d = paired_diff_ci(a, b)
    assert d.mean == pytest.approx(0.5) and d.excludes_zero()
    assert not mean_ci([-1.0, 1.0, 0.5]).excludes_zero()
    with pytest.raises(ValueError, match="one value per unit"):
        paired_diff_ci(a, b[:2])


def test_budget_needed_is_the_doublings_at_the_last_drop() -> None:
    # 2.0 -> 1.8 over one doubling, 0.3 above the bar: 1.5 more doublings, 1600 * 2^1.5 steps
    n = budget_needed([400, 800, 1600], [2.3, 2.0, 1.8], 1.5)
    assert n["gap"] == pytest.approx(0.3) and n["drop_per_doubling"] == pytest.approx(0.2)
    assert n["doublings_at_least"] == pytest.approx(1.5) and n["steps_at_least"] == pytest.approx(1600 * 2**1.5)
    # a power law a + b s^-c never closes its gap sooner than the bound says
    a, b, c = 1.0, 40.0, 0.5
    loss = [a + b * s**-c for s in (400, 800)]
    bound = budget_needed([400, 800], loss, 1.2)["steps_at_least"]
    crossing = (b / (1.2 - a)) ** (1 / c)  # where a + b s^-c = 1.2
    assert 800 < bound < crossing
    # a jump of 4x the budget counts as two doublings; a bar already passed needs none; a rising loss never closes
    assert budget_needed([400, 1600], [2.0, 1.6], 1.4)["drop_per_doubling"] == pytest.approx(0.2)
    assert budget_needed([400, 800], [2.0, 1.6], 1.7)["doublings_at_least"] == 0.0
    assert budget_needed([400, 800], [2.0, 2.1], 1.7)["steps_at_least"] == math.inf
    assert budget_needed([1800], [1.1], 1.3) == {"gap": pytest.approx(-0.2)}  # one budget: the gap alone



def test_write_trend_writes_the_result_and_its_figure_whole_and_says_each_gap(tmp_path: Path, capsys) -> None:
    from paperdag.common.trend import trend_figure, write_trend
    from paperdag.io import read_json

    a = budget_needed([400, 800], [2.0, 1.8], 1.5)
    result = {"needed": {"a": a | {"cpu_seconds_at_least": a["steps_at_least"] * 0.03},
                         "b": budget_needed([800], [1.4], 1.5)}}
    fig = trend_figure({"a x": ([400, 800], [2.0, 1.8])}, {"a": "tab:blue"}, {"KN 5-gram": 1.5}, "t", "steps")
    write_trend(tmp_path / "r.json", result, fig, "KN 5-gram")
    assert read_json(tmp_path / "r.json")["needed"]["a"]["doublings_at_least"] == pytest.approx(1.5)
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.png"]  # no temporary file left
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "a: gap +0.300 to KN 5-gram, drop 0.200 per doubling -> at least 2.26e+03 steps, 1.13 CPU-min"
    assert out[1] == "b: gap -0.100 to KN 5-gram"


def test_a_trend_cli_turns_a_user_error_into_one_line_and_its_exit_code(capsys) -> None:
    from paperdag.common.trend import cli
    from paperdag.errors import UsageError

    def bad() -> int:
        raise UsageError("no params.yaml in /nowhere or above")

    def interrupted() -> int:
        raise KeyboardInterrupt

    assert cli(bad) == 2 and capsys.readouterr().err == "error: no params.yaml in /nowhere or above\n"
    assert cli(interrupted) == 130 and "nothing written" in capsys.readouterr().err
    assert cli(lambda: 0) == 0


def test_parallel_runs_keep_the_call_order_and_raise_a_run_s_error() -> None:
    from paperdag.common.trend import parallel_runs

    assert parallel_runs(math.sqrt, [(16.0,), (4.0,), (9.0,)], 2, str) == [4.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="math domain error"):
        parallel_runs(math.sqrt, [(4.0,), (-1.0,)], 2, str)


def test_bounds_are_each_model_s_budget_needed_with_its_cpu_time() -> None:
    from paperdag.common.trend import bounds

    out = bounds({"a": [(400, 2.0, 8.0), (800, 1.8, 20.0)], "b": [(800, 1.4, 30.0)]}, 1.5)
    assert out["a"] == budget_needed([400, 800], [2.0, 1.8], 1.5) | {
        "seconds_per_step": 20.0 / 800, "cpu_seconds_at_least": pytest.approx(800 * 2**1.5 * 20.0 / 800)}
    assert out["b"] == {"gap": pytest.approx(-0.1), "seconds_per_step": 30.0 / 800}  # one budget: no bound
