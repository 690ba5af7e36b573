"""The tracer's network: a small transformer over a word's skeleton strokes and its characters.

Tokens: one per skeleton stroke (its :func:`~.features.stroke_features` through a two-layer MLP) and one per
character of the text (an embedding of the character, of its index and of its relative place i / len),
each with a type embedding; a pre-norm transformer encoder mixes them; per stroke token a linear head gives
a *progress score* (sorting the scores gives the writer's order; sigmoid(score) is trained towards the
stroke's progress in [0, 1]) and a *reverse logit* (> 0: draw the stroke the other way).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

from inkground_lib.components.derenderers.tracer.features import MAX_CHARS, N_FEATURES, VOCAB


@dataclass(frozen=True)
class NetConfig:
    """Sizes of :class:`TracerNet` (``use_text``: False ignores the word's text)."""

    d_model: int = 128
    layers: int = 3
    heads: int = 4
    ff: int = 256
    dropout: float = 0.1
    use_text: bool = True

    def as_dict(self) -> dict:
        return asdict(self)


class TracerNet(nn.Module):
    def __init__(self, cfg: NetConfig = NetConfig()):
        super().__init__()
        d = cfg.d_model
        self.cfg = cfg
        self.stroke_in = nn.Sequential(nn.Linear(N_FEATURES, d), nn.GELU(), nn.Linear(d, d))
        self.char_emb = nn.Embedding(VOCAB, d, padding_idx=0)
        self.char_pos = nn.Embedding(MAX_CHARS, d)
        self.char_rel = nn.Linear(1, d)
        self.type_emb = nn.Embedding(2, d)
        layer = nn.TransformerEncoderLayer(d, cfg.heads, cfg.ff, cfg.dropout, batch_first=True, norm_first=True,
                                           activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2))

    def forward(self, x: torch.Tensor, sm: torch.Tensor, c: torch.Tensor, cm: torch.Tensor):
        """x (B, S, F) stroke features, sm (B, S) True for real strokes, c (B, C) character ids, cm (B, C)
        True for real characters -> (score (B, S), reverse logit (B, S))."""
        S = x.shape[1]
        h = self.stroke_in(x) + self.type_emb.weight[0]
        mask = sm
        if self.cfg.use_text and c.shape[1] > 0:
            C = c.shape[1]
            idx = torch.arange(C, device=c.device)
            n = cm.sum(dim=1, keepdim=True).clamp(min=1).to(x.dtype)
            rel = (idx[None, :].to(x.dtype) / n).unsqueeze(-1)
            t = self.char_emb(c) + self.char_pos(idx)[None] + self.char_rel(rel) + self.type_emb.weight[1]
            h = torch.cat([h, t], dim=1)
            mask = torch.cat([sm, cm], dim=1)
        h = self.encoder(h, src_key_padding_mask=~mask)
        out = self.head(h[:, :S])
        return out[..., 0], out[..., 1]


def count_parameters(net: nn.Module) -> int:
    return int(sum(p.numel() for p in net.parameters()))
