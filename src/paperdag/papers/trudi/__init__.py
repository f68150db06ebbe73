"""TruDi: trust-region diffusion policies for on-policy RL with massively parallel simulation (ICML 2026 submission).

Claim under test: a diffusion policy trained on-policy (PPO surrogate, GAE) with a KL trust region over the whole
denoising chain trains stably where ratio clipping alone does not, captures multimodal action distributions, and is
on par with Gaussian PPO on standard tasks (paper: 4 massively parallel benchmarks, 73 tasks, gains on humanoids).

Methods: TruDi, the chain KL sum_t ||mu_old,t - mu_new,t||^2 / 2 sigma_t^2 <= epsilon enforced by projecting the step
means (trust_region.py; projection layers of Otto et al. 2021, ICLR) on a DDPM-style chain policy (policies.py; Ho et
al. 2020). Baselines (ppo.py): Gaussian PPO (Schulman et al. 2017), DPPO (Ren et al. 2024: ratio clipping per
denoising step, no trust region), and the same projection on the final denoising step only; the competence ladder:
the zero- and random-action policies, a scripted controller per simulator (scripted.py: Jacobian-transpose P control,
energy swing-up, the scripted route split) and a static linear controller tuned by random search (controller.py;
ARS V1, Mania et al. 2018) with the methods' episode budget. TruDi's epsilon in the main comparison is Gaussian PPO's per-update KL.
The seeds of a configuration train as one seed-batched computation (nets.py: parameters with a leading seed axis,
per-seed Adam and gradient clipping; seed i's run is the same at any seed count).

Data: procedural only (envs.py): batched torch simulators of a point-mass detour whose two routes are both optimal
(a congestion game over the batch), pendulum swing-up and a 2-link reacher, thousands of environments per step call.
The prepare stage records their specs, the trivial policies' returns, the detour's scripted one-sided and split
returns and a content hash in specs.json.
"""
