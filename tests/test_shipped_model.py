"""The shipped ticktock-tiny: loads from the package, runs the shipped examples, and every
decoder is token-identical to autoregressive greedy on it (fp32, CPU)."""

from __future__ import annotations

import json

import pytest

from ticktock.audio import load_audio, split_chunks
from ticktock.commands.demo import EXAMPLES
from ticktock.decoding.registry import DECODERS
from ticktock.decoding.speculative_listening import MarginBranching
from ticktock.model import DEFAULT_MODEL
from ticktock.runtime import load_runtime
from ticktock.scenarios import same_call
from ticktock.session import CostModelClock, DuplexSession

pytestmark = pytest.mark.skipif(not (DEFAULT_MODEL / "model.safetensors").exists(), reason="no shipped model")
PROFILE = {"new_tokens": [1, 256], "context": [0, 100000], "ms": [[8, 12], [8, 12]], "encoder_ms": 2}


@pytest.fixture(scope="module")
def example():
    wav = EXAMPLES / "qa.wav"
    meta = json.loads(wav.with_suffix(".json").read_text())
    return split_chunks(load_audio(wav))[:10], meta["system"]


def test_shipped_model_is_small_and_trained(runtime):
    assert runtime.trained
    size = (DEFAULT_MODEL / "model.safetensors").stat().st_size
    assert size <= 25 * 1024 * 1024


def test_listens_then_speaks(runtime, example):
    chunks, system = example
    res = DuplexSession(runtime.model, runtime.protocol, "ar", system=system).run(chunks)
    decisions = [r.decision for r in res]
    assert decisions[0] == "listen"
    assert "speak" in decisions and decisions.index("speak") > 2  # it waits for the user's question


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_decoders_lossless_on_shipped_model(runtime, example, name):
    chunks, system = example
    ar = DuplexSession(runtime.model, runtime.protocol, "ar", clock=CostModelClock(PROFILE), system=system).run(chunks)
    got = DuplexSession(runtime.model, runtime.protocol, name, clock=CostModelClock(PROFILE), system=system).run(chunks)
    assert [r.tokens for r in got] == [r.tokens for r in ar]
    assert all(g.forwards <= a.forwards for g, a in zip(got, ar))


def test_tool_example_listens_calls_then_speaks(runtime):
    """The shipped tool example: listen while the user asks, call a tool, read its result back."""
    from ticktock.scenarios.world import tool_result
    wav = EXAMPLES / "tool.wav"
    meta = json.loads(wav.with_suffix(".json").read_text())
    sess = DuplexSession(runtime.model, runtime.protocol, "ar", system=meta["system"])
    res = sess.run(split_chunks(load_audio(wav)),
                   lambda i, prev: tool_result(prev.tool_call) if prev.tool_call else None)
    decisions = [r.decision for r in res]
    first_tool = decisions.index("tool")
    assert set(decisions[:first_tool]) == {"listen"}
    assert "speak" in decisions[first_tool + 1:first_tool + 3]
    assert same_call(res[first_tool].tool_call, meta["tool_call"])


def test_margin_branches_are_drafted_and_lossless(runtime):
    """`sl-branch` forks the silence draft where it is least sure, and still commits exactly `ar`'s tokens.

    Any margin counts here (the default forks only below 2.0 logits, which depends on how sure the shipped
    model is): the three least sure positions of each draft are forked, so the branches are really drafted
    and verified."""
    wav = EXAMPLES / "qa.wav"
    chunks, system = split_chunks(load_audio(wav)), json.loads(wav.with_suffix(".json").read_text())["system"]
    ar = DuplexSession(runtime.model, runtime.protocol, "ar", clock=CostModelClock(PROFILE), system=system).run(chunks)
    decoder = MarginBranching(max_margin=float("inf"))
    sess = DuplexSession(runtime.model, runtime.protocol, decoder, clock=CostModelClock(PROFILE), system=system)
    branch_nodes, got = 0, []
    for c in chunks:
        sess.prepare()
        draft = sess.decoder.first
        branch_nodes += sum(s == "branch" for s in (draft.source or [])) if draft is not None else 0
        got.append(sess.step(c))
    assert branch_nodes > 0
    assert [r.tokens for r in got] == [r.tokens for r in ar]


def test_speculative_listening_under_eviction_commits_ar_tokens():
    """`ticktock memory --decoder sl`: with the side channel writing transcripts and `a2t` evicting after every unit,
    `sl` drafts over the compacted cache and still commits exactly `ar`'s tokens, leaving the same resident slots."""
    from ticktock.scenarios.world import tool_result
    from ticktock.cache.policies import make_policy
    from ticktock.bench.memory import run_policy_session

    pair = load_runtime(side_channel=True)
    wav = EXAMPLES / "tool.wav"
    meta = json.loads(wav.with_suffix(".json").read_text())
    audio = load_audio(wav)
    entry = {"id": "tool", "family": "tool_call", "system": meta["system"], "n_units": len(split_chunks(audio)),
             "units": [], "recall": []}
    runs = {d: run_policy_session(pair.model, pair.protocol, entry, audio, make_policy("a2t", budget=120),
                                  CostModelClock(PROFILE), tool_result, "after_content", decoder=d)
            for d in ("ar", "sl")}
    ar, sl = runs["ar"].units, runs["sl"].units
    assert any(r.asr for r in ar) and runs["ar"].peak_slots > 120  # transcripts written, the cache was evicted
    assert [r.sequence for r in sl] == [r.sequence for r in ar]
    assert [r.resident_slots for r in sl] == [r.resident_slots for r in ar]
    assert sum(r.forwards for r in sl) < sum(r.forwards for r in ar)
