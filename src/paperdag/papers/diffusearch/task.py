"""Straight-line programs mod 10 in plan-and-infill format, checkable by execution.

A program has K statements ``v=x o y`` (o in {+, -, *}, operands earlier variables or digits) generated in
dependency order; value(v) = (value(x) o value(y)) mod 10. The prompt lists the statements (in dependency order, or
with probability ``shuffle_prob`` in a random order) and names the query variable q, the last one computed:

    prompt  "c=b-4;a=7*1;b=a*3;d=c+b;e=d+a;?e|"      answer  "c7a7b1d8e5=5"

The answer lists each statement's variable and value in prompt order, then ``=`` and the value of q. Its plan (the
skeleton ``c_a_b_d_e_=_``) is a copy of the prompt; the K + 1 slots to infill are the value digits and the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperdag.common.tokenizer import decode, encode

OPS = "+-*"
NAMES = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Program:
    """Statements (variable, left operand, op, right operand) in prompt order, and the query variable."""

    statements: tuple[tuple[str, str, str, str], ...]
    query: str


def execute(program: Program) -> dict[str, int]:
    """Every variable's value by repeated passes (the prompt order need not follow dependencies)."""
    env: dict[str, int] = {}
    while len(env) < len(program.statements):
        for v, x, op, y in program.statements:
            if v in env:
                continue
            a, b = (int(t) if t.isdigit() else env.get(t) for t in (x, y))
            if a is not None and b is not None:
                env[v] = {"+": a + b, "-": a - b, "*": a * b}[op] % 10
    return env


def sample_program(rng: np.random.Generator, k: int, p_var: float, shuffle_prob: float) -> Program:
    """K statements in dependency order: statement i's left operand is an earlier variable with probability p_var
    (always the previous one's for i = K - 1, so q depends on the chain), the right one with probability p_var / 2;
    then, with probability ``shuffle_prob``, the listing is permuted uniformly at random."""
    names = [str(c) for c in rng.choice(list(NAMES), size=k, replace=False)]
    rows = []
    for i, v in enumerate(names):
        def operand(p: float) -> str:
            return names[int(rng.integers(i))] if i and rng.random() < p else str(int(rng.integers(10)))
        x = names[i - 1] if i == k - 1 else operand(p_var)
        rows.append((v, x, OPS[int(rng.integers(3))], operand(p_var / 2)))
    order = rng.permutation(k) if rng.random() < shuffle_prob else np.arange(k)
    return Program(tuple(rows[j] for j in order), names[-1])


def is_sequential(program: Program) -> bool:
    """True when every statement reads only variables listed before it (left-to-right infilling is one hop)."""
    seen: set[str] = set()
    for v, x, _, y in program.statements:
        if any(t.isalpha() and t not in seen for t in (x, y)):
            return False
        seen.add(v)
    return True


def render(program: Program) -> tuple[str, str]:
    """(prompt, answer) text as in the module docstring."""
    env = execute(program)
    prompt = "".join(f"{v}={x}{op}{y};" for v, x, op, y in program.statements) + f"?{program.query}|"
    answer = "".join(f"{v}{env[v]}" for v, *_ in program.statements) + f"={env[program.query]}"
    return prompt, answer


def slot_positions(k: int) -> np.ndarray:
    """Answer-relative positions of the K + 1 slots: value digits at 2i + 1, the answer digit at 2K + 1."""
    return np.arange(k + 1) * 2 + 1


def encode_task(program: Program) -> tuple[np.ndarray, int]:
    """(token ids of prompt + answer, index where the answer starts)."""
    prompt, answer = render(program)
    return encode(prompt + answer), len(prompt)


def answer_value(tokens: np.ndarray, answer_start: int, k: int) -> int | None:
    """The decoded answer digit (None when the answer slot holds no digit)."""
    ch = decode(tokens[answer_start + 2 * k + 1: answer_start + 2 * k + 2])
    return int(ch) if ch.isdigit() else None
