"""A one-stage pipeline whose stage needs the custom Ray resource ``special_node`` (multi-node test)."""

import os

from paperdag.dag import Pipeline, Resources, Stage
from paperdag.io import write_json
from paperdag.params import ParamsModel
from paperdag.claims import write_metrics
from paperdag.common.verdicts import check, exact


class Params(ParamsModel):
    seed: int


def where(ctx) -> dict[str, float]:
    import ray

    write_json(ctx.out / "node.json", {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()})
    write_metrics(ctx.out, {}, [check("ran", "the stage ran", True, True, exact(True, "it ran", basis="fixed set"))])
    return {}


PIPELINE = Pipeline(
    slug="toy_cluster", title="Toy cluster placement", params_model=Params, package="toy_pipeline",
    stages=(Stage("evaluate", "evaluate", "cluster:where", outputs=("node.json", "metrics.json"),
                  resources=Resources(cpus=1, custom={"special_node": 1})),),
)
