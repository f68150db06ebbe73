"""The four proof searches, all with the same proposer, checker and token budget per theorem.

sketchrefine   (the paper): check open subgoals, feed the checker's errors back, edit locally (a false lemma is
               replaced, a too-coarse step is decomposed by inserting the skipped lemmas below it, a failed unused
               lemma is deleted), re-check only edited nodes, their dependents and the goal; repeat.
hilbert        (Hilbert-like recursive subtree regeneration, after Varambally et al. 2025, "Hilbert: recursively
               building formal proofs with informal reasoning"): a coarse step is decomposed recursively, but a false
               lemma makes the sketch of the subgoal above it be regenerated with its whole subtree (the whole sketch
               when that is the goal), discarding proved lemmas in it.
immutable      (immutable sketches, e.g. Draft-Sketch-Prove, Jiang et al. 2023): any failure regenerates the whole
               sketch (conditioned on all feedback so far); every subgoal is re-emitted and re-proved.
whole_proof    (whole-proof sampling, pass@k as in DeepSeek-Prover): independent whole sketches, no feedback.

Tokens are counted two ways (``sketch.n_tokens`` of the text: digits in groups of three, other runs one each):
    emitted  = what the proposer writes: the whole sketch on a fresh draw, the edited nodes on an edit ("delete s0"
               per deletion);
    read     = what each proposer call reads: the theorem statement, and for a revision (every method but
               whole_proof after its first sketch) also the sketch it revises and every error line the checker has
               returned so far (the feedback the proposer is conditioned on);
    total    = emitted + read (what one call costs a language model: its prompt and its output).
The budget caps emitted tokens: a search stops when it is solved or when the next emission would exceed it, so a
run at budget B is the prefix of the run at any larger budget and pass rate vs budget comes from one run at the
largest budget, in either count (total >= emitted, so every run solved within a total budget B <= the cap is seen).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .checker import COARSE, FALSE, Checker, unfolded
from .proposer import Feedback, Proposer
from .sketch import GOAL, EditableSketch, n_tokens

METHODS = ("sketchrefine", "hilbert", "immutable", "whole_proof")


@dataclass
class Run:
    """The outcome of one search: tokens emitted and read (when solved, the tokens it took), edit rounds, proved
    lemmas present before an edit round and how many of them kept their proof through it (reuse)."""

    sketch: EditableSketch
    solved: bool = False
    tokens: int = 0
    read: int = 0
    rounds: int = 0
    proved_before: int = 0
    preserved: int = 0
    edits: Counter = field(default_factory=Counter)


@dataclass
class Search:
    """Shared machinery: the budget, checking pending nodes, the error log and the reuse bookkeeping."""

    proposer: Proposer
    checker: Checker
    budget: int
    feedback: Feedback = field(default_factory=Feedback)
    log_tokens: int = 0  # tokens of every error line the checker has returned so far

    def context(self, revised: EditableSketch | None) -> int:
        """Tokens one proposer call reads: the statement, plus the revised sketch and the error log for a revision."""
        read = n_tokens(self.proposer.theorem.statement())
        return read if revised is None else read + revised.tokens() + self.log_tokens

    def fresh(self, feedback: Feedback) -> EditableSketch:
        t = self.proposer.theorem
        return EditableSketch.new(t, self.proposer.lemmas(list(t.lemma_vars), feedback), self.proposer.unused())

    def pay(self, run: Run, emitted: int, read: int) -> bool:
        """Spend ``emitted`` tokens (and count ``read``) if the budget allows."""
        if run.tokens + emitted > self.budget:
            return False
        run.tokens += emitted
        run.read += read
        return True

    def check(self, s: EditableSketch) -> None:
        """Check every pending node; false and coarse verdicts go into the feedback and the error log."""
        for i in s.pending():
            node = s.nodes[i]
            cited = {s.nodes[c].var: s.nodes[c].box for c in s.cites(i)}
            verdict = self.checker(s.theorem, node.var, node.box, cited)
            s.record(i, verdict)
            if verdict.status in (FALSE, COARSE):
                self.log_tokens += n_tokens(f"{i} {verdict.status}: {verdict.error}")
            if verdict.status == FALSE and i.startswith("h_"):
                self.feedback.counterexamples.setdefault(node.var, []).append(verdict.value)
            elif verdict.status == COARSE:
                self.feedback.coarse.add(node.var)

    def decompose(self, s: EditableSketch, i: str, run: Run) -> list[str]:
        """Insert lemmas on the variables a too-coarse step skipped (at least the nearest one)."""
        node = s.nodes[i]
        missing = [w for w in unfolded(s.theorem, node.var, {s.nodes[c].var for c in s.cites(i)}) if w != node.var]
        if not missing:  # a single step over budget (only with wrong premises: prepare keeps theorems whose
            run.edits["replace"] += 1  # reference steps all fit): re-emit it
            return s.replace(i, self.proposer.lemma(node.var, self.feedback)) if i != GOAL else []
        new = self.proposer.lemmas(missing, self.feedback) or {missing[0]: self.proposer.lemma(missing[0],
                                                                                               self.feedback)}
        run.edits["insert" if len(new) == 1 else "decompose"] += 1
        return s.decompose(new)

    def run(self, method: str) -> Run:
        if method == "whole_proof":
            return self._whole_proof()
        s = self.fresh(self.feedback)
        run = Run(s)
        if not self.pay(run, s.tokens(), self.context(None)):
            return run
        while True:
            self.check(run.sketch)
            if run.sketch.solved():
                run.solved = True
                return run
            before = {i: n for i, n in run.sketch.nodes.items() if i != GOAL and run.sketch.valid(i)}
            edit = {"sketchrefine": self._refine, "hilbert": self._hilbert, "immutable": self._immutable}[method]
            read = self.context(run.sketch)
            if not self.pay(run, edit(run), read):
                return run
            run.rounds += 1
            self.check(run.sketch)
            after = run.sketch.nodes
            run.proved_before += len(before)
            run.preserved += sum(i in after and after[i] is node and run.sketch.valid(i)
                                 for i, node in before.items())

    def _whole_proof(self) -> Run:
        run = Run(self.fresh(Feedback()))
        while self.pay(run, run.sketch.tokens(), self.context(None)):
            self.check(run.sketch)
            if run.sketch.solved():
                run.solved = True
                return run
            run.sketch = self.fresh(Feedback())
            run.rounds += 1
        return run

    def _immutable(self, run: Run) -> int:
        run.sketch = self.fresh(self.feedback)
        run.edits["regenerate"] += 1
        return run.sketch.tokens()

    def _refine(self, run: Run) -> int:
        s, emitted, deletions = run.sketch, [], 0
        for i in s.failed():
            node = s.nodes[i]
            if not i.startswith("h_") and i != GOAL:
                s.delete(i)
                run.edits["delete"] += 1
                deletions += n_tokens(f"delete {i}")
            elif node.status == FALSE:
                emitted += s.replace(i, self.proposer.lemma(node.var, self.feedback))
                run.edits["replace"] += 1
            else:
                emitted += self.decompose(s, i, run)
        return s.tokens(emitted) + deletions

    def _hilbert(self, run: Run) -> int:
        s, emitted = run.sketch, []
        failed = s.failed()
        local = [i for i in failed if s.nodes[i].status == COARSE and (i == GOAL or i.startswith("h_"))]
        parents = {i: s.dependents(i) for i in failed if i not in local}
        if any(not ps or GOAL in ps for ps in parents.values()):
            return self._immutable(run)  # a false subgoal of the goal's own sketch: regenerate the whole sketch
        for i in local:
            emitted += self.decompose(s, i, run)
        for ps in parents.values():
            region = set().union(*(s.theorem.ancestors(s.nodes[p].var) for p in ps if p in s.nodes))
            new = self.proposer.lemmas([v for v in s.theorem.lemma_vars if v in region], self.feedback)
            emitted = [e for e in emitted if s.nodes.get(e) is not None and s.nodes[e].var not in region]
            emitted += s.regenerate(region, new)
            run.edits["regenerate_subtree"] += 1
        return s.tokens(emitted)
