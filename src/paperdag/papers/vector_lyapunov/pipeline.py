"""DAG of the vector Lyapunov-Razumikhin reproduction (cheap to import: stage functions are named as strings)."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

PLATOON = ("n_grid", "tau", "dt", "cav_period", "alpha_range", "beta_range", "v_max", "s_go", "s_st", "v_star",
           "s_bound", "v_bound", "w_bound", "cav_gains")
ARCH = ("cert_hidden", "cert_feat", "cert_eps", "rho", "policy_hidden", "u_scale")
CEGIS = ARCH + ("lr", "batch", "cegis_rounds", "steps_per_round", "margin", "lambda_imit", "lambda_gamma",
                "lambda_shape", "c0_safety", "cegis_verify_per_round", "cegis_cells", "cegis_time", "cegis_keep")
BUDGET = ("max_cells", "max_depth", "max_milp", "milp_time", "vehicle_time", "stop_after_cex")
CERT_FILES = ("weights.safetensors", "meta.json", "cells.parquet", "counterexamples.parquet", "summary.json")
# network systems' keys; "dt" first, since it is shared with PLATOON
SYSTEM_KEYS = ("dt", "net_w_bound", "drone_kp_range", "drone_kv_range", "drone_kc", "drone_box", "grid_b0",
               "grid_b", "grid_inertia_range", "grid_damping_range", "grid_box")
NET_TRAIN = SYSTEM_KEYS + ("net_n_grid", "net_taus", "net_tau_n", "cert_feat", "cert_eps", "net_rho", "net_lr",
                           "net_rounds", "net_steps", "net_cegis_milps", "net_cex_weight", "batch", "net_margin",
                           "lambda_gamma", "net_milp_time", "cegis_keep")
NET_VERIFY = SYSTEM_KEYS + ("net_n_grid", "net_taus", "net_tau_n", "net_max_cells", "max_depth", "max_milp",
                            "net_milp_time", "net_subsystem_time", "stop_after_cex")
ONE = Resources(cpus=1)
SYSTEMS = ("drones", "microgrid")

PIPELINE = Pipeline(
    slug="vector_lyapunov",
    title="Neural vector Lyapunov-Razumikhin certificates for delayed interconnected systems",
    params_model=Params,
    reverify="certify:reverify",
    stages=(
        Stage("prepare", "prepare", "stages:prepare", params=PLATOON + SYSTEM_KEYS[1:] + ("net_n_grid",),
              outputs=("platoon.json", "networks.json"), resources=ONE),
        *(Stage(f"train_{system}", "train", f"netstages:train_{system}", upstream=("prepare",), params=NET_TRAIN,
                outputs=("certificates", "train.json"), resources=ONE) for system in SYSTEMS),
        *(Stage(f"verify_{system}", "verify", f"netstages:verify_{system}", upstream=("prepare", f"train_{system}"),
                params=NET_VERIFY, outputs=("certificates", "summary.json", "lmi.json"), resources=ONE)
          for system in SYSTEMS),
        Stage("train_reach", "train", "stages:train_reach", upstream=("prepare",), params=CEGIS,
              outputs=("weights.safetensors", "train.json"), resources=ONE),
        Stage("train_full", "train", "stages:train_full", upstream=("prepare",), params=CEGIS,
              outputs=("weights.safetensors", "train.json"), resources=ONE),
        Stage("train_uncert", "train", "stages:train_uncert", upstream=("prepare",),
              params=("n_grid", "policy_hidden", "u_scale", "lr", "perf_steps", "perf_horizon"),
              outputs=("policy.pt",), resources=ONE),
        Stage("train_monolithic", "train", "stages:train_monolithic", upstream=("prepare", "train_reach"),
              params=("mono_n_grid", "mono_hidden", "mono_feat", "mono_steps", "cert_eps", "rho", "lr", "batch",
                      "margin", "lambda_gamma"),
              outputs=("mono.pt",), resources=ONE),
        Stage("verify", "verify", "stages:verify_reach", upstream=("prepare", "train_reach"), params=BUDGET,
              outputs=CERT_FILES, resources=ONE),
        Stage("verify_full", "verify", "stages:verify_full", upstream=("prepare", "train_full"), params=BUDGET,
              outputs=CERT_FILES, resources=ONE),
        Stage("verify_monolithic", "verify", "stages:verify_monolithic",
              upstream=("prepare", "train_reach", "train_monolithic"),
              params=("mono_n_grid", "mono_hidden", "mono_feat", "cert_eps", "rho", "max_cells", "max_depth",
                      "max_milp", "milp_time", "mono_timeout", "stop_after_cex"),
              outputs=("monolithic.json",), resources=ONE),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("train_uncert", "verify", "verify_full", "verify_monolithic",
                        *(f"verify_{system}" for system in SYSTEMS)),
              params=("n_grid", "policy_hidden", "u_scale", "sim_steps", "n_sims", "falsify_samples",
                      "falsify_steps", "net_n_grid", "net_taus", "net_tau_n"),
              outputs=("metrics.json", "scaling.parquet", "monolithic.parquet", "control.parquet",
                       "verification_scaling.png", "control_performance.png", "network_certificates.png"),
              plots=("verification_scaling.png", "control_performance.png", "network_certificates.png"),
              resources=ONE),
    ),
)
