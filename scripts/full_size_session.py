"""A full-size published-model session with random weights: the decoder and the audio tower of a `--shape`
preset, run end to end through `DuplexSession` on the chosen engine; per-unit times printed.

    python scripts/full_size_session.py --shape qwen2.5-omni-7b-thinker --device cuda --engine fast
    python scripts/full_size_session.py --shape minicpm-o-4.5 --device cuda --engine fast --json OUT.json

Random weights say nothing about what the model would answer; they say what each unit costs. The tokenizer
is ticktock's BPE plus the preset protocol's special tokens (the real checkpoint's tokenizer is not here);
the audio is the shipped qa example, repeated to fill `--units` seconds. With `--profile` (the shape's `ticktock
calibrate` profile) it also sets the 1-token forwards against the HBM bandwidth floor (the decoder's weight and
KV bytes read once per forward).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from ticktock.audio.io import load_wav
from ticktock.bench.calibrate import random_model
from ticktock.model import preset
from ticktock.model.tokenizer import train_tokenizer
from ticktock.protocol import PROTOCOLS_DIR, DuplexProtocol, SpecialTokens
from ticktock.scenarios import corpus_texts
from ticktock.session import DuplexSession

EXAMPLE = Path(__file__).resolve().parents[1] / "src/ticktock/assets/examples/qa.wav"
PRESET_PROTOCOL = {"qwen2.5-omni-audio": "qwen2.5-omni-thinker", "minicpm-o-whisper": "minicpm-o-4.5-duplex"}


def protocol_for(tower_kind: str) -> DuplexProtocol:
    """The preset protocol of the tower's model over ticktock's BPE with the preset's tokens added."""
    spec = json.loads((PROTOCOLS_DIR / f"{PRESET_PROTOCOL[tower_kind]}.json").read_text())
    names = [t for t in spec["tokens"].values() if t] + spec.get("extra_chunk_eos", [])
    tok = train_tokenizer(corpus_texts(), vocab_size=4096, specials=SpecialTokens())
    tok.add_special_tokens(names)
    return DuplexProtocol.from_spec(tok, spec)


def bandwidth_floor_ms(model, context: int, bytes_per_s: float) -> float:
    """Bytes a 1-token forward must read (every decoder weight but the embedding table, which is indexed,
    and the KV of `context` slots) over the memory bandwidth."""
    lm = model.lm
    weights = sum(p.numel() * p.element_size() for n, p in lm.named_parameters() if "embed_tokens" not in n)
    d = lm.cfg
    kv = 2 * d.num_hidden_layers * d.num_key_value_heads * d.head_dim * context * lm.lm_head.weight.element_size()
    return 1e3 * (weights + kv) / bytes_per_s


def floor_table(model, profile: dict, bytes_per_s: float) -> list[dict]:
    """The profile's 1-token forward per context against the bandwidth floor there."""
    n1 = profile["new_tokens"].index(1)
    return [{"context": c, "ms": row[n1], "floor_ms": round(bandwidth_floor_ms(model, c, bytes_per_s), 3),
             "ratio": round(row[n1] / bandwidth_floor_ms(model, c, bytes_per_s), 3)}
            for c, row in zip(profile["context"], profile["ms"])]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", required=True, choices=sorted(_presets_with_towers()))
    p.add_argument("--device", default="cuda")
    p.add_argument("--engine", default="fast", choices=["eager", "fast"])
    p.add_argument("--decoders", default="ar,sl")
    p.add_argument("--units", type=int, default=12, help="seconds of audio (units) per session")
    p.add_argument("--profile", default=None, help="`ticktock calibrate` profile of this shape: its 1-token "
                   "forwards are compared with the bandwidth floor")
    p.add_argument("--bandwidth", type=float, default=4.3e12, help="HBM bytes/s (H200: 4.3e12 usable of 4.8e12)")
    p.add_argument("--json", default=None, help="write the figures here")
    args = p.parse_args()

    dtype = torch.bfloat16 if args.device == "cuda" else torch.float32
    cfg = preset(args.shape)
    t0 = time.perf_counter()
    model = random_model(cfg, args.device, dtype).eval()
    print(f"{args.shape}: built in {time.perf_counter() - t0:.1f} s; LM {sum(p.numel() for p in model.lm.parameters()) / 1e9:.2f} B, "
          f"tower {sum(p.numel() for p in model.audio.parameters()) / 1e6:.0f} M params, {dtype}")
    protocol = protocol_for(cfg.tower["kind"])
    wav, sr = load_wav(EXAMPLE)
    assert sr == 16000, sr
    n = protocol.chunk_samples
    audio = np.resize(wav, args.units * n).astype(np.float32)
    chunks = [audio[i * n:(i + 1) * n] for i in range(args.units)]

    out = {"shape": args.shape, "engine": args.engine, "dtype": str(dtype).removeprefix("torch."), "sessions": {}}
    with torch.no_grad():
        if args.profile:
            out["one_token"] = floor_table(model, json.loads(Path(args.profile).read_text()), args.bandwidth)
            for row in out["one_token"]:
                print(f"1-token forward at {row['context']:5d} slots: {row['ms']:.2f} ms; bandwidth floor "
                      f"{row['floor_ms']:.2f} ms; ratio {row['ratio']:.2f}")
        for name in args.decoders.split(","):
            sess = DuplexSession(model, protocol, name, engine=args.engine, max_slots=4096)
            rows = []
            for i, c in enumerate(chunks):
                sess.prepare()
                t = time.perf_counter()
                r = sess.step(c)
                wall = time.perf_counter() - t
                rows.append({"unit": i, "decision": r.decision, "tokens": len(r.tokens), "forwards": r.forwards,
                             "latency_ms": round(1e3 * r.latency, 2), "idle_ms": round(1e3 * r.idle_used, 2),
                             "step_wall_ms": round(1e3 * wall, 2), "miss": r.miss})
                print(f"  {name:>3} unit {i:2d}: {r.decision or '-':6s} {len(r.tokens):3d} tok {r.forwards:3d} fwd  "
                      f"ℓ {1e3 * r.latency:7.1f} ms  idle {1e3 * r.idle_used:6.1f} ms  step {1e3 * wall:7.1f} ms")
            out["sessions"][name] = rows
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


def _presets_with_towers() -> dict:
    from ticktock.model.config import PRESETS

    return {k: v for k, v in PRESETS.items() if v.tower is not None}


if __name__ == "__main__":
    main()
