"""The trivial generators of the scenes: the baseline ladder every trained generator's competence is judged against
(``../shared/papers.md``: a fitted Gaussian, training-data replay and nearest-neighbour retrieval, each scored in the
evaluation's own metric, GenEval on the final comparison's held-out captions).

A caption's layout is scenes.canonical (axis, first and second object's colour and shape): what GenEval checks. For
an evaluation caption q with layout l(q) and the training images I_l whose (imperfect) training caption has layout l:

  caption-mean image:   the pixel mean of I_l(q) (the mean of every training image when I_l(q) is empty);
  fitted Gaussian:      draws of N(mu_l, Sigma_l) fitted to I_l(q) (baselines.generators.fit_gaussian, its ridge
                        keeping Sigma_l positive definite: ~18 images per layout in 768 pixels), clipped to [0, 1]
                        as any generator's output is; fitted to every training image when |I_l(q)| < 2;
  replay:               training images drawn uniformly from I_l(q) (baselines.generators.replay), all images when
                        I_l(q) is empty;
  retrieval:            the training image whose layout's one-hot code is nearest to q's
                        (baselines.generators.nearest_neighbour_retrieval; ties: the lowest index), one per caption.

None needs training beyond counting and lookup; a generator that does not beat the strongest has not learned more
than the data's own per-caption statistics.

Own replay (each generator's competence bar): a generator conditioned toward a target t learns the training images
whose conditions are nearest t, not all of them. With a per-image nearness score s_i to the generator's target
(``target_scores``: base 0 for every image, it is conditioned on the caption alone; filter 1 on the kept rows, the
only ones it trains on, 0 elsewhere; single the bin b_ij of its reward j, sampled at b = 1; MIRO sum_j b_ij, i.e.
minus the L1 distance of the image's bins to the all-top target it is sampled at), the own replay of a caption q
draws uniformly from argmax_{i in I_l(q)} s_i (from every image when I_l(q) is empty). Where the layout holds an
image at the target itself (s_i = max s) this is the replay of "the images its conditioning targets" (base: all;
filter: the kept rows; single: its reward's top bin; MIRO: the all-top cell); elsewhere it is that layout's images
nearest the target, and ``exact_cover`` reports the share of captions in the first case. The clean replay draws
from the layout's uncorrupted images (score: no corruption flag) and is reported beside.
"""

from __future__ import annotations

import numpy as np
import torch

from paperdag.common.baselines.generators import fit_gaussian, nearest_neighbour_retrieval, replay, sample_gaussian

from .detector import Detector, geneval
from .methods import Method
from .scenes import VOCAB, canonical

LAYOUT_SIZES = (2, VOCAB[0], VOCAB[1], VOCAB[0], VOCAB[1])  # axis, colour, shape, colour, shape (canonical order)


def _layouts(tokens: np.ndarray) -> tuple[list[tuple[int, ...]], dict[tuple[int, ...], np.ndarray]]:
    """Each row's layout and, per layout, the indices of the rows that have it (ascending)."""
    keys = [tuple(int(v) for v in k) for k in canonical(tokens)]
    index: dict[tuple[int, ...], list[int]] = {}
    for i, k in enumerate(keys):
        index.setdefault(k, []).append(i)
    return keys, {k: np.array(v) for k, v in index.items()}


def layout_code(tokens: np.ndarray) -> np.ndarray:
    """One-hot code of each caption's layout (n x sum(LAYOUT_SIZES)): two captions' squared distance is twice the
    number of layout attributes in which they differ."""
    lay = canonical(tokens)
    return np.concatenate([np.eye(k)[lay[:, j]] for j, k in enumerate(LAYOUT_SIZES)], 1)


def caption_mean_images(images: torch.Tensor, tokens: np.ndarray, prompts: np.ndarray) -> torch.Tensor:
    """One image per prompt (P x 3 x 16 x 16): the mean of the training images with the prompt's layout."""
    _, index = _layouts(tokens)
    fallback = images.mean(0)
    keys, _ = _layouts(prompts)
    return torch.stack([images[torch.as_tensor(index[k])].mean(0) if k in index else fallback for k in keys])


def replay_images(images: np.ndarray, tokens: np.ndarray, prompts: np.ndarray, per_prompt: int,
                  rng: np.random.Generator) -> np.ndarray:
    """``per_prompt`` training images of each prompt's layout (P * per_prompt x 3 x 16 x 16, each prompt's samples
    consecutive, as evaluation.generate orders them)."""
    _, index = _layouts(tokens)
    keys, _ = _layouts(prompts)
    every = np.arange(len(images))
    return np.concatenate([images[replay(index.get(k, every), per_prompt, rng)] for k in keys])


def gaussian_images(images: np.ndarray, tokens: np.ndarray, prompts: np.ndarray, per_prompt: int, draws: int,
                    rng: np.random.Generator) -> np.ndarray:
    """``draws`` independent sets of ``per_prompt`` samples of each prompt's fitted Gaussian, clipped to [0, 1]
    (draws x P * per_prompt x 3 x 16 x 16); one Cholesky factor per layout."""
    _, index = _layouts(tokens)
    keys, wanted = _layouts(prompts)
    out = np.empty((draws, len(prompts), per_prompt, *images.shape[1:]), dtype=np.float32)
    flat = images.reshape(len(images), -1)
    for k, rows in wanted.items():  # prompts of one layout share its fit
        members = index.get(k, np.arange(len(images)))
        mean, cov = fit_gaussian(flat[members if len(members) >= 2 else np.arange(len(images))])
        x = sample_gaussian(mean, cov, draws * len(rows) * per_prompt, rng)
        out[:, rows] = np.clip(x, 0, 1).reshape(draws, len(rows), per_prompt, *images.shape[1:])
    return out.reshape(draws, len(prompts) * per_prompt, *images.shape[1:])


def retrieval_images(images: np.ndarray, tokens: np.ndarray, prompts: np.ndarray) -> np.ndarray:
    """The training image whose layout code is nearest to each prompt's (P x 3 x 16 x 16)."""
    return nearest_neighbour_retrieval(images, layout_code(tokens), layout_code(prompts))


def ladder_geneval(images: torch.Tensor, tokens: np.ndarray, evaluator: Detector, prompts: np.ndarray,
                   per_prompt: int, draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """GenEval overall (detector.geneval by ``evaluator``) of each trivial generator on ``prompts`` with
    ``per_prompt`` images each, as the generators' finals are scored: ``draws`` values (one per training seed, drawn
    in seed order) for replay and the fitted Gaussian, one for the deterministic retrieval and caption-mean image."""
    pixels, repeated = images.cpu().numpy(), np.repeat(prompts, per_prompt, 0)

    def overall(x: np.ndarray | torch.Tensor, t: np.ndarray) -> float:
        x = torch.as_tensor(x, dtype=torch.float32, device=images.device)
        return float(geneval(evaluator, x, t)["overall"].float().mean())

    gaussian = gaussian_images(pixels, tokens, prompts, per_prompt, draws, rng)
    return {"replay": np.array([overall(replay_images(pixels, tokens, prompts, per_prompt, rng), repeated)
                                for _ in range(draws)]),
            "gaussian": np.array([overall(g, repeated) for g in gaussian]),
            "retrieval": np.array([overall(retrieval_images(pixels, tokens, prompts), prompts)]),
            "caption_mean": np.array([overall(caption_mean_images(images, tokens, prompts), prompts)])}


def target_scores(m: Method, bins: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """Per training image, its nearness to the condition ``m`` is sampled at (module docstring; higher is nearer):
    the kept rows for filtering, the masked rewards' bins summed for a reward-conditioned model, 0 otherwise."""
    if m.filter_reward is not None:
        score = np.zeros(len(bins))
        score[m.rows(rewards)] = 1.0
        return score
    return bins @ np.asarray(m.mask, dtype=float)


def nearest_target_replay(images: np.ndarray, tokens: np.ndarray, score: np.ndarray, prompts: np.ndarray,
                          per_prompt: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """``per_prompt`` training images per prompt drawn uniformly from its layout's images of the highest ``score``
    (every image's when the layout has none), each prompt's samples consecutive; and the share of prompts whose
    layout holds an image at the highest score over the whole set (the target itself)."""
    _, index = _layouts(tokens)
    keys, _ = _layouts(prompts)
    every, best = np.arange(len(images)), score.max()
    picks, exact = [], 0
    for k in keys:
        rows = index.get(k, every)
        top = rows[score[rows] == score[rows].max()]
        exact += bool(score[rows].max() == best)
        picks.append(replay(top, per_prompt, rng))
    return images[np.concatenate(picks)], exact / len(keys)


def own_replay_geneval(images: torch.Tensor, tokens: np.ndarray, scores: dict[str, np.ndarray], evaluator: Detector,
                       prompts: np.ndarray, per_prompt: int, draws: int,
                       rng: np.random.Generator) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Per named score (a generator's target, or "clean"): GenEval overall of ``draws`` independent nearest-target
    replays on ``prompts`` with ``per_prompt`` images each (one per training seed, in seed order), and the share of
    prompts whose layout holds an image at the target itself."""
    pixels, repeated = images.cpu().numpy(), np.repeat(prompts, per_prompt, 0)
    values, cover = {}, {}
    for name, score in scores.items():
        out = []
        for _ in range(draws):
            x, cover[name] = nearest_target_replay(pixels, tokens, score, prompts, per_prompt, rng)
            x = torch.as_tensor(x, dtype=torch.float32, device=images.device)
            out.append(float(geneval(evaluator, x, repeated)["overall"].float().mean()))
        values[name] = np.array(out)
    return values, cover
