"""The oracle: offline greedy decoding of a whole session with no KV cache and no tricks.

Every token is predicted by a full forward over the entire sequence so far, so
this is slow and obviously right; fast paths are tested token-identical to it.
With a side channel (docs/design.md §4), each unit's list also holds its transcription
segment, where it sits: after a speak/tool decision, or after the unit's last token.
"""

from __future__ import annotations

import numpy as np
import torch

from ..audio.front_end import AudioFrontEnd
from ..model.duplex import DuplexLM
from ..protocol import DuplexProtocol
from .session import DEFAULT_SYSTEM
from .side_channel import side_channel_placement


@torch.no_grad()
def reference_greedy(model: DuplexLM, protocol: DuplexProtocol, chunks: list[np.ndarray],
                     tool_results: dict[int, str] | None = None, system: str = DEFAULT_SYSTEM,
                     side_channel: str | None = None) -> list[list[int]]:
    """Greedy output tokens per unit (segments included), recomputing the full sequence for every token."""
    placement = side_channel_placement(side_channel)
    p = protocol
    front = AudioFrontEnd(model, len(chunks[0]))
    seq: list[torch.Tensor] = [torch.tensor(p.prefix_ids(system))]

    def next_token(banned: tuple[int, ...] = ()) -> int:
        x = model.embed_segments(seq)
        h = model.lm(x, torch.arange(x.shape[1])[None].to(model.device))
        z = model.lm.logits(h[0, -1])
        z[list(banned)] = float("-inf")
        return int(z.argmax())

    def commit(tok: int, out: list[int]) -> None:
        out.append(tok)
        seq.append(torch.tensor([tok]))

    def segment(out: list[int]) -> None:
        """Open a segment iff the greedy next token is <|asr_start|>; close it by the rules."""
        if next_token() != p.id("asr_start"):
            return
        commit(p.id("asr_start"), out)
        n = 0
        while True:
            tok = next_token()
            if tok in p.control_ids or n == p.max_asr_tokens:  # <|asr_end|> itself is a control token
                commit(p.id("asr_end"), out)
                return
            commit(tok, out)
            n += 1

    outputs: list[list[int]] = []
    for i, chunk in enumerate(chunks):
        seq.append(torch.tensor([p.id("unit")]))
        seq.append(front.push(np.asarray(chunk, dtype=np.float32)))
        if tool_results and i in tool_results:
            seq.append(torch.tensor(p.tool_result_ids(tool_results[i])))
        out: list[int] = []
        n_response = 0
        # after_content: the delimiters belong to the trailing segment only (UnitRules.banned_in_response)
        banned = (p.id("asr_start"), p.id("asr_end")) if placement == "after_content" else ()
        while True:
            tok = next_token(banned)
            commit(tok, out)
            n_response += 1
            if n_response == 1 and placement == "after_decision" and tok in (p.id("speak"), p.id("tool")):
                segment(out)
            if p.is_unit_end(tok, n_response):
                break
        if placement == "after_content" or (placement == "after_decision" and out[0] == p.id("listen")):
            segment(out)
        outputs.append(out)
    return outputs
