"""What one unit produced, and how."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class UnitResult:
    index: int
    decision: str | None  # "listen" | "speak" | "tool" | None
    tokens: list[int]  # committed output tokens, decision first
    text: str = ""
    tool_call: str | None = None
    terminator: str | None = None
    asr: str | None = None  # the side channel's transcript (None: no segment opened)
    asr_forced: bool = False  # the segment was force-closed (token limit or a control token)
    asr_forwards: int = 0  # forwards that committed segment tokens (a trailing segment: all of its forwards)
    asr_seconds: float = 0.0  # their time (a trailing segment's counts as the next unit's idle work)
    slack_tokens: list[int] = field(default_factory=list)  # a trailing segment, decoded after the response
    forwards: int = 0  # post-audio target forwards
    tokens_per_forward: list[int] = field(default_factory=list)
    draft_len: list[int] = field(default_factory=list)  # per post-audio forward
    accepted_len: list[int] = field(default_factory=list)
    runnerup_used: bool = False
    pool_tokens: int = 0  # committed tokens that came from the hypothesis pool
    idle_forwards: int = 0
    idle_used: float = 0.0  # seconds of idle work before the audio arrived
    window: float = 0.0
    overflow: float = 0.0
    post_audio: float = 0.0  # seconds of work after arrival
    encoder_seconds: float = 0.0  # of which the audio encoder's
    forward_seconds: list[float] = field(default_factory=list)  # and each post-audio forward's (the engine's clock)
    latency: float = 0.0  # ℓ_t
    lag: float = 0.0  # b_t
    resident_slots: int = 0
    margins: list[float] = field(default_factory=list)  # per response token: top-2 logit margin where it was chosen

    @property
    def sequence(self) -> list[int]:
        """Every token the unit committed, in order: the response (with an inline segment) + a trailing segment."""
        return self.tokens + self.slack_tokens

    @property
    def miss(self) -> bool:
        return self.lag > 1e-9

    def to_dict(self) -> dict:
        d = asdict(self)
        d["miss"] = self.miss
        return d
