"""How a unit's idle window is shared between the transcript segment and the draft (docs/design.md §4, §6).

The trailing transcript segment (`after_content`) is decoded first: the draft is made
from a context that already holds it. So the schedule bounds the transcript to a share
of the chunk at the planned per-token cost, and the draft gets whatever the window has
left (`DuplexSession.prepare`). The bound is a token cap fixed for the session, never a
reaction to a measured window: every decoder then commits the same segments, and the
token-for-token equality with autoregressive decoding holds with the side channel on.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from ..protocol import DuplexProtocol

DELIMITERS = 2  # <|asr_start|> and <|asr_end|>
MIN_ASR_TOKENS = 8  # below this a segment cannot hold one second of speech


@dataclass(frozen=True)
class IdleSchedule:
    asr_share: float = 0.25  # at most this share of a chunk goes to the transcript segment
    token_s: float = 0.005  # planned seconds per one-token forward (from a calibration profile)

    def __post_init__(self) -> None:
        if not 0 < self.asr_share <= 1 or self.token_s <= 0:
            raise ValueError(f"asr_share must be in (0, 1] and token_s > 0, got {self.asr_share}, {self.token_s}")

    def asr_token_cap(self, protocol: DuplexProtocol) -> int:
        """Transcript tokens a segment may hold: its share of the chunk, within [8, protocol's cap]."""
        fits = int(self.asr_share * protocol.chunk_seconds / self.token_s) - DELIMITERS
        return max(MIN_ASR_TOKENS, min(protocol.max_asr_tokens, fits))

    def apply(self, protocol: DuplexProtocol) -> DuplexProtocol:
        """The protocol with the scheduled transcript cap (a copy; `protocol` is unchanged)."""
        return dataclasses.replace(protocol, max_asr_tokens=self.asr_token_cap(protocol))

    @classmethod
    def from_profile(cls, profile: str | Path, asr_share: float = 0.25, context: int = 1024) -> "IdleSchedule":
        """Plan with a calibration profile's one-token forward at the context nearest `context`."""
        p = json.loads(Path(profile).read_text())
        c = min(range(len(p["context"])), key=lambda i: abs(p["context"][i] - context))
        return cls(asr_share, p["ms"][c][p["new_tokens"].index(1)] / 1000)
