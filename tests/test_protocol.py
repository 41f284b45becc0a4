"""Protocol round trip: build a unit's outputs, parse them back."""

from __future__ import annotations

import pytest

from ticktock.model.tokenizer import train_tokenizer
from ticktock.protocol import Decision, DuplexProtocol, SlotKind, SpecialTokens


@pytest.mark.parametrize("decision,content,turn_end", [
    (Decision.LISTEN, "", False),
    (Decision.SPEAK, "the capital of france is paris", False),
    (Decision.SPEAK, "sure, here you go", True),
    (Decision.TOOL, '{"name": "find_flights", "arguments": {"origin": "TYO", "dest": "OSA", "day": "Fri"}}', False),
    (Decision.TOOL, 'find_flights(origin="TYO", dest="OSA", day="Fri")', False),  # the keyword form of older models
])
def test_round_trip(protocol, decision, content, turn_end):
    protocol = DuplexProtocol(protocol.tokenizer)  # the default unit token cap
    ids = protocol.output_ids(decision, content, turn_end)
    parsed = protocol.parse(ids)
    assert parsed.decision == decision
    if decision == Decision.TOOL:
        assert parsed.tool_call.replace(" ", "") == content.replace(" ", "")
    else:
        assert parsed.text == content
    want_term = None if decision == Decision.LISTEN else ("turn_eos" if turn_end else "chunk_eos")
    assert parsed.terminator == want_term
    assert protocol.is_unit_end(ids[-1], len(ids))
    assert all(not protocol.is_unit_end(t, i + 1) for i, t in enumerate(ids[:-1]))


def test_asr_segment_is_parsed_out(protocol):
    p = protocol
    ids = [p.id("speak"), p.id("asr_start"), *p.encode("okay"), p.id("asr_end"), *p.encode("sure"), p.id("chunk_eos")]
    parsed = p.parse(ids)
    assert parsed.asr == "okay" and parsed.text == "sure"
    assert p.output_kind(p.id("asr_start")) == SlotKind.ASR_MARK
    assert p.output_kind(p.id("turn_eos")) == SlotKind.TERMINATOR


def test_prefix_and_tool_result_layout(protocol):
    p = protocol
    pre = p.prefix_ids("hello")
    assert pre[0] == p.id("system") and pre[-1] == p.id("system_end")
    tr = p.tool_result_ids("sunny")
    assert tr[0] == p.id("tool_result") and tr[-1] == p.id("result_end")


def test_missing_special_token_is_a_clear_error():
    tok = train_tokenizer(["hello world"], vocab_size=300, specials=SpecialTokens(unit="<unit>"))
    with pytest.raises(ValueError, match="lacks the special token"):
        DuplexProtocol(tok, tokens=SpecialTokens(unit="</unit>"))


def test_unit_token_cap(protocol):
    assert protocol.is_unit_end(protocol.encode("okay")[0], protocol.max_unit_tokens)
