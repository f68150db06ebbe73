"""The two reference points the claims are measured against: a trivial count baseline and an oracle slot order.

Statement-count table (the strongest trivial baseline of the task): a slot's value is predicted from its own
statement's text alone, never from the values of the variables it reads,

    key(v=x o y) = (x if x is a digit else "var", o, y if y is a digit else "var")
    predict(key) = argmax_d #{training slots with this key and value d}   (ties: the smaller digit; unseen keys:
                                                                           the training majority digit)

and the answer slot uses the query statement's key. It is a count "bigram" over statement text: it solves every
statement whose operands are digits and knows the value distribution of the others (a product is 0 more often).

Oracle order: plan-and-infill in a dependency (topological) order of the listed statements, the leftmost
statement whose variable operands are all filled first, then the answer slot. A model that does one hop right
solves every program in this order, so dependency minus best fixed order accuracy is the headroom of order search
for such a model (the order study, study.py, also gives the per-program any-order oracle: the true upper bound of
every order policy). On a program listed in dependency order it coincides with left-to-right.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .decoding import Decoded, Decoder, Oracle, masked_start, slot_choice

Statement = tuple[str, str, str, str]  # variable, left operand, operator, right operand


def statements(prompt: str, k: int) -> list[Statement]:
    """The K statements ``v=x o y`` of a prompt ``"c=b-4;a=7*1;...;?e|"`` in listed order."""
    return [(s[0], s[2], s[3], s[4]) for s in prompt.split(";")[:k]]


def slot_keys(prompt: str, k: int) -> list[str]:
    """The count table's key of each of the K + 1 slots: the statement's text with variables blanked; the answer
    slot takes the key of the query statement."""
    rows = statements(prompt, k)
    keys = [f"{x if x.isdigit() else 'var'}{op}{y if y.isdigit() else 'var'}" for _, x, op, y in rows]
    query = prompt[prompt.index("?") + 1]
    return keys + [keys[[v for v, *_ in rows].index(query)]]


def slot_values(answer: str, k: int) -> list[int]:
    """The K value digits and the answer digit of an answer string ``"c7a7b1d8e5=5"``."""
    return [int(answer[2 * i + 1]) for i in range(k + 1)]


def fit_count_table(prompts: Sequence[str], answers: Sequence[str], k: int) -> tuple[dict[str, int], int]:
    """(the most frequent value per key, the majority digit over all slots) on the training programs."""
    counts: dict[str, np.ndarray] = {}
    overall = np.zeros(10, dtype=np.int64)
    for prompt, answer in zip(prompts, answers, strict=True):
        for key, value in zip(slot_keys(prompt, k), slot_values(answer, k), strict=True):
            counts.setdefault(key, np.zeros(10, dtype=np.int64))[value] += 1
            overall[value] += 1
    return {key: int(c.argmax()) for key, c in counts.items()}, int(overall.argmax())


def count_table_hits(table: dict[str, int], default: int, prompts: Sequence[str], answers: Sequence[str],
                     k: int) -> np.ndarray:
    """(n, K + 1) booleans: whether the table predicts each slot's value (the last column is the answer)."""
    return np.array([[table.get(key, default) == value for key, value in
                      zip(slot_keys(prompt, k), slot_values(answer, k), strict=True)]
                     for prompt, answer in zip(prompts, answers, strict=True)], dtype=bool)


def dependency_order(rows: Sequence[Statement]) -> list[int]:
    """Slot indices in a topological order of the statements (the leftmost ready statement first), then the
    answer slot K."""
    filled: set[str] = set()
    todo, order = list(range(len(rows))), []
    while todo:
        i = next(i for i in todo if all(t.isdigit() or t in filled for t in (rows[i][1], rows[i][3])))
        filled.add(rows[i][0])
        order.append(i)
        todo.remove(i)
    return order + [len(rows)]


def ordered_infill(x: np.ndarray, answer_start: int, slots: np.ndarray, order: Sequence[int]) -> Decoder:
    """Plan-and-infill in a given slot ``order``: each step fills the next slot with the MDM's argmax there (the
    decoding of ``decoding.plan_infill``, with the order fixed in advance)."""
    oracle, y = Oracle(), masked_start(x, answer_start, slots)
    for a in order:
        scores = (yield from oracle.score(y[None]))[0]
        _, tok = slot_choice(scores, slots[[a]])
        y[answer_start + slots[a]] = tok[0]
    return Decoded(y, list(order), oracle.forwards)
