"""The order study: what slot orders can do for a trained MDM on a large held-out program set, and whether it reads
the values infilled into its operand slots at all.

Programs: drawn afresh from the task's generator (``draw_study_programs``), distinct from each other and from every
training program, so the study's size never re-keys training. S = K + 1 slots (K value digits, then the answer).

Every order (``order_tree``): plan-and-infill fills one slot per step with the MDM's argmax there, so an order
pi in Sym(S) determines the decoded answer. The S! orders share prefixes; the tree of prefixes is walked level by
level (rows deduplicated, at most sum_{j<S} S!/(S-j)! of them), giving for every program and order whether the
answer is right:

    dependency order   pi_dep (reference.dependency_order): a one-hop-competent model solves every program in it
    left-to-right      pi = (0, 1, ..., S-1);  confidence: the most confident open slot first;  random: a uniform pi
    best fixed order   argmax_pi mean_programs solved(pi)    (one order for every program, chosen on these programs:
                                                              the strongest fixed rung, optimistic by construction)
    any-order oracle   solved if some pi solves the program  (an upper bound of every order policy, MCTS included:
                                                              its commits are one of the S! orders)

Competence (``forward_rows``), the answer's copy excluded: value slot pi_dep[i] predicted with only the true values
of pi_dep[:i] filled (the rest, the answer included, masked): the one hop the dependency order needs.
Mechanism (``mechanism_rows``): for a value slot j with variable operands, hit(j | its operand slots filled with
their true values, everything else masked) - hit(j | every slot masked): the filled-minus-masked gain. Zero means
the model does not read infilled values, and no order can then help.
"""

from __future__ import annotations

from collections.abc import Generator
from itertools import permutations

import numpy as np

from .decoding import ALPHABET, Oracle, Predict, masked_start, slot_choice
from .reference import dependency_order, statements
from .task import encode_task, is_sequential, render, sample_program


def draw_study_programs(rng: np.random.Generator, k: int, p_var: float, shuffle_prob: float, n: int,
                        exclude: set[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(tokens (n, L), answer values (n,), in-order flags (n,), answer start): ``n`` distinct programs whose prompts
    are not in ``exclude`` (the training prompts)."""
    seen, rows, values, flags, start = set(exclude), [], [], [], 0
    while len(rows) < n:
        program = sample_program(rng, k, p_var, shuffle_prob)
        prompt, answer = render(program)
        if prompt in seen:
            continue
        seen.add(prompt)
        tokens, start = encode_task(program)
        rows.append(tokens.astype(np.int64))
        values.append(int(answer[-1]))
        flags.append(is_sequential(program))
    return np.stack(rows), np.array(values), np.array(flags), start


ORDERS_CACHE: dict[int, list[tuple[int, ...]]] = {}


def all_orders(s: int) -> list[tuple[int, ...]]:
    """The S! slot orders, in ``itertools.permutations`` order (index 0 is left-to-right)."""
    return ORDERS_CACHE.setdefault(s, list(permutations(range(s))))


def order_tree(x: np.ndarray, answer_start: int, slots: np.ndarray) -> Generator[np.ndarray, np.ndarray, tuple]:
    """A decoder (decoding.drive) that fills the slots in every order: returns (final rows (S!, L) in ``all_orders``
    order, the confidence order)."""
    oracle, s = Oracle(), len(slots)
    level: dict[tuple[int, ...], np.ndarray] = {(): masked_start(x, answer_start, slots)}
    conf_of: dict[tuple[int, ...], np.ndarray] = {}
    for _ in range(s):
        keys = list(level)
        scores = yield from oracle.score(np.stack([level[key] for key in keys]))
        nxt = {}
        for key, sc in zip(keys, scores, strict=True):
            conf, tok = slot_choice(sc, slots)
            conf_of[key] = conf
            for a in range(s):
                if a not in key:
                    row = level[key].copy()
                    row[answer_start + slots[a]] = tok[a]
                    nxt[key + (a,)] = row
        level = nxt
    confidence: tuple[int, ...] = ()
    while len(confidence) < s:
        conf = conf_of[confidence].copy()
        conf[list(confidence)] = -1.0
        confidence += (int(np.argmax(conf)),)
    return np.stack([level[o] for o in all_orders(s)]), confidence


def dependency_orders(x: np.ndarray, answer_start: int, k: int) -> list[list[int]]:
    """pi_dep of every program (value slots in a topological order, then the answer slot K)."""
    return [dependency_order(statements(bytes(row[:answer_start].astype(np.uint8)).decode(), k)) for row in x]


def operand_slots(x: np.ndarray, answer_start: int, k: int) -> list[list[list[int]]]:
    """Per program, per value slot: the slots of the statements that define its variable operands."""
    out = []
    for row in x:
        rows = statements(bytes(row[:answer_start].astype(np.uint8)).decode(), k)
        index = {v: i for i, (v, *_) in enumerate(rows)}
        out.append([[index[t] for t in (a, b) if t.isalpha()] for _, a, _, b in rows])
    return out


def _hits(predict: Predict, rows: np.ndarray, positions: np.ndarray, truth: np.ndarray, chunk: int) -> np.ndarray:
    """argmax at each row's answer-relative position == the true token."""
    out = []
    for lo in range(0, len(rows), chunk):
        scores = predict(rows[lo:lo + chunk])
        pos = positions[lo:lo + chunk]
        out.append(ALPHABET[scores[np.arange(len(pos)), pos].argmax(-1)] == truth[lo:lo + chunk])
    return np.concatenate(out) if out else np.zeros(0, dtype=bool)


def forward_hits(predict: Predict, x: np.ndarray, answer_start: int, slots: np.ndarray, chunk: int) -> np.ndarray:
    """(n, K) forward one-hop hits, per program in dependency order position (the module docstring)."""
    k = len(slots) - 1
    rows, pos, truth = [], [], []
    for row, order in zip(x, dependency_orders(x, answer_start, k), strict=True):
        for i in range(k):
            y = masked_start(row, answer_start, slots)
            done = slots[order[:i]]
            y[answer_start + done] = row[answer_start + done]
            rows.append(y)
            pos.append(slots[order[i]])
            truth.append(row[answer_start + slots[order[i]]])
    return _hits(predict, np.stack(rows), np.array(pos), np.array(truth), chunk).reshape(len(x), k)


def mechanism_gain(predict: Predict, x: np.ndarray, answer_start: int, slots: np.ndarray,
                   chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """Per program: (mean over value slots with variable operands of filled-minus-masked hit, the same over those
    slots that read a variable listed to their right); NaN where a program has no such slot."""
    k = len(slots) - 1
    rows, pos, truth, owner = [], [], [], []
    for p, (row, ops) in enumerate(zip(x, operand_slots(x, answer_start, k), strict=True)):
        for j, deps in enumerate(ops):
            if not deps:
                continue
            masked = masked_start(row, answer_start, slots)
            filled = masked.copy()
            filled[answer_start + slots[deps]] = row[answer_start + slots[deps]]
            rows += [filled, masked]
            pos += [slots[j]] * 2
            truth += [row[answer_start + slots[j]]] * 2
            owner.append((p, max(deps) > j))
    hits = _hits(predict, np.stack(rows), np.array(pos), np.array(truth), chunk).reshape(-1, 2) if rows else \
        np.zeros((0, 2), dtype=bool)
    gain = hits[:, 0].astype(float) - hits[:, 1]
    total, right = np.full(len(x), np.nan), np.full(len(x), np.nan)
    owners = np.array([o[0] for o in owner], dtype=int)
    to_right = np.array([o[1] for o in owner], dtype=bool)
    for p in range(len(x)):
        mine = owners == p
        if mine.any():
            total[p] = gain[mine].mean()
        if (mine & to_right).any():
            right[p] = gain[mine & to_right].mean()
    return total, right
