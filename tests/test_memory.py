"""`ticktock memory`: WER normalization, recall scoring, one session per policy, the command's JSON line."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from ticktock.bench import memory as mem
from ticktock.bench.recall import recall_answers, recall_hits, recall_items
from ticktock.bench.wer import corpus_wer, normalize_words, user_words
from ticktock.cache.policies import make_policy
from ticktock.protocol import DuplexProtocol
from ticktock.session import UnitResult, make_clock

from conftest import noise_chunks, random_model

N_UNITS = 8
POLICY_KEYS = {"peak_slots", "final_slots", "wer", "recall_acc", "unit_ms_mean", "unit_ms_p99", "deadline_misses",
               "decision_agreement", "pause_takeover", "side_channel", "recall_answers", "missed_units"}


def fake_entry() -> dict:
    """An 8-unit 'long' session: a pause at unit 2, two recall answers (units 4-5 and 7)."""
    units = [{"index": i, "decision": "listen", "content": "", "tags": []} for i in range(N_UNITS)]
    units[2]["tags"] = ["pause"]
    for i, text in ((4, "the first item"), (5, "was milk."), (7, "your meeting is on friday.")):
        units[i].update(decision="speak", content=text, tags=["recall"])
    words = [{"word": w, "start": s, "end": s + 0.3, "speaker": sp}
             for w, s, sp in (("Milk,", 1.0, "user"), ("eggs!", 1.5, "user"), ("noise", 1.2, "background"))]
    return {"id": "fake-0", "family": "long", "system": "You are ticktock, a helpful voice assistant.",
            "n_units": N_UNITS, "units": units, "utterances": [], "words": words, "audio": "audio/fake-0.wav",
            "recall": [{"question": "what was the first item?", "answer": "the first item was milk."},
                       {"question": "when is my meeting?", "answer": "your meeting is on friday."}]}


def unit(i: int, decision: str = "listen", text: str = "") -> UnitResult:
    return UnitResult(i, decision, [], text=text)


def test_normalized_wer():
    assert normalize_words("The gate code's 5-0, OK?") == "the gate code's 5 0 ok"
    assert corpus_wer(["Hello, World!"], ["hello world"]) == 0.0
    assert corpus_wer(["one two three four"], ["one two"]) == pytest.approx(0.5)
    assert corpus_wer(["one two", "three four"], ["one two", ""]) == pytest.approx(0.5)
    assert corpus_wer(["one two"], [""]) == 1.0
    assert user_words(fake_entry()) == "Milk, eggs!"


def test_recall_windows_and_hits():
    e = fake_entry()
    items = recall_items(e)
    assert [list(it.units) for it in items] == [[3, 4, 5], [6, 7]]  # one early, never into the next run
    units = [unit(i) for i in range(N_UNITS)]
    units[4] = unit(4, "speak", "The first item")
    units[5] = unit(5, "speak", "was milk.")
    assert recall_hits(e, units) == [True, False]
    units[7] = unit(7, "speak", "your meeting is on Friday")
    units[5] = unit(5, "listen", "was milk.")  # a listen unit says nothing
    assert recall_hits(e, units) == [False, True]
    answers = recall_answers(e, units)
    assert [a["hit"] for a in answers] == [False, True] and answers[1]["spoken"].endswith("your meeting is on Friday")
    assert [a["expected"] for a in answers] == [q["answer"] for q in e["recall"]]
    bad = {**e, "recall": e["recall"][:1]}
    with pytest.raises(ValueError, match="recall"):
        recall_items(bad)


@pytest.fixture(scope="module")
def small(protocol):
    p = DuplexProtocol(protocol.tokenizer, max_unit_tokens=6)
    return random_model(1, p.vocab_size), p


def test_policy_runs_summarize(small):
    model, p = small
    e = fake_entry()
    audio = np.concatenate(noise_chunks(N_UNITS, 2, speech_units=(1, 2, 3)))
    runs = {name: [mem.run_policy_session(model, p, e, audio, make_policy(name, budget=40), make_clock("wall"),
                                          side_channel="off")] for name in ("none", "streaming_llm")}
    none = mem.summarize(runs["none"], runs["none"], "off")
    assert POLICY_KEYS <= set(none)
    assert none["decision_agreement"] == 1.0 and none["peak_vs_none"] == 0.0
    assert none["wer"] == 1.0 and "no transcript" in none["side_channel"]
    assert none["wer_by_session"] == {e["id"]: 1.0}  # no transcript: every user word deleted
    import dataclasses

    from ticktock.bench.wer import user_words
    two = [dataclasses.replace(runs["none"][0], transcript=user_words(e)),
           dataclasses.replace(runs["none"][0], entry={**e, "id": "other"})]
    assert mem.summarize(two)["wer_by_session"] == {e["id"]: 0.0, "other": 1.0}
    assert none["units"] == N_UNITS and none["recall_questions"] == 2
    assert none["unit_ms_p99"] >= none["unit_ms_mean"] > 0
    sl = mem.summarize(runs["streaming_llm"], runs["none"], "off")
    assert sl["final_slots"] <= 40 < none["final_slots"]
    assert sl["peak_vs_none"] < 0
    for name, rs in runs.items():
        assert len(rs[0].units) == N_UNITS and len(rs[0].unit_seconds) == N_UNITS


def test_missed_units_are_named(small):
    """A clock on which every forward takes 1.5 s misses every deadline: each miss is listed with its unit."""
    from ticktock.session import CostModelClock

    model, p = small
    slow = CostModelClock({"new_tokens": [1, 256], "context": [0, 100000], "ms": [[1500, 1500], [1500, 1500]],
                           "encoder_ms": 0})
    run = mem.run_policy_session(model, p, fake_entry(), np.concatenate(noise_chunks(N_UNITS, 2)),
                                 make_policy("none"), slow, side_channel="off")
    assert run.misses == N_UNITS == len(run.missed)
    assert [m["unit"] for m in run.missed] == list(range(N_UNITS))
    assert all(m["lag_ms"] > 0 and m["unit_ms"] >= 1500 and m["forwards"] >= 1 for m in run.missed)
    rows = mem.summarize([run], [run], "off")["missed_units"]
    assert len(rows) == N_UNITS and rows[0]["session"] == "fake-0"


def test_side_channel_is_resolved_against_the_session(monkeypatch):
    monkeypatch.setattr(mem, "side_channel_supported", lambda: False)
    assert mem.resolve_side_channel(None) == "off"
    with pytest.raises(ValueError, match="no side_channel option"):
        mem.resolve_side_channel("after_content")
    monkeypatch.setattr(mem, "side_channel_supported", lambda: True)
    assert mem.resolve_side_channel(None) == "after_content"
    with pytest.raises(ValueError, match="unknown side channel"):
        mem.resolve_side_channel("sideways")


def test_memory_command_json_line(small, tmp_path, monkeypatch, capsys):
    import ticktock.runtime
    import ticktock.scenarios.store
    from ticktock.cli import main
    from ticktock.runtime import Runtime

    model, p = small
    e = fake_entry()
    (tmp_path / "audio").mkdir()
    sf.write(tmp_path / e["audio"], np.concatenate(noise_chunks(N_UNITS, 3)), 16000, subtype="PCM_16")
    monkeypatch.setattr(ticktock.scenarios.store, "ensure_suite", lambda suite, **kw: (tmp_path, [e]))
    monkeypatch.setattr(ticktock.runtime, "load_runtime", lambda *a, **kw: Runtime(model, p, "random", True))
    assert main(["memory", "--policies", "unit_drop", "--budget", "40", "--no-cascade",
                 "--side-channel", "off", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert list(out["policies"]) == ["none", "unit_drop"]
    for row in out["policies"].values():
        assert POLICY_KEYS <= set(row)
    assert out["budget"] == 40 and out["cascade_wer"] is None and out["units"] == N_UNITS
    assert out["params"]["unit_drop"] == "UnitDrop(high=40, low=30)"


@pytest.mark.parametrize("argv, message", [
    (["--policies", "none,lru"], "unknown policy"),
    (["--budget", "0"], "positive"),
    (["--workers", "0"], "positive"),
    (["--side-channel", "off", "--oracle-transcripts"], "needs --side-channel after_content"),
])
def test_memory_command_refuses_bad_arguments(argv, message, capsys):
    from ticktock.cli import main

    assert main(["memory", "--no-cascade", *argv]) == 2
    assert message in capsys.readouterr().err


def test_oracle_transcripts_are_the_user_s_words(small):
    """--oracle-transcripts: the side channel writes the reference words (δ rule), background talk left out, so
    the session's transcript is the user's words and its WER 0 whatever the model would have written."""
    model, p = small
    e, chunks = fake_entry(), noise_chunks(N_UNITS, 3)
    run = mem.run_policy_session(model, p, e, np.concatenate(chunks), make_policy("a2t", budget=40),
                                 make_clock("cost", None, "cpu"), side_channel="after_content", oracle=True)
    assert normalize_words(run.transcript) == "milk eggs"
    assert mem.summarize([run], [run], "after_content")["wer"] == 0.0


def test_parallel_policy_runs_equal_the_serial_ones(tmp_path):
    """Worker processes (the shipped model, the cost clock) give every (session, policy) run the one process gives."""
    from ticktock.bench.profiles import profile_for_clock
    from ticktock.bench.memory import MemoryJob, policy_tasks, runs_by_policy
    from ticktock.bench.workers import run_jobs
    from ticktock.scenarios.world import tool_result
    from ticktock.runtime import load_runtime

    entries = [fake_entry(), {**fake_entry(), "id": "fake-1", "audio": "audio/fake-1.wav"}]
    (tmp_path / "audio").mkdir()
    for k, e in enumerate(entries):
        sf.write(tmp_path / e["audio"], np.concatenate(noise_chunks(N_UNITS, 3 + k, speech_units=(1, 2))), 16000,
                 subtype="PCM_16")
    profile = profile_for_clock("cost", None)
    job = MemoryJob(None, "cpu", "cost", profile, "off", 0.25, "ar", budget=40)
    seen = []
    tasks = policy_tasks(entries, ["none", "unit_drop"])
    done = run_jobs(job, tmp_path, tasks, workers=2, on_result=lambda k, _: seen.append(tasks[k][1]))
    assert sorted(e["id"] for e in seen) == ["fake-0", "fake-0", "fake-1", "fake-1"]
    runs = runs_by_policy(tasks, done)
    rt = load_runtime(None, "cpu")
    for name in ("none", "unit_drop"):
        for e, run in zip(entries, runs[name]):
            audio, _ = sf.read(tmp_path / e["audio"], dtype="float32")
            alone = mem.run_policy_session(rt.model, rt.protocol, e, audio, make_policy(name, budget=40),
                                           make_clock("cost", profile, "cpu"), tool_result, "off")
            assert run.entry["id"] == e["id"] and run.policy == alone.policy
            assert [u.tokens for u in run.units] == [u.tokens for u in alone.units]
            assert (run.peak_slots, run.final_slots, run.unit_seconds) == (alone.peak_slots, alone.final_slots,
                                                                           alone.unit_seconds)


def test_decision_accuracy_by_minute():
    """Per-minute decision accuracy pools every session's units of that minute; shorter sessions stop counting."""
    from types import SimpleNamespace

    from ticktock.bench.quality import SessionOutcome, by_minute

    def outcome(got: str, want: str) -> SessionOutcome:
        return SessionOutcome("long", [SimpleNamespace(decision="speak" if c == "s" else "listen") for c in got],
                              [{"decision": "speak" if c == "s" else "listen"} for c in want])

    a = outcome("llls" + "ssss", "llls" + "llll")  # minute 0 right, minute 1 all wrong
    b = outcome("lsll" + "l", "llll" + "l")  # minute 0: 3 of 4, minute 1: 1 of 1
    assert by_minute([a, b], units_per_minute=4) == [0.875, 0.2]
    assert by_minute([], units_per_minute=4) == []
