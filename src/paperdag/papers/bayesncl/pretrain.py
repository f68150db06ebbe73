"""Self-supervised pretraining of one method: Adam on the method's loss over two augmented views per image; and the
supervised upper bound: the same encoder, data, augmentations and steps, trained by cross-entropy on one view."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch
from torch.func import functional_call, stack_module_state, vmap

from .augment import apply, augment, cat_draws, draws
from .networks import Classifier, ContrastiveNet
from .objectives import bernoulli_kl, features, nt_xent


@dataclass(frozen=True)
class Recipe:
    """Network sizes, optimisation and augmentation settings (the same for every method)."""

    width: int
    hidden: int
    feat_dim: int
    steps: int
    batch: int
    lr: float
    gate_lr: float
    weight_decay: float
    temperature: float
    p0: float
    kl_weight: float
    pi_init: float
    pi_eps: float
    min_scale: float
    jitter: float
    hue: float
    p_gray: float
    flip: bool


def build(method: str, r: Recipe) -> ContrastiveNet:
    """The network of ``method`` (with a gate only for BayesNCL)."""
    return ContrastiveNet(r.width, r.hidden, r.feat_dim, method == "bayesncl", r.pi_init, r.pi_eps)


def initial(method: str, r: Recipe, seed: int) -> ContrastiveNet:
    """The network of ``method`` at its initialisation for ``seed`` (torch's global RNG seeded with it)."""
    torch.manual_seed(seed)
    return build(method, r)


def batches(n: int, batch: int, steps: int, g: torch.Generator) -> Iterator[torch.Tensor]:
    """``steps`` index batches of rows 0..n-1, without replacement within each epoch: a fresh permutation from ``g`` is
    appended whenever fewer than ``batch`` indices remain. Lazy, so its draws from ``g`` interleave with the caller's
    (the augmentations) exactly as in one loop."""
    order = torch.empty(0, dtype=torch.long)
    for _ in range(steps):
        if len(order) < batch:
            order = torch.cat([order, torch.randperm(n, generator=g)])
        idx, order = order[:batch], order[batch:]
        yield idx


def pretrain(x: torch.Tensor, method: str, r: Recipe, seed: int,
             on_step: Callable[[int, dict[str, float]], None] | None = None) -> ContrastiveNet:
    """One seed, plain modules: what train.seed_batch 1 runs, and the reference the tests hold ``pretrain_seeds``
    to. Train on images ``x`` (n, 3, s, s) for ``r.steps`` steps of batches drawn without replacement within each
    epoch. The loss is NT-Xent(f(t'(x)), f(t''(x))) (+ lambda * mean_batch sum_d KL(Bern(pi_d) || Bern(p0)) for
    BayesNCL, with pi = gate(stopgrad(h))). The init, batch order and augmentations depend on ``seed`` only, so
    every method sees the same draws."""
    net = initial(method, r, seed).to(x.device)
    g = torch.Generator().manual_seed(seed)
    body = [p for name, p in net.named_parameters() if not name.startswith("gate.")]
    groups = [{"params": body, "lr": r.lr}]
    if net.gate is not None:
        groups.append({"params": list(net.gate.parameters()), "lr": r.gate_lr})
    opt = torch.optim.Adam(groups, weight_decay=r.weight_decay)
    net.train()
    for step, idx in enumerate(batches(len(x), r.batch, r.steps, g)):
        views = [augment(x[idx.to(x.device)], g, r.min_scale, r.jitter, r.hue, r.p_gray, r.flip) for _ in range(2)]
        h = net.encoder(torch.cat(views))
        z = net.projector(h)
        pi = net.gate(h.detach()) if net.gate is not None else None
        f = features(method, z, pi)
        contrast = nt_xent(f[: r.batch], f[r.batch :], r.temperature)
        kl = bernoulli_kl(pi, r.p0).sum(1).mean() if pi is not None else torch.zeros((), device=x.device)
        loss = contrast + r.kl_weight * kl
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if on_step is not None:
            stats = {"loss": loss.item(), "nt_xent": contrast.item(), "kl": kl.item()}
            if pi is not None:
                stats["keep"] = (pi > 0.5).float().mean().item()
            on_step(step, stats)
    return net.eval()


def supervise(x: torch.Tensor, y: torch.Tensor, n_classes: int, r: Recipe, seed: int) -> Classifier:
    """One seed (train.seed_batch 1; the reference of ``supervise_seeds``): train encoder + linear head by Adam on
    mean_batch -log softmax(W h(t(x)) + b)_y for ``r.steps`` steps (one augmented view t(x) per image; the batches
    and augmentation draws are taken like ``pretrain``'s, from ``seed``, which also seeds the encoder's
    initialisation, so the supervised encoder starts where the self-supervised ones of the same seed do)."""
    torch.manual_seed(seed)
    net = Classifier(r.width, n_classes).to(x.device)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(net.parameters(), lr=r.lr, weight_decay=r.weight_decay)
    net.train()
    for idx in batches(len(x), r.batch, r.steps, g):
        i = idx.to(x.device)
        loss = torch.nn.functional.cross_entropy(net(augment(x[i], g, r.min_scale, r.jitter, r.hue, r.p_gray, r.flip)),
                                                 y[i])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return net.eval()


StepLog = Callable[[int, dict[str, torch.Tensor]], None]


class _Stack:
    """k networks of one architecture as stacked tensors (torch.func.stack_module_state: parameter and buffer
    ``name`` of network i is ``params[name][i]``), run together by vmap over functional_call of a stateless copy."""

    def __init__(self, nets: Sequence[torch.nn.Module]) -> None:
        self.params, self.buffers = stack_module_state(list(nets))
        self.base = copy.deepcopy(nets[0]).to("meta")
        self.names = list(nets[0].state_dict())

    def call(self, fn: Callable[..., object], *batched: torch.Tensor) -> object:
        """vmap over the seeds of fn(module, *inputs_i) with network i's parameters and buffers (BatchNorm's running
        statistics update their own seed's slice in place)."""
        def one(p: dict, b: dict, *xs: torch.Tensor) -> object:
            return fn(lambda *a: functional_call(self.base, (p, b), a), *xs)
        return vmap(one)(self.params, self.buffers, *batched)

    def unstack(self, make: Callable[[], torch.nn.Module]) -> list[torch.nn.Module]:
        """Network i (from ``make``) loaded with slice i of every parameter and buffer, in eval mode."""
        out = []
        for i in range(len(next(iter(self.params.values())))):
            net = make()
            state = {n: (self.params[n] if n in self.params else self.buffers[n])[i].detach().clone()
                     for n in self.names}
            net.load_state_dict(state)
            out.append(net.to(next(iter(self.params.values())).device).eval())
        return out


def _views(x: torch.Tensor, its: list[Iterator[torch.Tensor]], gens: list[torch.Generator], n_views: int,
           r: Recipe) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """One step's images of every seed: seed i's next batch from its own index stream and ``n_views`` augmented views
    drawn from its own generator (in ``pretrain``'s order: batch, then view 1, view 2), applied in one batch.
    Returns (k, n_views * batch, 3, s, s) and the seeds' index batches."""
    idxs, ds = [], []
    for it, g in zip(its, gens):
        idx = next(it)
        idxs.append(idx)
        ds += [draws(g, len(idx)) for _ in range(n_views)]
    rows = torch.cat([idx for idx in idxs for _ in range(n_views)]).to(x.device)
    v = apply(x[rows], cat_draws(ds, x.device), r.min_scale, r.jitter, r.hue, r.p_gray, r.flip)
    return v.view(len(its), -1, *x.shape[1:]), idxs


def pretrain_seeds(x: torch.Tensor, method: str, r: Recipe, seeds: Sequence[int],
                   on_step: StepLog | None = None) -> list[ContrastiveNet]:
    """``pretrain`` for every seed of ``seeds``, trained together: one vmapped network over the seeds (stacked
    weights; the convolutions run as one grouped convolution). Seed i keeps its own init (torch.manual_seed(seed_i)),
    batch order and augmentation draws (its own generator), BatchNorm statistics and Adam moments (Adam is elementwise,
    so one Adam over the stacked tensors is k Adams); the step minimises sum_i L_i, whose gradient in seed i's
    weights is dL_i alone, L_i = NT-Xent(f_i(t'(x)), f_i(t''(x))) (+ lambda mean_batch sum_d KL(Bern(pi_id) ||
    Bern(p0)) for BayesNCL). So seed i's network does not depend on which seeds share its batch, up to float
    round-off. ``on_step(step, stats)`` gets per-seed tensors (k,) of loss, nt_xent, kl (and keep)."""
    nets = [initial(method, r, seed).to(x.device) for seed in seeds]
    gens = [torch.Generator().manual_seed(seed) for seed in seeds]
    its = [batches(len(x), r.batch, r.steps, g) for g in gens]
    stack = _Stack(nets)
    gated_net = nets[0].gate is not None
    body = [p for name, p in stack.params.items() if not name.startswith("gate.")]
    groups = [{"params": body, "lr": r.lr}]
    if gated_net:
        groups.append({"params": [p for name, p in stack.params.items() if name.startswith("gate.")],
                       "lr": r.gate_lr})
    opt = torch.optim.Adam(groups, weight_decay=r.weight_decay)

    def seed_loss(net: Callable[..., tuple[torch.Tensor, ...]], v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h, z, pi = net(v)
        f = features(method, z, pi if gated_net else None)
        contrast = nt_xent(f[: r.batch], f[r.batch :], r.temperature)
        if not gated_net:
            zero = torch.zeros((), device=v.device)
            return contrast + r.kl_weight * zero, contrast, zero, zero + 1
        kl = bernoulli_kl(pi, r.p0).sum(1).mean()
        return contrast + r.kl_weight * kl, contrast, kl, (pi > 0.5).to(pi.dtype).mean()

    for step in range(r.steps):
        v, _ = _views(x, its, gens, 2, r)
        loss, contrast, kl, keep = stack.call(seed_loss, v)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        if on_step is not None:
            stats = {"loss": loss.detach(), "nt_xent": contrast.detach(), "kl": kl.detach()}
            if gated_net:
                stats["keep"] = keep.detach()
            on_step(step, stats)
    return stack.unstack(lambda: build(method, r))


def supervise_seeds(x: torch.Tensor, y: torch.Tensor, n_classes: int, r: Recipe,
                    seeds: Sequence[int]) -> list[Classifier]:
    """``supervise`` for every seed of ``seeds``, trained together as ``pretrain_seeds`` trains them (one vmapped
    classifier; seed i's init, batches, views, BatchNorm statistics and Adam moments its own; the step minimises
    sum_i mean_batch -log softmax(W_i h_i(t_i(x)) + b_i)_y)."""
    def make() -> Classifier:
        return Classifier(r.width, n_classes)

    nets = []
    for seed in seeds:
        torch.manual_seed(seed)
        nets.append(make().to(x.device))
    gens = [torch.Generator().manual_seed(seed) for seed in seeds]
    its = [batches(len(x), r.batch, r.steps, g) for g in gens]
    stack = _Stack(nets)
    opt = torch.optim.Adam(list(stack.params.values()), lr=r.lr, weight_decay=r.weight_decay)
    for _ in range(r.steps):
        v, idxs = _views(x, its, gens, 1, r)
        labels = torch.stack(idxs).to(x.device)
        loss = stack.call(lambda net, vi, li: torch.nn.functional.cross_entropy(net(vi), y[li]), v, labels)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
    return stack.unstack(make)
