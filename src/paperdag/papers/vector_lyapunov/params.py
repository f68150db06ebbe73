"""Parameters of the vector Lyapunov-Razumikhin reproduction (validated from params.yaml)."""

from __future__ import annotations

from pydantic import Field

from paperdag.params import ParamsModel


class Params(ParamsModel):
    seed: int = 0
    # platoon (procedural): followers, delay, physics, domain
    n_grid: list[int] = Field(default=[2, 4, 8, 16], min_length=1)
    tau: int = Field(default=1, ge=1, le=3)
    dt: float = Field(default=0.1, gt=0, le=0.5)
    cav_period: int = Field(default=2, ge=1)
    alpha_range: tuple[float, float] = (0.5, 0.9)
    beta_range: tuple[float, float] = (0.6, 1.0)
    v_max: float = Field(default=30.0, gt=0)
    s_go: float = Field(default=35.0, gt=0)
    s_st: float = Field(default=5.0, ge=0)
    v_star: float = Field(default=15.0, gt=0)
    s_bound: float = Field(default=2.0, gt=0)
    v_bound: float = Field(default=1.5, gt=0)
    w_bound: float = Field(default=0.3, ge=0)
    cav_gains: tuple[float, float, float] = (0.5, 1.0, 0.3)
    # certificate and controller
    cert_hidden: int = Field(default=0, ge=0)
    cert_feat: int = Field(default=8, ge=1)
    cert_eps: float = Field(default=0.05, gt=0)
    rho: float = Field(default=0.995, gt=0, lt=1)
    policy_hidden: int = Field(default=16, ge=1)
    u_scale: float = Field(default=1.0, gt=0)
    # CEGIS training
    lr: float = Field(default=3e-3, gt=0)
    batch: int = Field(default=1024, ge=16)
    cegis_rounds: int = Field(default=4, ge=1)
    steps_per_round: int = Field(default=300, ge=1)
    margin: float = Field(default=0.03, ge=0)
    lambda_imit: float = Field(default=1.0, ge=0)
    lambda_gamma: float = Field(default=0.01, ge=0)
    lambda_shape: float = Field(default=0.0, ge=0)
    c0_safety: float = Field(default=0.95, gt=0, le=1)
    cegis_verify_per_round: int = Field(default=2, ge=1)
    cegis_cells: int = Field(default=2000, ge=1)
    cegis_time: float = Field(default=3.0, gt=0)
    cegis_keep: int = Field(default=64, ge=1)
    # uncertified neural controller (performance-only BPTT)
    perf_steps: int = Field(default=60, ge=1)
    perf_horizon: int = Field(default=80, ge=2)
    # monolithic baseline
    mono_n_grid: list[int] = Field(default=[2, 4, 8, 16], min_length=1)
    mono_hidden: int = Field(default=32, ge=1)
    mono_feat: int = Field(default=16, ge=1)
    mono_steps: int = Field(default=300, ge=1)
    # verification
    max_cells: int = Field(default=40000, ge=1)
    max_depth: int = Field(default=40, ge=1)
    max_milp: int = Field(default=40, ge=0)
    milp_time: float = Field(default=10.0, gt=0)
    vehicle_time: float = Field(default=60.0, gt=0)
    mono_timeout: float = Field(default=30.0, gt=0)
    stop_after_cex: int = Field(default=10, ge=0)
    # network systems (drone formation, droop microgrid): rings of heterogeneous 2-state subsystems
    net_n_grid: list[int] = Field(default=[4, 8, 16, 32], min_length=1)
    net_taus: list[int] = Field(default=[1, 2, 3], min_length=1)
    net_tau_n: int = Field(default=8, ge=3)
    net_w_bound: float = Field(default=0.05, ge=0)
    drone_kp_range: tuple[float, float] = (0.3, 0.5)
    drone_kv_range: tuple[float, float] = (0.8, 1.2)
    drone_kc: float = Field(default=0.02, gt=0)
    drone_box: tuple[float, float] = (1.0, 1.0)
    grid_b0: float = Field(default=0.5, gt=0)
    grid_b: float = Field(default=0.05, gt=0)
    grid_inertia_range: tuple[float, float] = (0.8, 1.2)
    grid_damping_range: tuple[float, float] = (1.0, 1.4)
    grid_box: tuple[float, float] = (0.5, 0.5)
    net_rho: float = Field(default=0.995, gt=0, lt=1)
    net_lr: float = Field(default=1e-3, gt=0)
    net_rounds: int = Field(default=4, ge=0)
    net_steps: int = Field(default=80, ge=1)
    net_cegis_milps: int = Field(default=4, ge=1)
    net_cex_weight: int = Field(default=8, ge=1)
    net_margin: float = Field(default=0.02, ge=0)
    net_max_cells: int = Field(default=1, ge=1)
    net_milp_time: float = Field(default=20.0, gt=0)
    net_subsystem_time: float = Field(default=60.0, gt=0)
    # evaluation
    sim_steps: int = Field(default=300, ge=10)
    n_sims: int = Field(default=8, ge=1)
    falsify_samples: int = Field(default=20000, ge=1)
    falsify_steps: int = Field(default=30, ge=0)
