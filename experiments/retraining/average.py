"""A point between two stages of one base, weight by weight: (1 − t) · A + t · B, saved as a model folder.

    python experiments/retraining/average.py A_DIR B_DIR T OUT_DIR

Two continuations of one model usually lie in one basin; a point between them can keep some of each (the shipped
side channel is such a midpoint, docs/side-channel-training.md). Score OUT_DIR with `evaluate.sh`. Where one has a
deeper audio encoder (`--set audio_layers=N`), the other is deepened first with identity layers (`model.deepen`):
the same function, so the midpoint of a stage and the model it continued halves the new layers' outputs.
"""

from __future__ import annotations

import sys

import torch

from ticktock.model import load_model, save_model
from ticktock.model.deepen import deepen_audio_encoder
from ticktock.train.side_channel.merge import interpolate


def main(a: str, b: str, t: str, out: str) -> None:
    """Write (1 - t) * A + t * B to `out` with A's tokenizer and config."""
    weight = float(t)
    model_a, tokenizer = load_model(a, "cpu", torch.float32)
    model_b, _ = load_model(b, "cpu", torch.float32)
    depth = max(model_a.cfg.audio.layers, model_b.cfg.audio.layers)
    for m in (model_a, model_b):
        deepen_audio_encoder(m, depth)
    model_a.load_state_dict(interpolate(model_a, model_b, weight))
    save_model(model_a, tokenizer, out)
    print(f"{out}: {1 - weight:g} × {a} + {weight:g} × {b}")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
