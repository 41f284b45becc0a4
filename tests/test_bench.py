"""`ticktock bench`: metrics on hand-made records, and a closed-loop replay on a tiny random model."""

from __future__ import annotations

import json

import pytest

from conftest import noise_chunks, random_model
from ticktock.bench.metrics import bucket_of, json_view, summarize
from ticktock.bench.replay import BenchSession, ordered_decoders, replay
from ticktock.bench.report import write_results
from ticktock.session import CostModelClock

# slow forwards (as a big model on a CPU) keep the idle drafting, and so the test, short
FAST = {"new_tokens": [1, 128], "context": [0, 4096], "ms": [[100, 120], [110, 140]], "encoder_ms": 1.0}


def rec(dec, unit, decision, tokens, forwards, latency, session="s0", family="short_qa", lag=0.0):
    return {"session": session, "family": family, "decoder": dec, "unit": unit, "decision": decision,
            "expected": decision, "n_tokens": len(tokens), "tokens": tokens, "forwards": forwards,
            "tokens_per_forward": [], "latency_ms": latency, "lag_ms": lag, "post_audio_ms": latency,
            "idle_used_ms": 0.0, "overflow_ms": 0.0, "window_ms": 0.0, "miss": lag > 0, "resident_slots": 10,
            "pool_tokens": 0, "runnerup_used": False, "tool_call": None}


def hand_records():
    ar = [rec("ar", 0, "listen", [1], 1, 10.0),
          rec("ar", 1, "speak", [2, 3, 4, 5], 4, 40.0),
          rec("ar", 2, "speak", [2, 3], 2, 20.0),
          rec("ar", 3, "tool", list(range(20)), 20, 1200.0, lag=200.0),
          rec("ar", 4, "speak", [2, 9], 2, 20.0)]
    sl = [rec("sl", 0, "listen", [1], 1, 10.0),
          rec("sl", 1, "speak", [2, 3, 4, 5], 1, 10.0),
          rec("sl", 2, "speak", [2, 3], 1, 10.0),
          rec("sl", 3, "tool", list(range(20)), 5, 300.0),
          rec("sl", 4, "speak", [2, 8], 1, 10.0)]  # differs from AR: not lossless here
    return ar + sl


def test_metrics_on_hand_records():
    s = summarize(hand_records())
    ar, sl = s["ar"], s["sl"]
    assert ar["speak_speedup"] == 1.0 and ar["mat"] == 1.0 and ar["lossless"] == 1.0
    assert sl["speak_speedup"] == pytest.approx((80 / 3) / 10, abs=1e-3)
    assert sl["tool_speedup"] == pytest.approx(4.0, abs=1e-3)
    assert sl["mat"] == pytest.approx(28 / 8, abs=1e-3)  # speak+tool tokens over their forwards
    assert sl["lossless"] == pytest.approx(0.8, abs=1e-3)
    # onsets: units 1 and 4 (unit 2 follows a speak unit)
    assert ar["onset_ms"] == pytest.approx(30.0, abs=1e-3) and sl["onset_ms"] == pytest.approx(10.0, abs=1e-3)
    assert ar["tool_latency_ms"] == 1200.0 and ar["tool_deadline_miss_rate"] == 1.0
    assert sl["tool_deadline_miss_rate"] == 0.0
    assert ar["deadline_miss_rate"] == pytest.approx(0.2, abs=1e-3) and ar["max_lag_ms_max"] == 200.0
    assert ar["lagging_sessions"] == 0.0
    assert ar["forwards_by_length"] == {"1": 1.0, "2-4": pytest.approx(8 / 3, abs=1e-3), "5-16": None, "17-64": 20.0,
                                        "65-128": None}
    assert sl["forwards_by_length"]["2-4"] == 1.0
    assert sl["speak_speedup_by_family"] == {"short_qa": pytest.approx(80 / 30, abs=1e-3)}
    assert summarize(hand_records(), greedy=False)["sl"]["lossless"] is None
    view = json_view(s)
    assert set(view["sl"]) >= {"speak_speedup", "mat", "lossless", "forwards_by_length", "onset_ms"}


def test_buckets_and_order():
    assert [bucket_of(n) for n in (1, 2, 4, 5, 16, 17, 64, 65, 128, 300)] == \
        ["1", "2-4", "2-4", "5-16", "5-16", "17-64", "17-64", "65-128", "65-128", "65-128"]
    assert ordered_decoders(["sl", "pld", "sl"]) == ["ar", "sl", "pld"]
    with pytest.raises(ValueError):
        summarize([r for r in hand_records() if r["decoder"] != "ar"])


def test_replay_end_to_end(protocol, tmp_path):
    model = random_model(3, protocol.vocab_size)
    sessions = [BenchSession(f"syn{k}", fam, "You are ticktock, a helpful voice assistant.",
                             noise_chunks(3, seed=k, speech_units=(1,)),
                             [{"decision": "listen", "content": "", "tags": []}] * 3)
                for k, fam in enumerate(["short_qa", "tool_call"])]
    seen = []
    records = replay(model, protocol, sessions, ["sl"], CostModelClock(FAST), tool_runner=lambda c: "ok",
                     progress=lambda s: seen.append(s.id))
    assert seen == ["syn0", "syn1"]
    assert len(records) == 2 * 2 * 3 and {r["decoder"] for r in records} == {"ar", "sl"}
    s = summarize(records)
    assert s["sl"]["lossless"] == 1.0
    assert s["ar"]["mat"] in (None, 1.0)
    sl_tok = sum(r["n_tokens"] for r in records if r["decoder"] == "sl")
    sl_fw = sum(r["forwards"] for r in records if r["decoder"] == "sl")
    assert sl_tok / sl_fw >= 1.0
    if s["sl"]["mat"] is not None:
        assert s["sl"]["mat"] >= 1.0
    out = write_results(tmp_path / "res", {"suite": "syn", "clock": "cost"}, records, s, plots=False)
    assert (out / "report.md").read_text().startswith("# ticktock bench")
    assert len((out / "units.jsonl").read_text().splitlines()) == len(records)
    assert json.loads((out / "summary.json").read_text())["sl"]["lossless"] == 1.0


def _sessions(n: int, units: int = 4) -> list[BenchSession]:
    return [BenchSession(f"syn{k}", "short_qa", "You are ticktock, a helpful voice assistant.",
                         noise_chunks(units, seed=k, speech_units=(1,))) for k in range(n)]


def test_one_session_on_the_device_is_the_session_timeline(protocol):
    """With N = 1 the shared-device accounting reproduces `session.Timeline` exactly."""
    from ticktock.session import DuplexSession
    model = random_model(4, protocol.vocab_size)
    sess = _sessions(1)[0]
    own = DuplexSession(model, protocol, "sl", clock=CostModelClock(FAST), system=sess.system).run(sess.chunks)
    recs = replay(model, protocol, [sess], ["sl"], CostModelClock(FAST), tool_runner=None)
    got = [r for r in recs if r["decoder"] == "sl"]
    assert [r["tokens"] for r in got] == [r.tokens for r in own]
    for r, o in zip(got, own):
        assert r["latency_ms"] == pytest.approx(o.latency * 1000) and r["lag_ms"] == pytest.approx(o.lag * 1000)
        assert r["window_ms"] == pytest.approx(o.window * 1000) and r["overflow_ms"] == pytest.approx(o.overflow * 1000)


def test_closed_loop_alone_is_the_session_alone(protocol):
    """A session alone in the closed loop (as eval and memory run it) gets the idle windows its own timeline gives,
    so it commits the same tokens with the same times, to the bit."""
    from ticktock.bench.runner import closed_loop
    from ticktock.session import DuplexSession
    model = random_model(4, protocol.vocab_size)
    sess = _sessions(1, units=5)[0]
    fresh = lambda: DuplexSession(model, protocol, "sl", clock=CostModelClock(FAST), system=sess.system)  # noqa: E731
    own = fresh().run(sess.chunks)
    (got,), injected = closed_loop([fresh()], [sess.chunks], tool_runner=None)
    timing = lambda r: (r.tokens, r.window, r.idle_used, r.overflow, r.post_audio, r.latency, r.lag)  # noqa: E731
    assert [timing(r) for r in got] == [timing(r) for r in own] and injected == [{}]


def test_sessions_sharing_a_device_queue(protocol):
    """N sessions at once: same tokens as alone, but later sessions wait for earlier ones' chunk work."""
    model = random_model(5, protocol.vocab_size)
    sessions = _sessions(3)
    alone = replay(model, protocol, sessions, ["sl"], CostModelClock(FAST), tool_runner=None)
    shared = replay(model, protocol, sessions, ["sl"], CostModelClock(FAST), tool_runner=None, concurrent=3)
    key = lambda r: (r["decoder"], r["session"], r["unit"])  # noqa: E731
    a, s = {key(r): r for r in alone}, {key(r): r for r in shared}
    assert a.keys() == s.keys()
    assert all(a[k]["tokens"] == s[k]["tokens"] for k in a)
    for d in ("ar", "sl"):
        for u in range(4):
            first, last = s[(d, "syn0", u)], s[(d, "syn2", u)]
            waited = sum(s[(d, f"syn{j}", u)]["post_audio_ms"] for j in range(3))
            assert last["latency_ms"] >= waited - 1e-6  # queued behind the two before it
            assert first["latency_ms"] >= first["post_audio_ms"] - 1e-6
    # the free window is shared out: each session drafts within its share, the shares within the window
    for u in range(1, 4):
        shares = [s[("sl", f"syn{j}", u)]["window_ms"] for j in range(3)]
        assert sum(shares) <= max(a[("sl", f"syn{j}", u)]["window_ms"] for j in range(3)) + 1e-6
        assert all(s[("sl", f"syn{j}", u)]["idle_used_ms"] <= a[("sl", f"syn{j}", u)]["idle_used_ms"] + 1e-6
                   for j in range(3))  # a smaller share never drafts more


def _fake_suite(tmp_path, monkeypatch, protocol, n: int) -> None:
    """`bench` sees a suite of n short-QA sessions over noise and a random model."""
    import numpy as np
    import soundfile as sf

    import ticktock.runtime
    import ticktock.scenarios.store
    from ticktock.runtime import Runtime

    from test_memory import N_UNITS, fake_entry

    entries = [{**fake_entry(), "id": f"fake-{k}", "family": "short_qa", "audio": f"audio/fake-{k}.wav"}
               for k in range(n)]
    (tmp_path / "audio").mkdir()
    for k, e in enumerate(entries):
        sf.write(tmp_path / e["audio"], np.concatenate(noise_chunks(N_UNITS, 1 + k, speech_units=(1,))), 16000)
    model = random_model(3, protocol.vocab_size)
    monkeypatch.setattr(ticktock.scenarios.store, "ensure_suite", lambda suite, **kw: (tmp_path, entries))
    monkeypatch.setattr(ticktock.runtime, "load_runtime", lambda *a, **kw: Runtime(model, protocol, "random", True))


def test_bench_keeps_every_sweep_points_units(protocol, tmp_path, monkeypatch):
    """--sessions 1,2: units.jsonl holds N = 1, units-sessions-2.jsonl N = 2, where sessions wait on each other."""
    from ticktock.bench.report import read_units
    from ticktock.cli import main

    _fake_suite(tmp_path, monkeypatch, protocol, 2)
    out = tmp_path / "res"
    assert main(["bench", "--decoders", "ar", "--sessions", "1,2", "--no-plots", "--out", str(out)]) == 0
    alone = read_units(out)
    shared = [json.loads(line) for line in (out / "units-sessions-2.jsonl").read_text().splitlines()]
    assert len(alone) == len(shared) and {r["session"] for r in shared} == {"fake-0", "fake-1"}
    assert [r["tokens"] for r in alone] == [r["tokens"] for r in shared]  # the same tokens, later
    assert sum(r["latency_ms"] for r in shared) > sum(r["latency_ms"] for r in alone)


def test_bench_command_json_line_keeps_its_keys_and_names_the_results_folder(protocol, tmp_path, monkeypatch,
                                                                               capsys):
    """The --json line is a superset of what it was (same keys, same order) with the results folder last."""
    from ticktock.cli import main

    _fake_suite(tmp_path, monkeypatch, protocol, 1)
    out = tmp_path / "res"
    assert main(["bench", "--decoders", "sl", "--no-plots", "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    line = json.loads(captured.out.strip().splitlines()[-1])
    assert list(line) == ["suite", "clock", "temperature", "concurrent_sessions", "decoders", "out"]
    assert line["out"] == str(out.resolve()) and (out / "summary.json").exists()
    config = json.loads((out / "config.json").read_text())
    assert config["hardware"] and config["hardware"] in (out / "report.md").read_text()  # which card or CPU ran it
    assert "bench quick" in captured.err  # progress, on stderr (plain lines: stderr is not a terminal here)


def test_bench_tables_fit_80_columns():
    import io

    from rich.console import Console

    from ticktock.commands.bench import summary_tables, sweep_tables

    row = {"speak_speedup": 1.234, "tool_speedup": 2.31, "mat": 1.87, "lossless": 1.0, "speak_latency_ms": 123.4,
           "tool_latency_ms": 12345.6, "onset_ms": 150.2, "deadline_miss_rate": 0.0123, "lagging_sessions": 0.05,
           "max_lag_ms_max": 23456.0}
    summary = {d: row for d in ["ar", "pld", "tr", "lookahead", "sl", "sl-silence", "sl-runnerup", "sl-branch"]}
    console = Console(file=io.StringIO(), width=200)
    for table in summary_tables(summary) + sweep_tables("temperature", {"0": summary, "0.5": summary, "1": summary},
                                                         list(summary)[1:]):
        console.print(table)
    text = console.file.getvalue()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
