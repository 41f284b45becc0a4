"""A deeper audio encoder or decoder for a trained model, starting where the model is.

New transformer layers are appended to ticktock's own audio encoder (or interleaved through the decoder) with
their output projections (attention's `out_proj` / `o_proj`, the MLP's `linear2` / `down_proj`) at zero: in a
pre-norm layer both branches then add nothing, so each new layer is the identity and the deepened model encodes,
and answers, exactly as before. Training moves the zeros first (they are the only weights with a gradient at the
start), then the rest of the new layers. This is how a continued stage gets more capacity to hear, or to make
sense of what it heard (retraining plan: the model is a fraction of the 60 MB cap), without starting over.
"""

from __future__ import annotations

from torch import nn

from .audio_encoder import AudioEncoder
from .config import DecoderConfig
from .duplex import DuplexLM
from .transformer import Block


def identity_layer(like: nn.TransformerEncoderLayer) -> nn.TransformerEncoderLayer:
    """A fresh pre-norm encoder layer of `like`'s shape, on its device and dtype, whose output is its input."""
    width = like.self_attn.embed_dim
    layer = nn.TransformerEncoderLayer(width, like.self_attn.num_heads, like.linear1.out_features, dropout=0.0,
                                       batch_first=True, norm_first=True)
    for p in (layer.self_attn.out_proj.weight, layer.self_attn.out_proj.bias, layer.linear2.weight, layer.linear2.bias):
        nn.init.zeros_(p)
    ref = like.linear1.weight
    return layer.to(device=ref.device, dtype=ref.dtype)


def deepen_audio_encoder(model: DuplexLM, layers: int) -> int:
    """Append identity layers to `model`'s audio encoder until it has `layers`; returns how many were added.

    The model's config follows (`cfg.audio.layers`), so a saved model loads at its new depth."""
    encoder = model.audio
    if not isinstance(encoder, AudioEncoder):
        raise ValueError(f"audio_layers deepens ticktock's own audio encoder; this model ({model.layout}) has an "
                         "audio tower: leave audio_layers unset")
    stack = encoder.blocks.layers
    if layers < len(stack):
        raise ValueError(f"audio_layers {layers}: the model's audio encoder already has {len(stack)} layers "
                         "(layers are only added)")
    added = layers - len(stack)
    for _ in range(added):
        stack.append(identity_layer(stack[-1]))
    encoder.blocks.num_layers = layers
    encoder.cfg.layers = layers  # the model's own config object (`model.cfg.audio`)
    return added


def identity_block(cfg: DecoderConfig, like: Block) -> Block:
    """A fresh decoder block of `cfg`, on `like`'s device and dtype, whose output is its input (its cache layer is
    set where it is placed)."""
    block = Block(cfg, 0)
    for p in (block.self_attn.o_proj.weight, block.mlp.down_proj.weight):
        nn.init.zeros_(p)
    ref = like.mlp.down_proj.weight
    return block.to(device=ref.device, dtype=ref.dtype)


def deepen_decoder(model: DuplexLM, layers: int) -> int:
    """Interleave identity blocks through `model`'s decoder until it has `layers`; returns how many were added.

    The new blocks are spread evenly, each after a group of the old ones (6 -> 10: after old layers 1, 2, 4 and 5),
    so that they can work on the middle of the stack, where heard words become meaning, not only on its last
    layer's output. Every block's attention is given its new place as its cache layer, and the config follows
    (`cfg.decoder.num_hidden_layers`), so caches, engines and a saved model all take the new depth."""
    cfg, stack = model.lm.cfg, model.lm.model.layers
    old = len(stack)
    if layers < old:
        raise ValueError(f"decoder_layers {layers}: the model's decoder already has {old} layers "
                         "(layers are only added)")
    added = layers - old
    after = [((k + 1) * old - 1) // added for k in range(added)]  # the old layer each new block follows
    blocks = []
    for i, block in enumerate(stack):
        blocks += [block, *(identity_block(cfg, block) for _ in range(after.count(i)))]
    for i, block in enumerate(blocks):
        block.self_attn.layer = i
    model.lm.model.layers = nn.ModuleList(blocks)
    cfg.num_hidden_layers = layers
    return added


__all__ = ["deepen_audio_encoder", "deepen_decoder", "identity_block", "identity_layer"]
