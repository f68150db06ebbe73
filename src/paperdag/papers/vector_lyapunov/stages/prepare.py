"""Stage ``prepare``: draw the platoon and the per-node parameters of both network rings (procedural, no data)."""

from __future__ import annotations

from paperdag.io import write_json
from paperdag.stage import StageContext

from ..networks.model import draw_networks
from ..params import Params
from ..platoon.model import make_platoon

PLATOON_FILE = "platoon.json"
NETWORKS_FILE = "networks.json"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """platoon.json: the platoon of max(platoon.n_grid) followers (the platoon of N is its first N followers);
    networks.json: per-node parameters of the drone and microgrid rings for max(networks.n_grid) nodes."""
    p = ctx.params
    pl = make_platoon(p.platoon, p.dt, max(p.platoon.n_grid), ctx.rng)
    write_json(ctx.output(PLATOON_FILE), pl.to_json())
    write_json(ctx.output(NETWORKS_FILE), draw_networks(p.networks, ctx.rng))
    return {"n_followers": pl.n, "n_cav": int(pl.is_cav.sum())}
