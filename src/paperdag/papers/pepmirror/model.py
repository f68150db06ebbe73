"""E(3)-equivariant denoiser with polar vector channels (EGNN/GVP-style) and optional axial (pseudo)vectors.

Nodes are residues at their CA. Every node carries vector channels initialised with its N-CA, C-CA and CB-CA
offsets (noisy for the peptide); pocket nodes also carry residue-type scalars and stay fixed (only peptide nodes
are updated). Polar layers use only relative positions, dot products (including the Gram matrix of two nodes'
frames and its determinant, see frame_gram; products of two pseudoscalars, see side_hand) and linear channel
mixing, so f(Qx) = Q f(x) for every orthogonal Q, reflections included. The axial variant adds, after each layer,
    V <- V + W_ax [ v_c x v_c+1 ,  (v_c . v_c+1)(v_c x v_c+1) ]_c      (W_ax bias-free, v = V / rms|V|),
cross products being pseudovectors: (Pa) x (Pb) = det(P) P (a x b), rotation-equivariant but not
reflection-equivariant, so the network can represent absolute chirality.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

N_RBF = 16
N_OFFSET = 7  # sequence offsets -3..3 without 0, plus "further apart or pocket"
POS_FEATS = 5
TIME_FEATS = 8
N_FRAME = 10  # frame_gram features per edge
N_SIDE = 1  # side_hand features per edge
FRAME_SCALE = 1.5  # A: bond-length scale of the frame vectors


def rbf(d: Tensor, d_max: float = 20.0) -> Tensor:
    """Gaussian radial basis exp(-((d - mu_k) / sigma)^2), mu_k evenly spaced on [0, d_max]."""
    mu = torch.linspace(0.0, d_max, N_RBF, device=d.device, dtype=d.dtype)
    return torch.exp(-(((d[..., None] - mu) / (d_max / N_RBF)) ** 2))


def time_features(t: Tensor) -> Tensor:
    """Sinusoidal embedding [sin(2^k pi t), cos(2^k pi t)]_{k<4} of the diffusion time t in [0, 1]."""
    f = (2.0 ** torch.arange(TIME_FEATS // 2, device=t.device, dtype=t.dtype)) * torch.pi
    return torch.cat([torch.sin(t[:, None] * f), torch.cos(t[:, None] * f)], -1)


def cross_channels(v: Tensor) -> Tensor:
    """Axial features of vector channels v [..., C, 3]: cross products a_c = v_c x v_c+1 (cyclic) and commutators
    (v_c . v_c+1) a_c, concatenated on the channel axis -> [..., 2C, 3]."""
    nxt = torch.roll(v, -1, dims=-2)
    a = torch.cross(v, nxt, dim=-1)
    return torch.cat([a, (v * nxt).sum(-1, keepdim=True) * a], dim=-2)


def frame_gram(vp: Tensor, v: Tensor) -> Tensor:
    """Invariants relating two nodes' frames F = first 3 vector channels (N, C, CB offsets at the input):
    G_ij = F_i^T F_j / FRAME_SCALE^2 (9 numbers) and tanh(det G_ij); vp [B,P,C,3], v [B,M,C,3] -> [B,P,M,10].

    det G_ij = det F_i det F_j is a product of two pseudoscalars (the two chirality volumes), so it is a true
    scalar: unchanged by every rotation and reflection. It tells a polar network whether residue i has the same hand
    as node j (a pocket residue: L on a native target) without any absolute notion of hand."""
    fi, fj = vp[:, :, :3] / FRAME_SCALE, v[:, :, :3] / FRAME_SCALE
    g = torch.einsum("bpcx,bmdx->bpmcd", fi, fj)
    det = (g[..., 0, 0] * (g[..., 1, 1] * g[..., 2, 2] - g[..., 1, 2] * g[..., 2, 1])
           - g[..., 0, 1] * (g[..., 1, 0] * g[..., 2, 2] - g[..., 1, 2] * g[..., 2, 0])
           + g[..., 0, 2] * (g[..., 1, 0] * g[..., 2, 1] - g[..., 1, 1] * g[..., 2, 0]))  # cofactors: smooth
    return torch.cat([g.flatten(-2).tanh(), det.tanh()[..., None]], -1)


def side_hand(vp: Tensor, v: Tensor, unit: Tensor) -> Tensor:
    """s_ij = tanh((n_i . r^_ij) det F_j), n_i = F_i1 x F_i2 the normal of residue i's N-CA-C plane (frames as
    in frame_gram); vp [B,P,C,3], v [B,M,C,3], unit r^_ij [B,P,M,3] -> [B,P,M,1].

    n_i . r^_ij (on which side of i's plane node j lies) and det F_j (j's hand) are both pseudoscalars, so s_ij is a
    true scalar. Unlike det G_ij = det F_i det F_j it does not vanish when residue i is flat: it tells a polar
    network on which side of a still planar residue the native-hand pocket lies, so that a coefficient s_ij on
    r^_ij moves its CB towards the pocket's hand."""
    fi, fj = vp[:, :, :3] / FRAME_SCALE, v[:, :, :3] / FRAME_SCALE
    normal = torch.cross(fi[:, :, 0], fi[:, :, 1], dim=-1)
    det_j = (torch.cross(fj[:, :, 0], fj[:, :, 1], dim=-1) * fj[:, :, 2]).sum(-1)
    return (torch.einsum("bpx,bpmx->bpm", normal, unit) * det_j[:, None]).tanh()[..., None]


class EquivariantLayer(nn.Module):
    """One message-passing update of peptide nodes (scalars h, vectors V) from all nodes."""

    def __init__(self, hidden: int, channels: int, axial: bool):
        super().__init__()
        edge_in = 2 * hidden + N_RBF + N_OFFSET + 1 + 2 * channels + N_FRAME + N_SIDE
        self.edge = nn.Sequential(nn.Linear(edge_in, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.node = nn.Sequential(nn.Linear(2 * hidden + channels + N_FRAME, hidden), nn.SiLU(),
                                  nn.Linear(hidden, hidden))
        self.coef = nn.Linear(hidden, 2 * channels)
        self.gate = nn.Linear(hidden, channels)
        self.mix = nn.Linear(channels, channels, bias=False)
        self.axial = nn.Linear(2 * channels, channels, bias=False) if axial else None

    def forward(self, h: Tensor, v: Tensor, x: Tensor, edge_attr: Tensor, edge_mask: Tensor, n_pep: int
                ) -> tuple[Tensor, Tensor]:
        """h [B,M,H], v [B,M,C,3], x [B,M,3]; edges from all M senders to the first n_pep receivers.

        m_ij = phi_e(h_i, h_j, rbf|r_ij|, e_ij, V_i.r^_ij, V_j.r^_ij, frame_gram(V_i, V_j), side_hand_ij);
        h_i += phi_h(h_i, mean_j m_ij, |V_i|, frame_gram(V_i, V_i));
        V_ic += mean_j (a_ijc r^_ij + b_ijc V_jc);  V_i += sigmoid(g(h_i)) * W_mix V_i;  [+ axial term].
        """
        hp, vp, xp = h[:, :n_pep], v[:, :n_pep], x[:, :n_pep]
        rel = x[:, None] - xp[:, :, None]  # [B,P,M,3]
        dist = rel.norm(dim=-1)
        unit = rel / (dist[..., None] + 1e-6)
        dots_i = torch.einsum("bpcx,bpmx->bpmc", vp, unit)
        dots_j = torch.einsum("bmcx,bpmx->bpmc", v, unit)
        B, P, M = dist.shape
        feats = torch.cat([hp[:, :, None].expand(B, P, M, -1), h[:, None].expand(B, P, M, -1), rbf(dist),
                           edge_attr, dots_i, dots_j, frame_gram(vp, v), side_hand(vp, v, unit)], -1)
        w = edge_mask[..., None]
        msg = self.edge(feats) * w
        count = w.sum(2).clamp(min=1.0)
        own = frame_gram(vp[:, :, None].flatten(0, 1), vp[:, :, None].flatten(0, 1)).view(B, P, -1)
        hp = hp + self.node(torch.cat([hp, msg.sum(2) / count, vp.norm(dim=-1), own], -1))
        coef = self.coef(msg) * w
        c = v.shape[2]
        vec = torch.einsum("bpmc,bpmx->bpcx", coef[..., :c], unit) + torch.einsum("bpmc,bmcx->bpcx", coef[..., c:], v)
        vp = vp + vec / count[..., None]
        vp = vp + torch.sigmoid(self.gate(hp))[..., None] * self.mix(vp.transpose(-1, -2)).transpose(-1, -2)
        if self.axial is not None:
            vn = vp / (vp.pow(2).sum(-1).mean(-1, keepdim=True)[..., None] + 1e-6).sqrt()
            vp = vp + self.axial(cross_channels(vn).transpose(-1, -2)).transpose(-1, -2)
        return torch.cat([hp, h[:, n_pep:]], 1), torch.cat([vp, v[:, n_pep:]], 1)


class Denoiser(nn.Module):
    """eps_theta(peptide atoms, pocket, t): predicts the DDPM noise of the peptide's N, CA, C, CB coordinates."""

    def __init__(self, hidden: int, channels: int, n_layers: int, axial: bool):
        super().__init__()
        self.channels, self.axial = channels, axial
        self.pep_embed = nn.Linear(POS_FEATS + TIME_FEATS, hidden)
        self.pocket_embed = nn.Linear(20, hidden)
        self.layers = nn.ModuleList(EquivariantLayer(hidden, channels, axial) for _ in range(n_layers))
        self.out = nn.Linear(channels, 4, bias=False)

    @classmethod
    def from_config(cls, config: dict) -> Denoiser:
        """The denoiser a train stage's config.json describes (hidden, vec_channels, n_layers, axial)."""
        return cls(config["hidden"], config["vec_channels"], config["n_layers"], config["axial"])

    def forward(self, pep_x: Tensor, pep_mask: Tensor, pos_feat: Tensor, t: Tensor, pocket_x: Tensor,
                pocket_aa: Tensor, pocket_mask: Tensor) -> Tensor:
        """pep_x [B,P,4,3] (A, noisy), pos_feat [B,P,5], t [B] in [0,1], pocket_x [B,K,4,3], pocket_aa [B,K]
        -> eps_hat [B,P,4,3] (zero at padded residues)."""
        B, P = pep_mask.shape
        C = self.channels
        ca_p, ca_k = pep_x[:, :, 1], pocket_x[:, :, 1]
        x = torch.cat([ca_p, ca_k], 1)
        v_p = torch.zeros(B, P, C, 3, dtype=pep_x.dtype, device=pep_x.device)
        v_p[:, :, :3] = (pep_x[:, :, [0, 2, 3]] - ca_p[:, :, None]) * pep_mask[..., None, None]
        v_k = torch.zeros(B, pocket_x.shape[1], C, 3, dtype=pep_x.dtype, device=pep_x.device)
        v_k[:, :, :3] = (pocket_x[:, :, [0, 2, 3]] - ca_k[:, :, None]) * pocket_mask[..., None, None]
        v = torch.cat([v_p, v_k], 1)
        tf = time_features(t)[:, None].expand(B, P, -1)
        h_p = self.pep_embed(torch.cat([pos_feat, tf], -1))
        h_k = self.pocket_embed(nn.functional.one_hot(pocket_aa, 20).to(pep_x.dtype))
        h = torch.cat([h_p, h_k], 1)
        mask = torch.cat([pep_mask, pocket_mask], 1)
        edge_mask = pep_mask[:, :, None] * mask[:, None, :]
        idx = torch.arange(P, device=pep_x.device)
        edge_mask[:, idx, idx] = 0.0
        edge_attr = offset_features(P, pocket_x.shape[1], pep_x.device, pep_x.dtype).expand(B, -1, -1, -1)
        for layer in self.layers:
            h, v = layer(h, v, x, edge_attr, edge_mask, P)
        eps = self.out(v[:, :P].transpose(-1, -2)).transpose(-1, -2)  # [B,P,4,3]
        return eps * pep_mask[..., None, None]


def offset_features(n_pep: int, n_pocket: int, device: torch.device | str, dtype: torch.dtype) -> Tensor:
    """Edge attributes [1,P,P+K,N_OFFSET+1]: one-hot sequence offset j-i in {-3..-1,1..3} or 'other' for
    peptide pairs, and a pocket-sender flag."""
    out = torch.zeros(1, n_pep, n_pep + n_pocket, N_OFFSET + 1, device=device, dtype=dtype)
    i = torch.arange(n_pep, device=device)
    off = i[None, :] - i[:, None]
    slot = torch.where(off.abs() <= 3, off + 3 - (off > 0).long(), torch.full_like(off, 6))
    out[0, :, :n_pep, :N_OFFSET] = nn.functional.one_hot(slot, N_OFFSET).to(dtype)
    out[0, :, n_pep:, N_OFFSET] = 1.0
    return out
