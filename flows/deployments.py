"""``paperdag serve``: Prefect deployments with cron schedules, read from a config file (schedules.yaml)::

    deployments:
      - name: nightly-all
        papers: [all]
        cron: "0 3 * * *"
        profile: default

Serving needs a Prefect API: run ``prefect server start`` and set ``PREFECT_API_URL=http://127.0.0.1:4200/api``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from paperdag.errors import ParamsError, UsageError
from paperdag.dag import get_pipeline


class DeploymentSpec(BaseModel):
    """One scheduled deployment of the papers flow."""

    model_config = ConfigDict(extra="forbid")
    name: str
    papers: list[str]
    cron: str
    profile: str = "default"
    timezone: str = "UTC"
    ray_address: str | None = None


def load_specs(config: Path) -> list[DeploymentSpec]:
    """Parse and validate the schedules file (one-line errors), checking every paper name."""
    try:
        raw = yaml.safe_load(Path(config).read_text()) or {}
        specs = [DeploymentSpec(**d) for d in raw.get("deployments", [])]
    except FileNotFoundError:
        raise ParamsError(f"{config}: file not found") from None
    except (yaml.YAMLError, ValidationError, TypeError) as e:
        raise ParamsError(f"{config}: invalid deployments ({str(e).splitlines()[0]})") from None
    if not specs:
        raise ParamsError(f"{config}: no deployments listed")
    for spec in specs:
        for name in spec.papers:
            if name != "all":
                get_pipeline(name)
    return specs


def build_deployments(config: Path) -> list[Any]:
    """A Prefect deployment (``RunnerDeployment``) per spec, with its cron schedule and flow parameters."""
    from prefect.schedules import Cron

    from flows.papers import run_papers

    return [
        run_papers.to_deployment(
            name=spec.name, schedule=Cron(spec.cron, timezone=spec.timezone),
            parameters={"papers": spec.papers, "profile": spec.profile, "ray_address": spec.ray_address,
                        "trigger": "schedule"},
            tags=[*(f"paper:{p}" for p in spec.papers), f"profile:{spec.profile}", "trigger:schedule"],
        )
        for spec in load_specs(config)
    ]


def require_api() -> str:
    """The configured Prefect API URL; a one-line UsageError when there is none (serving against the temporary
    API a bare run starts would register schedules nothing keeps)."""
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    if not url:
        raise UsageError("paperdag serve needs a Prefect API: run `prefect server start --host 127.0.0.1` and set "
                         "PREFECT_API_URL=http://127.0.0.1:4200/api")
    from flows.papers import check_api

    check_api(url)
    return url


def serve_deployments(config: Path) -> None:
    """Register the deployments with the Prefect API and serve them until interrupted."""
    require_api()
    deployments = build_deployments(config)
    from prefect import serve

    serve(*deployments)
