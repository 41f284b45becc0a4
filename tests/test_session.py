"""Session tests: streaming equivalence with the offline oracle, tool results, timeline, clocks."""

from __future__ import annotations

import numpy as np
import pytest

from ticktock.protocol import DuplexProtocol, SlotKind
from ticktock.session import CostModelClock, DuplexSession
from ticktock.decoding.verify import Verdict, cut_verdict
from ticktock.session.reference import reference_greedy
from ticktock.session.side_channel import UnitRules

from conftest import noise_chunks, random_model, steer_greedy


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_streaming_equals_offline_greedy(protocol, seed):
    model = random_model(seed, protocol.vocab_size)
    chunks = noise_chunks(5, seed)
    tools = {3: "flight JL123 at 9:40"}
    sess = DuplexSession(model, protocol, "ar")
    got = [r.tokens for r in sess.run(chunks, tools)]
    assert got == reference_greedy(model, protocol, chunks, tools)
    assert any(len(t) > 1 for t in got), "the random model should produce some multi-token units"


def test_new_audio_never_changes_committed_output(protocol, tiny_model):
    chunks = noise_chunks(4, 3)
    a = [r.tokens for r in DuplexSession(tiny_model, protocol).run(chunks)]
    other = chunks[:2] + [np.zeros(16000, np.float32), chunks[3] * 5]
    b = [r.tokens for r in DuplexSession(tiny_model, protocol).run(other)]
    assert a[:2] == b[:2]


def test_units_respect_token_cap(protocol, tiny_model):
    sess = DuplexSession(tiny_model, protocol)
    for r in sess.run(noise_chunks(4, 4)):
        assert 1 <= len(r.tokens) <= protocol.max_unit_tokens
        assert r.forwards == len(r.tokens)  # autoregressive: one token per forward


def test_bad_chunk_is_refused(protocol, tiny_model):
    with pytest.raises(ValueError, match="16000 samples"):
        DuplexSession(tiny_model, protocol).step(np.zeros(100, np.float32))


def test_cost_clock_timeline(protocol, tiny_model):
    prof = {"new_tokens": [1, 128], "context": [0, 4096], "ms": [[10, 20], [10, 20]], "encoder_ms": 5}
    sess = DuplexSession(tiny_model, protocol, clock=CostModelClock(prof))
    res = sess.run(noise_chunks(3, 5))
    for r in res:
        assert r.post_audio == pytest.approx(0.005 + 0.010 * r.forwards + 0.010 * 10 / 127 * (r.forwards > 0), rel=0.2)
        assert r.latency >= r.post_audio - 1e-9
    lag = 0.0
    for r in res:  # b_t = max(0, b_{t-1} + l_t - delta)
        lag = max(0.0, lag + r.latency - 1.0)
        assert r.lag == pytest.approx(lag) and r.miss == (lag > 1e-9)


# ------------------------------------------------------------------ transcription side channel
# Random models rarely write <|asr_start|>: `steer_greedy` turns some of their greedy choices into
# decisions and side-channel tokens, so segments open, fill and close (naturally, on a control
# token, at the token cap) at some designated points and not at others.
SIDE_SHARES = {"speak": 0.3, "listen": 0.1, "asr_start": 0.3, "asr_end": 0.1, "chunk_eos": 0.05}


@pytest.fixture(scope="module")
def asr_protocol(protocol):
    return DuplexProtocol(protocol.tokenizer, max_unit_tokens=24, max_asr_tokens=1)


def side_model(seed: int, protocol):
    return steer_greedy(random_model(seed, protocol.vocab_size), protocol, SIDE_SHARES, seed)


def segment_cases(protocol, placement: str, results) -> set[str]:
    """What the side channel did in a session: where segments sat, how they closed, designated points passed."""
    seen = set()
    for r in results:
        if r.asr is None:
            if placement == "after_content" or r.decision in ("speak", "tool", "listen"):
                seen.add("not opened")
            continue
        seq = r.sequence
        s = seq.index(protocol.id("asr_start"))
        n = seq.index(protocol.id("asr_end"), s) - s - 1
        seen.add("trailing" if r.slack_tokens else "inline")
        seen.add("closed by the model" if not r.asr_forced else
                 "closed at the cap" if n == protocol.max_asr_tokens else "closed on a control token")
    return seen


def test_side_channel_streaming_equals_oracle(asr_protocol):
    p, chunks, tools = asr_protocol, None, {2: "flight JL123 at 9:40"}
    seen = set()
    for seed in (1, 2, 3):
        model = side_model(seed, p)
        chunks = noise_chunks(4, seed)
        for placement in ("after_decision", "after_content"):
            res = DuplexSession(model, p, "ar", side_channel=placement).run(chunks, tools)
            assert [r.sequence for r in res] == reference_greedy(model, p, chunks, tools, side_channel=placement)
            seen |= segment_cases(p, placement, res)
    assert seen == {"inline", "trailing", "not opened", "closed by the model", "closed on a control token",
                    "closed at the cap"}, f"the side-channel test lost coverage: {sorted(seen)}"


def test_side_channel_off_changes_nothing(protocol, tiny_model):
    chunks = noise_chunks(3, 6)
    plain = DuplexSession(tiny_model, protocol).run(chunks)
    off = DuplexSession(tiny_model, protocol, side_channel="off").run(chunks)
    assert [r.tokens for r in off] == [r.tokens for r in plain]
    assert all(r.asr is None and not r.slack_tokens and r.asr_forwards == 0 for r in off)
    with pytest.raises(ValueError, match="placement"):
        DuplexSession(tiny_model, protocol, side_channel="sideways")


def test_trailing_segment_is_idle_work_of_the_next_unit(asr_protocol):
    """after_content: the segment's forwards are off the response's critical path."""
    p = asr_protocol
    prof = {"new_tokens": [1, 256], "context": [0, 100000], "ms": [[30, 30], [30, 30]], "encoder_ms": 1}
    model = side_model(2, p)
    res = DuplexSession(model, p, "ar", clock=CostModelClock(prof), side_channel="after_content").run(noise_chunks(4, 2))
    trailing = [i for i, r in enumerate(res[:-1]) if r.slack_tokens]
    assert trailing, "seed 2 should open a trailing segment"
    for r in res:
        assert r.post_audio == pytest.approx(0.001 + 0.030 * r.forwards)  # the response's forwards only
        assert r.asr_forwards == (len(r.slack_tokens) or 1)  # the check forward prefills the last token
    for i in trailing:
        r, nxt = res[i], res[i + 1]
        assert r.asr_seconds == pytest.approx(0.030 * r.asr_forwards)
        assert nxt.idle_forwards == r.asr_forwards + 1  # + the <unit> prefill
        assert nxt.idle_used == pytest.approx(r.asr_seconds + 0.030)
    # the segment is decoded in the next unit's idle work: not yet there when `step` returns
    sess = DuplexSession(model, p, "ar", clock=CostModelClock(prof), side_channel="after_content")
    chunks = noise_chunks(4, 2)
    for i in range(trailing[0] + 1):
        r = sess.step(chunks[i])
    assert not r.slack_tokens and r.asr is None
    sess.prepare()
    assert r.slack_tokens == res[trailing[0]].slack_tokens and r.asr == res[trailing[0]].asr


def test_side_channel_ledger_kinds(asr_protocol):
    """Delimiters are ASR_MARK (structural, evictable), transcript tokens ASR (kept)."""
    p = asr_protocol
    model = side_model(1, p)
    sess = DuplexSession(model, p, "ar", side_channel="after_decision")
    res = sess.run(noise_chunks(4, 1))
    sess.prepare()  # the last unit's pending token goes into the cache
    kinds = sess.engine.cache.kind[: sess.engine.cache.length].tolist()
    segs = [r for r in res if r.asr is not None]
    assert segs
    assert kinds.count(int(SlotKind.ASR_MARK)) == 2 * len(segs)
    assert kinds.count(int(SlotKind.ASR)) == sum(
        r.sequence.index(p.id("asr_end")) - r.sequence.index(p.id("asr_start")) - 1 for r in segs)


def test_rules_cut_a_verdict_where_a_segment_is_force_closed(asr_protocol):
    """The rules never edit a verdict: they rule where it stops and which token ends it, `cut_verdict` applies it."""
    p = DuplexProtocol(asr_protocol.tokenizer, max_unit_tokens=24, max_asr_tokens=2)
    words = [t for t in p.encode("the weather in oslo is sunny") if t not in p.control_ids][:3]
    tokens = [p.id("speak"), p.id("asr_start"), *words, p.id("listen")]
    verdict = Verdict(list(range(len(tokens) - 1)), tokens)
    ruling = UnitRules(p, "after_decision").rule(tokens, tokens)
    assert (ruling.n, ruling.last, ruling.in_segment, ruling.forced) == (5, p.id("asr_end"), True, True)  # 3rd word
    assert ruling.kinds == [int(k) for k in (SlotKind.DECISION, SlotKind.ASR_MARK, SlotKind.ASR, SlotKind.ASR,
                                             SlotKind.ASR_MARK)]
    assert cut_verdict(verdict, ruling.n, ruling.last) == Verdict([0, 1, 2, 3], tokens[:4] + [p.id("asr_end")])


def test_side_channel_with_sampling_keeps_segments_well_formed(asr_protocol):
    """Sampling: segments are still opened, filled and closed by the rules (greedily)."""
    p = asr_protocol
    model = side_model(1, p)
    opened = 0
    for placement in ("after_decision", "after_content"):
        res = DuplexSession(model, p, "sl", temperature=1.0, seed=3, side_channel=placement).run(noise_chunks(4, 1))
        for r in res:
            if r.asr is None:
                assert not r.slack_tokens
                continue
            opened += 1
            seg = r.slack_tokens or r.tokens[1:]  # trailing, or inline right after the decision
            end = seg.index(p.id("asr_end"))
            assert seg[0] == p.id("asr_start") and end - 1 <= p.max_asr_tokens
            assert not set(seg[1:end]) & p.control_ids
    assert opened


def test_oracle_transcripts_are_written_where_the_model_s_own_would_go(asr_protocol):
    """Given words stand as each unit's trailing segment, in the cache as transcript slots (kept by a2t), whatever
    the model would have written; only after_content takes them."""
    p = DuplexProtocol(asr_protocol.tokenizer, max_unit_tokens=24, max_asr_tokens=8)
    model, chunks = side_model(2, p), noise_chunks(4, 2)
    words = ["", "yes", "", "no thanks"]
    sess = DuplexSession(model, p, "ar", side_channel="after_content", oracle_transcripts=words)
    res = sess.run(chunks)
    assert [r.asr for r in res] == [None, "yes", None, "no thanks"]
    assert [r.slack_tokens for r in res] == [[] if not w else p.asr_ids(w) for w in words]
    assert not any(r.asr_forced for r in res)
    written = sum(len(p.encode(w)) for w in words)
    assert int((sess.engine.cache.kind[: sess.engine.cache.length] == int(SlotKind.ASR)).sum()) == written
    with pytest.raises(ValueError, match="after_content"):
        DuplexSession(model, p, "ar", side_channel="after_decision", oracle_transcripts=words)
