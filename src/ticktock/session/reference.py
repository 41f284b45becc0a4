"""The oracle: offline greedy decoding of a whole session with no KV cache and no tricks.

Every token is predicted by a full forward over the entire sequence so far, so
this is slow and obviously right; fast paths are tested token-identical to it.
"""

from __future__ import annotations

import numpy as np
import torch

from ..model.duplex import DuplexLM
from ..protocol import DuplexProtocol
from .session import DEFAULT_SYSTEM, AudioFrontEnd


@torch.no_grad()
def reference_greedy(model: DuplexLM, protocol: DuplexProtocol, chunks: list[np.ndarray],
                     tool_results: dict[int, str] | None = None, system: str = DEFAULT_SYSTEM) -> list[list[int]]:
    """Greedy output tokens per unit, recomputing the full sequence for every token."""
    front = AudioFrontEnd(model, len(chunks[0]))
    seq: list[torch.Tensor] = [torch.tensor(protocol.prefix_ids(system))]
    outputs: list[list[int]] = []
    for i, chunk in enumerate(chunks):
        seq.append(torch.tensor([protocol.id("unit")]))
        seq.append(front.push(np.asarray(chunk, dtype=np.float32)))
        if tool_results and i in tool_results:
            seq.append(torch.tensor(protocol.tool_result_ids(tool_results[i])))
        out: list[int] = []
        while True:
            x = model.embed_segments(seq)
            h = model.lm(x, torch.arange(x.shape[1])[None].to(model.device))
            tok = int(model.lm.logits(h[0, -1]).argmax())
            out.append(tok)
            seq.append(torch.tensor([tok]))
            if protocol.is_unit_end(tok, len(out)):
                break
        outputs.append(out)
    return outputs
