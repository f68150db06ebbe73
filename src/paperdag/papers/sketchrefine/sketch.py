"""EditableSketch: a proof sketch as a dependency DAG of subgoals that is edited in place.

Nodes: the goal (the theorem's statement, fixed) and lemmas ``lo <= v <= hi`` on hidden variables (``h_<v>``), plus
unused lemmas (``s<n>``) that nothing cites. A node cites the nearest lemmas below it in the definition DAG; its
proof is "the checker accepts the step from those premises" and records the premises it was proved from. Edits
(replace, insert, decompose, delete) reopen only the nodes they emit; the invariant: a node whose statement and
premises are unchanged keeps its proof, so only edited nodes, their dependents and the goal are re-checked.
Token cost is the number of tokens (``n_tokens``) of the text the proposer emits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import count

from .checker import PROVED, Verdict
from .theorems import Box, Theorem

GOAL = "goal"
OPEN = "open"
Premises = tuple[tuple[str, str, Box], ...]
TOKEN = re.compile(r"\d{1,3}|[^\d\s]+")


def n_tokens(text: str) -> int:
    """Tokens of ``text``: each run of non-digit, non-space characters is one token and digits count in groups of up
    to three (the digit grouping of the cl100k and Llama 3 tokenizers), so a 20-digit bound costs 7 tokens, not 1."""
    return len(TOKEN.findall(text))


def lemma_id(var: str) -> str:
    return f"h_{var}"


@dataclass
class Node:
    """A subgoal: its statement (``var`` in ``box``), status, the checker's error, and the premises it was last
    checked from (its proof when proved). Every (re-)emission by the proposer makes a new Node object, so identity
    tells a kept proof."""

    var: str
    box: Box
    status: str = OPEN
    error: str = ""
    checked_from: Premises | None = None


@dataclass
class EditableSketch:
    """The sketch of one theorem; ``nodes`` keeps insertion order (goal first)."""

    theorem: Theorem
    nodes: dict[str, Node] = field(default_factory=dict)
    _spurious: count = field(default_factory=count)

    @classmethod
    def new(cls, theorem: Theorem, lemmas: dict[str, Box], unused: list[tuple[str, Box]]) -> EditableSketch:
        s = cls(theorem)
        s.nodes[GOAL] = Node(theorem.goal_var, theorem.goal())
        for var, box in lemmas.items():
            s.nodes[lemma_id(var)] = Node(var, box)
        for var, box in unused:
            s.nodes[f"s{next(s._spurious)}"] = Node(var, box)
        return s

    def cites(self, node_id: str) -> tuple[str, ...]:
        """The lemma ids a node's step uses: walking down the definitions from its variable, the first variable on
        each path that has a lemma in the sketch (inputs are hypotheses and are never cited)."""
        out: list[str] = []
        d = self.theorem.definition(self.nodes[node_id].var)
        stack = [d.b, d.a]
        while stack:
            w = stack.pop()
            dw = self.theorem.definition(w)
            if dw is None:
                continue
            if lemma_id(w) in self.nodes:
                if lemma_id(w) not in out:
                    out.append(lemma_id(w))
            else:
                stack += [dw.b, dw.a]
        return tuple(out)

    def premises(self, node_id: str) -> Premises:
        return tuple((c, self.nodes[c].var, self.nodes[c].box) for c in self.cites(node_id))

    def dependents(self, node_id: str) -> list[str]:
        return [n for n in self.nodes if node_id in self.cites(n)]

    def text(self, node_id: str) -> str:
        """The node as the proposer writes it, e.g. ``have h_y2 : -12 <= y2 <= 40 := by smt [h_y1]``."""
        n = self.nodes[node_id]
        head = f"theorem {self.theorem.name}" if node_id == GOAL else f"have {node_id}"
        return f"{head} : {n.box[0]} <= {n.var} <= {n.box[1]} := by smt [{', '.join(self.cites(node_id))}]"

    def tokens(self, node_ids: list[str] | None = None) -> int:
        """Tokens of the given nodes' text (all nodes by default: the cost of emitting the whole sketch)."""
        return sum(n_tokens(self.text(n)) for n in (self.nodes if node_ids is None else node_ids))

    def valid(self, node_id: str) -> bool:
        """Proved, and from the premises it has now (the invariant's test)."""
        n = self.nodes[node_id]
        return n.status == PROVED and n.checked_from == self.premises(node_id)

    def pending(self) -> list[str]:
        """Nodes to (re-)check: never checked, or whose premises changed since their last check (the dependents of
        an edit). The goal (final assembly) is re-checked whenever anything else is."""
        todo = [n for n in self.nodes if n != GOAL and self.nodes[n].checked_from != self.premises(n)]
        return todo + [GOAL] if todo or self.nodes[GOAL].checked_from != self.premises(GOAL) else []

    def record(self, node_id: str, verdict: Verdict) -> None:
        n = self.nodes[node_id]
        n.status, n.error = verdict.status, verdict.error
        n.checked_from = self.premises(node_id)

    def failed(self) -> list[str]:
        return [n for n, node in self.nodes.items() if node.status not in (PROVED, OPEN)]

    def solved(self) -> bool:
        return all(self.valid(n) for n in self.nodes)

    def replace(self, node_id: str, box: Box) -> list[str]:
        """Replace a subgoal's statement; it is re-emitted and reopened. Returns the emitted ids."""
        n = self.nodes[node_id]
        self.nodes[node_id] = Node(n.var, box)
        return [node_id]

    def insert(self, var: str, box: Box) -> list[str]:
        """Add the lemma on ``var`` (a skipped step); its dependents now cite it and will be re-checked."""
        self.nodes[lemma_id(var)] = Node(var, box)
        return [lemma_id(var)]

    def decompose(self, lemmas: dict[str, Box]) -> list[str]:
        """Split a too-coarse step by inserting several lemmas below it."""
        return [i for var, box in lemmas.items() for i in self.insert(var, box)]

    def delete(self, node_id: str) -> list[str]:
        """Remove a subgoal that no other node cites (the goal cannot be deleted)."""
        if node_id == GOAL or self.dependents(node_id):
            raise ValueError(f"{node_id} is the goal or is cited by {self.dependents(node_id)}")
        del self.nodes[node_id]
        return []

    def regenerate(self, variables: set[str], lemmas: dict[str, Box]) -> list[str]:
        """Discard every lemma (proved or not) on ``variables`` and insert ``lemmas`` in their place."""
        for i in [i for i, n in self.nodes.items() if i != GOAL and n.var in variables]:
            del self.nodes[i]
        return self.decompose(lemmas)

    def proof_rows(self) -> list[dict[str, object]]:
        """The sketch as table rows (id, var, lo, hi, cites; the bounds as exact decimal strings: they outgrow int64
        on long chains): the proof that verify re-checks from scratch."""
        return [{"node": i, "var": n.var, "lo": str(n.box[0]), "hi": str(n.box[1]), "cites": list(self.cites(i))}
                for i, n in self.nodes.items()]
