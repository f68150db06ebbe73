"""Recording papers' stages in dvc.lock in one write.

``dvc commit -f <stage>...`` records each stage's deps, params and outs as they are now, but rewrites the whole
dvc.lock (a round-trip YAML parse and dump) once per stage: at the repository's ~250 stages that is ~16 s a stage, so
committing one paper's default run took from 1.5 minutes (5 stages) to 9 minutes (19 stages). ``commit_stages`` does
what DVC's commit does for each stage (``Stage.save``: hash deps and outs, read params; ``Stage.commit``: its outs
into DVC's cache where they are cached, none of ours are) through DVC's own API, then writes dvc.lock once with all
of them (``ProjectFile.dump_stages``, the call DVC's commit makes per stage). The entries are DVC's own, so
``dvc status`` and ``dvc repro`` read them as if ``dvc commit`` had written them.
"""

from __future__ import annotations

from pathlib import Path

from paperdag.dvcgen import dvc_stage_name
from paperdag.errors import PaperdagError
from paperdag.params import read_params_file
from paperdag.runs import resolve_papers


def stage_names(root: Path, papers: list[str]) -> list[str]:
    """The DVC stage names of ``papers`` (``all`` or none named: every paper in params.yaml), in declaration order."""
    pipelines = resolve_papers(papers or ["all"], read_params_file(root / "params.yaml"))
    return [dvc_stage_name(p.slug, s.name) for p in pipelines for s in p.order()]


def commit_stages(root: Path, names: list[str]) -> None:
    """Record the stages ``names`` of dvc.yaml in dvc.lock as ``dvc commit -f`` would, writing dvc.lock once.

    A stage whose outputs do not exist yet (the paper was not run with its default profile here) is one line naming
    it and the run that makes them; dvc.lock is then left as it was.
    """
    from dvc.exceptions import DvcException
    from dvc.repo import Repo, lock_repo

    with Repo(str(root)) as repo, lock_repo(repo):
        by_name = {stage.name: stage for stage in repo.index.stages}  # dvc.yaml and dvc.lock parsed once
        missing = [name for name in names if name not in by_name]
        if missing:
            raise PaperdagError(f"dvc.yaml has no stage {missing[0]!r}: run `paperdag dvc --write`")
        stages = [by_name[name] for name in names]
        for stage in stages:
            try:
                stage.save()
                stage.commit()
            except DvcException as e:
                paper = stage.name.partition("-")[0]
                raise PaperdagError(f"cannot record {stage.name} in dvc.lock: {str(e).splitlines()[0]} (run "
                                    f"`paperdag run {paper}` first)") from None
        if stages:
            stages[0].dvcfile.dump_stages(stages, update_pipeline=False)
