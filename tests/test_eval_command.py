"""`ticktock eval`: the JSON line, and `--families` picking the sessions it scores."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from ticktock.protocol import DuplexProtocol

from conftest import noise_chunks, random_model
from test_memory import N_UNITS, fake_entry


@pytest.fixture
def two_families(protocol, tmp_path, monkeypatch):
    """A pause-handling and a short-QA session over noise, and a random model to run them."""
    import ticktock.runtime
    import ticktock.scenarios.store
    from ticktock.runtime import Runtime

    entries = []
    for i, family in enumerate(["pause_handling", "short_qa"]):
        e = {**fake_entry(), "id": f"fake-{i}", "family": family, "audio": f"audio/fake-{i}.wav", "recall": []}
        e["units"] = [{**u, "tags": [t for t in u["tags"] if t != "recall"]} for u in e["units"]]
        entries.append(e)
    (tmp_path / "audio").mkdir()
    for e in entries:
        sf.write(tmp_path / e["audio"], np.concatenate(noise_chunks(N_UNITS, 3)), 16000, subtype="PCM_16")
    p = DuplexProtocol(protocol.tokenizer, max_unit_tokens=6)
    model = random_model(1, p.vocab_size)
    monkeypatch.setattr(ticktock.scenarios.store, "ensure_suite", lambda suite, **kw: (tmp_path, entries))
    monkeypatch.setattr(ticktock.runtime, "load_runtime", lambda *a, **kw: Runtime(model, p, "random", True))
    return entries


def test_eval_scores_only_the_families_asked_for(two_families, capsys):
    from ticktock.cli import main

    assert main(["eval", "--json"]) == 0
    every = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert every["sessions"] == 2 and set(every["decision_acc_by_family"]) == {"pause_handling", "short_qa"}
    assert main(["eval", "--families", "pause_handling", "--json"]) == 0
    some = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert some["sessions"] == 1 and set(some["decision_acc_by_family"]) == {"pause_handling"}
    assert some["units"] == N_UNITS


def test_eval_refuses_an_unknown_family(capsys):
    from ticktock.cli import main

    assert main(["eval", "--families", "pause_handling,smalltalk"]) == 2
    assert "unknown families: smalltalk" in capsys.readouterr().err


def test_eval_refuses_no_workers(capsys):
    from ticktock.cli import main

    assert main(["eval", "--workers", "0"]) == 2
    assert "--workers must be a positive integer" in capsys.readouterr().err


def test_parallel_sessions_equal_the_serial_ones(tmp_path):
    """Worker processes (the shipped pair, side channel on) give every session the outcome one process gives."""
    from ticktock.bench.quality import EvalJob, run_session
    from ticktock.bench.workers import run_jobs
    from ticktock.runtime import load_runtime
    from ticktock.scenarios.world import tool_result

    entries = [{**fake_entry(), "id": f"fake-{i}", "family": "short_qa", "audio": f"audio/fake-{i}.wav"}
               for i in range(3)]
    (tmp_path / "audio").mkdir()
    for i, e in enumerate(entries):
        sf.write(tmp_path / e["audio"], np.concatenate(noise_chunks(N_UNITS, 5 + i, speech_units=(1, 2))), 16000,
                 subtype="PCM_16")
    ticks = []
    done = run_jobs(EvalJob(None, None, "cpu", "after_content"), tmp_path, entries, workers=2,
                    on_result=lambda *_: ticks.append(1))
    base, side = [b for b, _ in done], [s for _, s in done]
    assert len(ticks) == 3 and len(base) == len(side) == 3
    rt, rt_side = load_runtime(None, "cpu"), load_runtime(None, "cpu", side_channel=True)
    for e, b, s in zip(entries, base, side):
        audio, _ = sf.read(tmp_path / e["audio"], dtype="float32")
        alone_b = run_session(rt.model, rt.protocol, e, audio, tool_result)
        alone_s = run_session(rt_side.model, rt_side.protocol, e, audio, tool_result, side_channel="after_content")
        assert [u.tokens for u in b.units] == [u.tokens for u in alone_b.units]
        assert [(u.tokens, u.asr) for u in s.units] == [(u.tokens, u.asr) for u in alone_s.units]
