"""What a deeper audio encoder costs the shipped model on a CPU: ms to encode one 1 s chunk (one core) and the size
in fp16, at the shipped depth and with identity layers added (`model.deepen`; `--set audio_layers=N`).

Usage: python experiments/probes/deeper_encoder_cost.py [MODEL_DIR] [DEPTH ...]   (default: the shipped model; 4 8 12)
"""

from __future__ import annotations

import sys
import time

import torch

from ticktock.model.deepen import deepen_audio_encoder
from ticktock.model.io import DEFAULT_MODEL, load_model


def main(model_dir: str, depths: list[int], repeats: int = 50) -> None:
    torch.set_num_threads(1)
    model, _ = load_model(model_dir, "cpu", torch.float32)
    model.eval()
    cfg = model.cfg.audio
    mel, context = torch.randn(1, cfg.frames_per_chunk, cfg.n_mels), torch.randn(1, cfg.frames_per_chunk, cfg.n_mels)
    for depth in depths:
        deepen_audio_encoder(model, depth)
        with torch.inference_mode():
            for _ in range(5):
                model.audio(mel, context)
            start = time.perf_counter()
            for _ in range(repeats):
                model.audio(mel, context)
        ms = 1000 * (time.perf_counter() - start) / repeats
        n = model.n_params()
        print(f"audio layers {depth}: {ms:.2f} ms a chunk (one core), {n / 1e6:.2f} M parameters, {2 * n / 1e6:.1f} MB fp16")


if __name__ == "__main__":
    args = sys.argv[1:]
    path = args.pop(0) if args and not args[0].isdigit() else str(DEFAULT_MODEL)
    main(path, [int(a) for a in args] or [4, 8, 12])
