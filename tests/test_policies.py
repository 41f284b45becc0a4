"""Eviction policies: which slots each keeps (on hand-made ledgers), and, in real sessions on a
tiny random model, that positions never repeat or go back, that the compacted cache attends
exactly like an eviction-aware recompute, and that resident slots stay within the budget.

A new policy is tested by adding one line to `SESSION_POLICIES`."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import torch

from ticktock.cache import KVCache
from ticktock.cache.policies import (ACOUSTIC_KINDS, DEFAULT_BUDGET, POLICIES, AcousticToText, NoEviction,
                                     StreamingLLM, UnitDrop, make_policy)
from ticktock.engine import Segment
from ticktock.model.transformer import apply_rope, rope_cos_sin
from ticktock.protocol import DuplexProtocol, SlotKind
from ticktock.session import DuplexSession

from conftest import noise_chunks, random_model

K = SlotKind
PREFIX_LEN = 4
# One unit as the session lays it out (the previous terminator is fed with the next unit's marker).
SPEAK_UNIT = [K.TERMINATOR, K.UNIT_MARKER] + [K.AUDIO] * 4 + [K.DECISION, K.ASR_MARK, K.ASR, K.ASR, K.ASR_MARK,
                                                             K.TEXT, K.TEXT]
TOOL_UNIT = [K.TERMINATOR, K.UNIT_MARKER] + [K.AUDIO] * 4 + [K.TOOL_RESULT] * 3 + [K.DECISION, K.TOOL, K.TOOL]
LISTEN_UNIT = [K.UNIT_MARKER] + [K.AUDIO] * 4 + [K.ASR_MARK, K.ASR, K.ASR_MARK]
KEPT_KINDS = {K.PREFIX, K.TEXT, K.TOOL, K.ASR, K.TOOL_RESULT}


def ledger_cache(units: list[list[SlotKind]]) -> KVCache:
    """A cache whose ledger holds a prefix then `units` (K/V are irrelevant here)."""
    cache = KVCache(1, 1, 2, 1024)
    cache.reserve(torch.arange(PREFIX_LEN), -1, [int(K.PREFIX)] * PREFIX_LEN)
    for u, kinds in enumerate(units):
        cache.reserve(torch.arange(cache.next_pos, cache.next_pos + len(kinds)), u, [int(k) for k in kinds])
    return cache


def many_units(n: int = 12) -> list[list[SlotKind]]:
    return [(SPEAK_UNIT, TOOL_UNIT, LISTEN_UNIT)[u % 3] for u in range(n)]


def survivors(cache: KVCache) -> set[int]:
    return set(cache.pos[: cache.length].tolist())


def triples(cache: KVCache) -> list[tuple[int, int, int]]:
    """(pos, unit, kind) per resident slot."""
    led = cache.ledger()
    return list(zip(led["pos"].tolist(), led["unit"].tolist(), led["kind"].tolist()))


# ------------------------------------------------------------------ hand-made ledgers
def test_a2t_keeps_exactly_text_transcript_tools_and_prefix():
    units = many_units(12)
    cache = ledger_cache(units)
    before = triples(cache)
    AcousticToText(budget=1, retention_units=5).apply(cache, unit=11)
    window = range(7, 12)  # the last 5 units, 11 included
    want = [t for t in before if t[1] in window or K(t[2]) in KEPT_KINDS]
    assert triples(cache) == want
    gone = {K(t[2]) for t in before if t not in want}
    assert gone == set(ACOUSTIC_KINDS)


def test_a2t_stops_at_the_budget_oldest_unit_first():
    cache = ledger_cache(many_units(12))
    before = triples(cache)
    first_unit_acoustic = sum(1 for _, u, k in before if u == 0 and K(k) in ACOUSTIC_KINDS)
    AcousticToText(budget=len(before) - 1, retention_units=5).apply(cache, unit=11)
    assert cache.length == len(before) - first_unit_acoustic  # one unit was enough
    assert all(u != 0 or K(k) not in ACOUSTIC_KINDS for _, u, k in triples(cache))
    assert AcousticToText(budget=len(before)).select(ledger_cache(many_units(12)), 11).numel() == 0


def test_a2t_never_touches_the_retention_window():
    cache = ledger_cache(many_units(4))
    n = cache.length
    assert AcousticToText(budget=1, retention_units=5).apply(cache, unit=3) == 0
    assert cache.length == n


def test_unit_drop_drops_whole_oldest_units_until_low():
    units = many_units(12)
    cache = ledger_cache(units)
    n = cache.length
    policy = UnitDrop(high=n - 1, low=n // 2)
    policy.apply(cache, unit=11)
    left = {u for _, u, _ in triples(cache)}
    dropped = sorted(set(range(12)) - left)
    assert dropped == list(range(len(dropped))) and dropped, "the oldest units go first"
    for u in left - {-1}:  # every unit still there is whole
        assert sum(1 for _, v, _ in triples(cache) if v == u) == len(units[u])
    assert sum(1 for _, u, _ in triples(cache) if u == -1) == PREFIX_LEN
    assert cache.length <= policy.low < cache.length + len(units[dropped[-1]]), "drops no more than needed"


def test_unit_drop_waits_for_the_high_watermark():
    cache = ledger_cache(many_units(6))
    assert UnitDrop(high=cache.length, low=1).apply(cache, unit=5) == 0


def test_streaming_llm_keeps_sinks_and_recent():
    cache = ledger_cache(many_units(10))
    pos = cache.pos[: cache.length].tolist()
    StreamingLLM(sinks=3, recent=20).apply(cache, unit=9)
    assert cache.pos[: cache.length].tolist() == pos[:3] + pos[-20:]
    cache = ledger_cache(many_units(10))
    StreamingLLM(budget=30).apply(cache, unit=9)  # sinks = the system prefix
    assert cache.pos[: cache.length].tolist() == pos[:PREFIX_LEN] + pos[-(30 - PREFIX_LEN):]


def test_no_eviction_keeps_everything():
    cache = ledger_cache(many_units(10))
    assert NoEviction().apply(cache, unit=9) == 0


def test_make_policy_derives_everything_from_one_budget():
    assert isinstance(make_policy("none", budget=100), NoEviction)
    assert make_policy("streaming_llm", budget=100) == StreamingLLM(budget=100)
    assert make_policy("unit_drop", budget=100) == UnitDrop(high=100, low=75)
    assert make_policy("a2t", budget=100) == AcousticToText(budget=100, retention_units=5)
    assert make_policy("a2t") == AcousticToText(budget=DEFAULT_BUDGET)
    assert make_policy("unit_drop", high=10, low=5) == UnitDrop(10, 5)
    assert set(POLICIES) == {"none", "streaming_llm", "unit_drop", "a2t"}


@pytest.mark.parametrize("call, match", [
    (lambda: make_policy("lru"), "unknown KV policy"),
    (lambda: make_policy("a2t", budget=0), "positive"),
    (lambda: make_policy("a2t", budget=10, retention_units=2), "not both"),
    (lambda: make_policy("unit_drop", high=10, low=20), "must not exceed"),
    (lambda: make_policy("unit_drop", hi=10), "bad parameters"),
    (lambda: StreamingLLM(), "exactly one"),
    (lambda: StreamingLLM(sinks=8, budget=8), "smaller than the budget"),
    (lambda: AcousticToText(budget=10, retention_units=-1), "retention_units"),
])
def test_bad_arguments_say_what_is_wrong(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ real sessions
BUDGET = 160
N_CHUNKS = 24
SESSION_POLICIES = ["none", "streaming_llm", "unit_drop", "a2t"]


@dataclass
class FeedLog:
    """Every token fed to the model: input embedding, logical position, kind, and the logical
    positions it could attend to (resident before its forward, plus its own forward's earlier tokens)."""

    x: list[torch.Tensor] = field(default_factory=list)
    pos: list[int] = field(default_factory=list)
    kind: list[int] = field(default_factory=list)
    unit: list[int] = field(default_factory=list)
    visible: list[set[int]] = field(default_factory=list)

    def wrap(self, forward):
        def logged(x, positions, cache=None, new_mask=None):
            if cache is not None:
                assert new_mask is None, "these tests use linear forwards only (the ar decoder)"
                t = x.shape[1]
                before = set(cache.pos[: cache.length - t].tolist())
                new = positions[0].tolist()
                for i in range(t):
                    self.x.append(x[0, i].detach().clone())
                    self.pos.append(new[i])
                    self.kind.append(int(cache.kind[cache.length - t + i]))
                    self.unit.append(int(cache.unit[cache.length - t + i]))
                    self.visible.append(before | set(new[: i + 1]))
            return forward(x, positions, cache, new_mask)
        return logged


@dataclass
class Run:
    sess: DuplexSession
    log: FeedLog
    resident: list[int]  # after each unit
    positions_after_unit: list[list[int]]
    unit_worth: int  # most slots one unit can add
    a2t_stuck: list[bool]  # after each unit: AcousticToText would find nothing left to evict


@pytest.fixture(scope="module")
def short_protocol(protocol) -> DuplexProtocol:
    return DuplexProtocol(protocol.tokenizer, max_unit_tokens=6)


@pytest.fixture(scope="module")
def biased_model(short_protocol):
    """A random model nudged towards protocol tokens, so units mix listen / speak / tool and terminators."""
    model = random_model(0, short_protocol.vocab_size)
    bias = torch.zeros(short_protocol.vocab_size)
    for name in ("listen", "speak", "tool", "chunk_eos"):
        bias[short_protocol.id(name)] = 10.0
    plain = model.lm.logits
    model.lm.logits = lambda h: plain(h) + bias
    return model


@pytest.fixture(scope="module")
def runs(biased_model, short_protocol) -> dict[str, Run]:
    out = {}
    lm = biased_model.lm
    plain = lm.forward
    chunks = noise_chunks(N_CHUNKS, 0, speech_units=tuple(range(0, N_CHUNKS, 3)))
    try:
        for name in SESSION_POLICIES:
            log = FeedLog()
            lm.forward = log.wrap(plain)
            sess = DuplexSession(biased_model, short_protocol, "ar", policy=make_policy(name, budget=BUDGET))
            resident, positions, stuck = [], [], []
            for c in chunks:
                r = sess.step(c)
                resident.append(r.resident_slots)
                positions.append(sess.engine.cache.pos[: sess.engine.cache.length].tolist())
                stuck.append(not AcousticToText(BUDGET).eligible(sess.engine.cache, r.index).any())
            worth = 2 + short_protocol.audio_per_chunk + short_protocol.max_unit_tokens
            out[name] = Run(sess, log, resident, positions, worth, stuck)
    finally:
        lm.forward = plain
    return out


def test_sessions_mix_kinds_and_evict(runs):
    kinds = set(runs["none"].log.kind)
    assert {int(K.DECISION), int(K.TERMINATOR), int(K.TEXT), int(K.AUDIO)} <= kinds
    assert runs["none"].sess.engine.cache.length == len(runs["none"].log.pos) > BUDGET
    for name in SESSION_POLICIES[1:]:
        assert runs[name].sess.engine.cache.length < len(runs[name].log.pos), f"{name} never evicted"


@pytest.mark.parametrize("name", SESSION_POLICIES)
def test_logical_positions_never_repeat_or_go_back(runs, name):
    run = runs[name]
    fed = run.log.pos
    assert fed == list(range(len(fed))), "every fed token takes the next logical position"
    for i, resident in enumerate(run.positions_after_unit):
        assert resident == sorted(set(resident)), f"unit {i}: resident positions must strictly increase"
        assert set(resident) <= set(fed)
    assert run.sess.engine.cache.next_pos == fed[-1] + 1


@pytest.mark.parametrize("name", SESSION_POLICIES)
def test_compacted_cache_attends_like_a_recompute_over_survivors(runs, biased_model, short_protocol, name):
    run = runs[name]
    sess, log, lm = run.sess, run.log, biased_model.lm
    cache = sess.engine.cache
    # Layer 0: survivors' keys are their own inputs projected at their logical positions (nothing re-encoded).
    rows = [log.pos.index(p) for p in cache.pos[: cache.length].tolist()]
    x = torch.stack([log.x[i] for i in rows])[None]  # (1, S, D)
    attn = lm.model.layers[0].self_attn
    k = attn.k_proj(lm.model.layers[0].input_layernorm(x)).view(1, len(rows), attn.hkv, attn.d).transpose(1, 2)
    cos, sin = rope_cos_sin(cache.pos[: cache.length][None], attn.d, lm.cfg.rope_theta, x.dtype)
    torch.testing.assert_close(cache.k[0, :, :, : cache.length], apply_rope(k, cos, sin), atol=1e-5, rtol=1e-5)
    # All layers: the next token's logits equal a forward over the whole history in which every
    # token attends to exactly the slots that were resident when it was fed.
    extra, plain, snap = FeedLog(), lm.forward, cache.snapshot()
    lm.forward = extra.wrap(plain)
    try:
        ids = sess.committed.pending + [short_protocol.id("unit")]
        kinds = list(sess.committed.pending_kinds) + [int(K.UNIT_MARKER)]
        got = sess.engine.forward([Segment(torch.tensor(ids), kinds)], unit=sess.index)[0]  # (V,)
    finally:
        lm.forward = plain
        cache.restore(snap)
    pos = torch.tensor(log.pos + extra.pos)  # (N,)
    mask = torch.stack([torch.isin(pos, torch.tensor(sorted(v))) for v in log.visible + extra.visible])  # (N, N)
    hidden = lm(torch.stack(log.x + extra.x)[None], pos[None], None, mask)  # (1, N, D)
    torch.testing.assert_close(got, lm.logits(hidden[0, -1]), atol=1e-3, rtol=1e-4)
    if name != "none":
        assert not mask[-1].all(), "the check must cover evicted slots"


def evicted(run: Run) -> list[tuple[int, int, int]]:
    """(pos, unit, kind) of every fed slot no longer resident."""
    left = set(run.sess.engine.cache.pos[: run.sess.engine.cache.length].tolist())
    return [(p, u, k) for p, u, k in zip(run.log.pos, run.log.unit, run.log.kind) if p not in left]


def test_a2t_in_a_session_evicts_only_acoustic_and_structural_slots(runs):
    run = runs["a2t"]
    gone = evicted(run)
    assert gone and {K(k) for _, _, k in gone} <= set(ACOUSTIC_KINDS)
    last = run.sess.index - 1
    assert all(u <= last - 5 for _, u, _ in gone), "the retention window is never touched"


def test_unit_drop_in_a_session_drops_whole_units(runs):
    run = runs["unit_drop"]
    gone_units = {u for _, u, _ in evicted(run)}
    assert gone_units and -1 not in gone_units
    left = survivors(run.sess.engine.cache)
    for u in gone_units:
        assert all(p not in left for p, v in zip(run.log.pos, run.log.unit) if v == u), f"unit {u} went in part"


def test_streaming_llm_in_a_session_keeps_the_prefix_and_a_recent_tail(runs):
    run = runs["streaming_llm"]
    left = run.sess.engine.cache.pos[: run.sess.engine.cache.length].tolist()
    prefix = [p for p, k in zip(run.log.pos, run.log.kind) if k == int(K.PREFIX)]
    assert left[: len(prefix)] == prefix
    tail = left[len(prefix):]
    assert tail == run.log.pos[-len(tail):], "the window is the most recent slots"


@pytest.mark.parametrize("name", SESSION_POLICIES[1:])
def test_resident_slots_stay_within_the_budget(runs, name):
    run = runs[name]
    cache = run.sess.engine.cache
    if name == "a2t":  # over the budget only while nothing outside the retention window is left to evict
        assert all(n <= BUDGET or stuck for n, stuck in zip(run.resident, run.a2t_stuck))
    else:
        assert max(run.resident) <= BUDGET
    assert cache.peak <= max(BUDGET, run.resident[-1]) + run.unit_worth
    assert max(runs["none"].resident) > BUDGET + run.unit_worth, "without eviction the budget would be exceeded"
