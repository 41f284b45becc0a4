"""The idle-window schedule: the transcript's token cap follows the planned cost, and with it every
decoder still commits exactly the autoregressive tokens (segments included)."""

import json

import pytest
from conftest import noise_chunks, random_model, steer_greedy

from ticktock.session import DuplexSession
from ticktock.session.idle_schedule import MIN_ASR_TOKENS, IdleSchedule


def test_cap_follows_share_and_cost(protocol):
    assert IdleSchedule(0.25, 0.005).asr_token_cap(protocol) == min(protocol.max_asr_tokens, 48)
    assert IdleSchedule(0.1, 0.005).asr_token_cap(protocol) == 18
    assert IdleSchedule(0.01, 0.005).asr_token_cap(protocol) == MIN_ASR_TOKENS  # never below one second's words
    assert IdleSchedule(1.0, 0.0001).asr_token_cap(protocol) == protocol.max_asr_tokens
    capped = IdleSchedule(0.1, 0.005).apply(protocol)
    assert capped.max_asr_tokens == 18 and protocol.max_asr_tokens != 18  # a copy
    assert capped.ids == protocol.ids


@pytest.mark.parametrize("bad", [(0.0, 0.005), (1.5, 0.005), (0.25, 0.0)])
def test_bad_schedule_is_rejected(bad):
    with pytest.raises(ValueError):
        IdleSchedule(*bad)


def test_from_profile_uses_one_token_cost(tmp_path):
    prof = {"new_tokens": [1, 2], "context": [256, 2048], "ms": [[4.0, 5.0], [8.0, 9.0]]}
    f = tmp_path / "p.json"
    f.write_text(json.dumps(prof))
    assert IdleSchedule.from_profile(f, 0.5, context=300).token_s == pytest.approx(0.004)
    assert IdleSchedule.from_profile(f, 0.5, context=4000).token_s == pytest.approx(0.008)


def test_capped_segments_stay_lossless(protocol):
    """Segments that run long are force-closed at the scheduled cap, identically for every decoder."""
    capped = IdleSchedule(0.01, 0.005).apply(protocol)  # 8 transcript tokens
    shares = {"asr_start": 0.1}  # segments open now and then and seldom close early
    seen_cap = False
    for seed in (1, 2, 3):
        model = steer_greedy(random_model(seed, protocol.vocab_size), protocol, shares, seed)
        chunks = noise_chunks(10, seed)
        outs = {}
        for dec in ("ar", "sl"):
            res = DuplexSession(model, capped, dec, side_channel="after_content").run(chunks)
            outs[dec] = [r.sequence for r in res]
            for r in res:
                assert len(r.slack_tokens) <= MIN_ASR_TOKENS + 2
                seen_cap |= len(r.slack_tokens) == MIN_ASR_TOKENS + 2
        assert outs["ar"] == outs["sl"]
    assert seen_cap  # the cap did bind somewhere
