"""Does a deeper audio encoder, started as the identity, hear fresh phrasings better within a short run? (CPU probe)

x3f (experiments/LOG.md 2026-12-07 h) hears `phrasings` at WER 0.170 and answers 15 of 22, 19 when the requests are
read as text: the 4-layer encoder is what is left. `--set audio_layers=N` (`model/deepen.py`) continues a model with
N encoder layers, the added ones the identity at the start. Two runs continue the shipped model (P2) on the same
data, seed and time, one core each: the shipped depth (4) and 8 layers. Data: espeak-ng with 15 % of the examples
transcribing a user who says its words in a random order (listening_cpu's `espeak-scrambled`, which kept P2's
hearing under the espeak-only drift).

    python experiments/deeper_cpu/run.py train OUT SECONDS LAYERS
    python experiments/listening_cpu/run.py wer MODEL phrasings heldout

The GPU stage (retraining-plan.md, y1) is the real test; this asks whether the new layers move at all in a few
dozen steps, and which way the WER goes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path[:0] = [str(Path(__file__).parents[1])]

from cpu_probe import continue_on_cpu  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "train":
        raise SystemExit(__doc__)
    out, seconds, layers = sys.argv[2:5]
    torch.set_num_threads(1)  # two runs at once, one core each
    continue_on_cpu(out, seconds, "espeak-scrambled", 31, extra=("--set", f"audio_layers={layers}"))
