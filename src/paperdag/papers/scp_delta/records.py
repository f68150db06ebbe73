"""The private fine-tuning set (templated records and secret canaries in two disjoint shards) and the public
corpus of the same format that pretrains the base model p0.

A record is one line from a fixed template with fields drawn from small lists (a learnable format). The private
set also has templates of its own (``PRIVATE_TEMPLATES``: other wording and field order) that no public line uses:
fine-tuning teaches them, so held-out records written in them measure a skill p0 lacks (utility with headroom). A
canary is the line ``"{name}'s secret code is {code}.\\n"`` with a fresh pseudo-word name and a code drawn uniformly
from the 10^D codes of D digits; its prompt is the line up to the code. Shard s holds ``n_records`` records
(templates drawn uniformly from the public and the private ones), its own ``n_canaries`` canaries and the
``n_duplicated`` canaries shared by both shards, each canary line repeated ``canary_reps`` times, all lines
shuffled. Held-out lines (utility) are fresh records in the private templates only: the skill the private data teach
and p0 never saw, not its secrets (fresh canary-format lines would charge the memorisation of secrets, the very thing
the defences remove, as a utility loss); fresh records in the public templates ("heldout_known") show p0 competent in
its own domain. The public corpus is drawn the same way (records in the public templates
only and canary-format lines, each once) with names and codes disjoint from every private name and code: p0 knows
the format, never a private item.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from paperdag.common.tokenizer import encode
from paperdag.io import read_table

CITIES = ("Lisbon", "Oslo", "Quito", "Dakar", "Hanoi", "Perth", "Lima", "Riga", "Accra", "Tunis", "Bern", "Kyoto")
JOBS = ("baker", "nurse", "pilot", "tailor", "welder", "farmer", "judge", "miner", "clerk", "potter")
TEMPLATES = (
    "{name} lives in {city} and works as a {job}.\n",
    "{name} is {age} years old and was born in {city}.\n",
    "The {job} {name} moved to {city} at age {age}.\n",
)
PRIVATE_TEMPLATES = (  # only the private set uses these: other wording, other field order
    "Age {age}, {job} from {city}: {name}.\n",
    "{city} records {name} as a {job} of {age}.\n",
)
CANARY_MARK = "'s secret code is "  # in canary-format lines only, never in a record
CANARY_PROMPT = "{name}" + CANARY_MARK
CONSONANTS, VOWELS = "bdfgklmnprstvz", "aeiou"


@dataclass(frozen=True)
class Canary:
    """One secret: its shard ("1", "2" or "both"), name, code (a D-digit string) and prompt."""

    where: str
    name: str
    code: str

    @property
    def prompt(self) -> str:
        return CANARY_PROMPT.format(name=self.name)

    @property
    def line(self) -> str:
        return f"{self.prompt}{self.code}.\n"


def pseudo_names(rng: np.random.Generator, n: int, exclude: frozenset[str] = frozenset()) -> list[str]:
    """``n`` distinct capitalised consonant-vowel words of 3 syllables (e.g. "Tovaki"), none in ``exclude``."""
    names: list[str] = []
    seen = set(exclude)
    while len(names) < n:
        word = "".join(rng.choice(list(CONSONANTS)) + rng.choice(list(VOWELS)) for _ in range(3)).capitalize()
        if word not in seen:
            names.append(word)
            seen.add(word)
    return names


def record_line(rng: np.random.Generator, name: str, templates: tuple[str, ...] = TEMPLATES) -> str:
    """One templated record about ``name``: template (of ``templates``), city, job and age (18..79) drawn uniformly."""
    template = templates[rng.integers(len(templates))]
    return template.format(name=name, city=rng.choice(CITIES), job=rng.choice(JOBS), age=int(rng.integers(18, 80)))


def draw_canaries(rng: np.random.Generator, names: list[str], n_single: int, n_dup: int, digits: int) -> list[Canary]:
    """``n_single`` canaries per shard and ``n_dup`` in both; codes uniform over the 10^digits codes."""
    where = ["1"] * n_single + ["2"] * n_single + ["both"] * n_dup
    codes = rng.integers(0, 10**digits, size=len(where))
    return [Canary(w, name, f"{int(c):0{digits}d}") for w, name, c in zip(where, names, codes, strict=False)]


def draw_private_set(rng: np.random.Generator, n_records: int, n_single: int, n_dup: int, reps: int, digits: int,
                     n_heldout: int) -> tuple[dict[str, list[str]], list[Canary], list[str]]:
    """Lines of shard "1", shard "2" (records in the public and private templates), "heldout" (records in the
    private templates only: utility) and "heldout_known" (records in the public templates: p0's own domain), each
    shuffled, the canaries, and every name drawn."""
    n_canary = 2 * n_single + n_dup
    names = pseudo_names(rng, n_canary + 2 * n_records + 2 * n_heldout)
    canaries = draw_canaries(rng, names[:n_canary], n_single, n_dup, digits)
    people = names[n_canary:]
    splits: dict[str, list[str]] = {}
    for s, shard in enumerate(("1", "2")):
        lines = [record_line(rng, people[s * n_records + i], TEMPLATES + PRIVATE_TEMPLATES) for i in range(n_records)]
        lines += [c.line for c in canaries if c.where in (shard, "both") for _ in range(reps)]
        splits[shard] = [lines[i] for i in rng.permutation(len(lines))]
    fresh = people[2 * n_records:]
    splits["heldout"] = [record_line(rng, fresh[i], PRIVATE_TEMPLATES) for i in range(n_heldout)]
    splits["heldout_known"] = [record_line(rng, fresh[n_heldout + i]) for i in range(n_heldout)]
    return splits, canaries, names


def draw_public_set(rng: np.random.Generator, n_lines: int, code_fraction: float, digits: int,
                    private_names: frozenset[str], private_codes: frozenset[str]) -> list[str]:
    """``n_lines`` shuffled public lines: records and, a ``code_fraction`` of them, canary-format lines, every name
    outside ``private_names`` and every code uniform over the 10^digits codes outside ``private_codes``."""
    names = pseudo_names(rng, n_lines, private_names)
    n_code = round(code_fraction * n_lines)
    allowed = np.array([c for c in range(10**digits) if f"{c:0{digits}d}" not in private_codes])
    codes = rng.choice(allowed, size=n_code)
    lines = [Canary("public", name, f"{int(c):0{digits}d}").line for name, c in zip(names[:n_code], codes,
                                                                                    strict=True)]
    lines += [record_line(rng, name) for name in names[n_code:]]
    return [lines[i] for i in rng.permutation(len(lines))]


def read_lines(path: Path, seed: int, splits: tuple[str, ...]) -> list[str]:
    """The lines of ``splits`` (in that order, each in its stored order) of one seed of private.parquet."""
    t = read_table(path).to_pydict()
    rows = list(zip(t["seed"], t["split"], t["text"], strict=True))
    return [text for split in splits for s, sp, text in rows if s == seed and sp == split]


def read_canaries(path: Path, seed: int) -> list[Canary]:
    """The canaries of one seed of canaries.parquet."""
    t = read_table(path).to_pydict()
    rows = zip(t["seed"], t["where"], t["name"], t["code"], strict=True)
    return [Canary(w, n, c) for s, w, n, c in rows if s == seed]


def shard_tokens(path: Path, seed: int, splits: tuple[str, ...]) -> np.ndarray:
    """Byte tokens of the concatenated lines of ``splits`` (a fine-tuning stream)."""
    return encode("".join(read_lines(path, seed, splits)))


def public_tokens(path: Path, split: str, records_only: bool = False) -> np.ndarray:
    """Byte tokens of the concatenated public lines of ``split`` ("train" or "val") of public.parquet; with
    ``records_only`` its records alone (no canary-format line), like the private held-out lines."""
    t = read_table(path).to_pydict()
    return encode("".join(text for sp, text in zip(t["split"], t["text"], strict=True)
                          if sp == split and not (records_only and CANARY_MARK in text)))
