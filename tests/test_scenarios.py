"""The synthetic world: scripts obey the timing rules, rendering gives exact word times."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from ticktock.audio import SAMPLE_RATE
from ticktock.scenarios import (CHUNK_S, FAMILIES, HELDOUT_VOICES, RESPONSE_DELAY_S,
                                GENERATORS, SUITES, TRAIN_VOICES, EspeakRenderer, Script, Voice, check_script,
                                corpus_texts, espeak_available, format_call, format_calls, load_manifest,
                                long_session, make_scripts, onset_unit, parse_call, parse_calls, realize,
                                render_script,
                                render_session, run_tool, same_call, write_suite)
from ticktock.scenarios.text import speech_pieces
from ticktock.scenarios.intents.memo import dictation
from ticktock.scenarios.voices import draw_voice

needs_espeak = pytest.mark.skipif(not espeak_available(), reason="espeak-ng not installed")
N_PER_FAMILY = 40


@pytest.fixture(scope="module")
def renderer() -> EspeakRenderer:
    return EspeakRenderer()


@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_scripts_are_valid(family: str) -> None:
    for i in range(N_PER_FAMILY):
        s = FAMILIES[family](random.Random(i))
        assert s.family == family
        check_script(s)
        _, tl = realize(s)
        check_script(s, tl.words)
        for u in s.units:
            if u.decision == "tool":
                name, _ = parse_call(u.content)
                assert s.units[u.index + 1].tool_result == run_tool(u.content), "result on the next unit"
        assert any(u.decision != "listen" for u in s.units) or family == "background"
        assert s.units[0].decision == "listen" and s.units[-1].decision == "listen"


@pytest.mark.parametrize("family,tag", [("pause_handling", "pause"), ("backchannel", "backchannel"),
                                        ("interruption", "barge_in"), ("background", "background"),
                                        ("tool_call", "tool"), ("dictation_recall", "recall")])
def test_family_marks_its_event(family: str, tag: str) -> None:
    for i in range(N_PER_FAMILY):
        s = FAMILIES[family](random.Random(i))
        tagged = [u for u in s.units if tag in u.tags]
        assert tagged, f"{family} session {i} has no {tag!r} unit"
        if tag in ("pause", "barge_in", "background"):
            assert all(u.decision == "listen" for u in tagged if "turn_end" not in u.tags)
        if tag == "backchannel":
            assert all(u.decision == "speak" for u in tagged), "the model keeps speaking"


def test_onset_rule() -> None:
    assert onset_unit(3.3) == 3  # chunk 3 ends at 4.0 >= 3.9
    assert onset_unit(3.4) == 3  # 4.0 >= 4.0
    assert onset_unit(3.41) == 4
    s = FAMILIES["short_qa"](random.Random(0))
    first = next(u for u in s.units if u.decision != "listen")
    last_end = max(w.end_s for w in s.utterances if w.speaker == "user")
    assert (first.index + 1) * CHUNK_S >= last_end + RESPONSE_DELAY_S > first.index * CHUNK_S


def test_answer_and_tool_call_match_units() -> None:
    s = FAMILIES["tool_call"](random.Random(3))
    assert s.tool_call in [u.content for u in s.units if u.decision == "tool"]
    spoken = [u for u in s.units if "answer" in u.tags and u.decision == "speak"]
    assert " ".join(u.content for u in spoken) == s.answer
    assert spoken[-1].turn_end and not any(u.turn_end for u in spoken[:-1])


def test_speech_pieces_roundtrip() -> None:
    text = "i found flight JL123 at 9:40 for 120 dollars. the capital of peru is lima."
    pieces = speech_pieces(text)
    assert " ".join(pieces) == text and all(1 <= len(p.split()) <= 4 for p in pieces)


def test_scripts_are_deterministic_and_serialisable() -> None:
    a, b = make_scripts("quick", n=18), make_scripts("quick", n=18)
    assert [x.to_dict() for x in a] == [x.to_dict() for x in b]
    assert [x.family for x in a[:9]] == list(FAMILIES), "families round-robin"
    for s in a:
        d = json.loads(json.dumps(s.to_dict()))
        assert Script.from_dict(d).to_dict() == s.to_dict()
    assert make_scripts("quick", n=3, seed=7)[0].to_dict() != a[0].to_dict()


def test_suites_have_distinct_seeds_and_voice_splits() -> None:
    own = [s for s in SUITES.values() if s.source == s.name]  # a copy shares its source's seed on purpose
    assert len({s.seed for s in own}) == len(own)
    assert all(s.seed == SUITES[s.source].seed for s in SUITES.values())
    assert SUITES["train"].split == "train" and SUITES["train"].n is None
    # evaluation speaks held-out voices, other engines that never train, or (kdl, MBROLA, Pico: heldout's scripts in a
    # training engine's voices, to follow what training on that engine teaches) those engines' training voices
    allowed = ("heldout", "festival-kdl", "sam", "flite", "mbrola-train", "pico-train")
    assert all(s.split in allowed for k, s in SUITES.items() if k != "train")
    assert {k for k, s in SUITES.items() if s.split.endswith("-train")} == {"heldout-mbrola", "heldout-pico"}
    assert not set(TRAIN_VOICES) & set(HELDOUT_VOICES)
    bases = lambda vs: {v.split("+")[0] for v in vs}  # noqa: E731
    variants = lambda vs: {v.split("+")[1] for v in vs}  # noqa: E731
    assert not bases(TRAIN_VOICES) & bases(HELDOUT_VOICES)
    assert not variants(TRAIN_VOICES) & variants(HELDOUT_VOICES)
    rng = random.Random(0)
    assert {draw_voice(rng, "heldout").name for _ in range(50)} <= set(HELDOUT_VOICES)


def test_long_session_has_recall() -> None:
    s = long_session(random.Random(0), minutes=3)
    check_script(s)
    assert s.n_units >= 180 and len(s.recall) >= 3
    assert sum("recall" in u.tags and u.turn_end for u in s.units) == len(s.recall)


def test_long_session_asks_only_about_the_latest_memo_of_each_subject(monkeypatch) -> None:
    """Two shopping lists make "what was the first item?" ambiguous: the newer one is what it asks about."""
    from ticktock.scenarios import families

    memos = []
    monkeypatch.setattr(families, "dictation", lambda rng: memos.append(dictation(rng)) or memos[-1])
    repeated = 0
    for seed in range(6):
        memos.clear()
        s = families.long_session(random.Random(seed), minutes=4)
        latest = {m.subject: m for m in memos}
        repeated += len(memos) - len(latest)
        for r in s.recall:
            owner = [m for m in memos if (r["question"], r["answer"]) in m.questions][-1]
            assert latest[owner.subject] is owner, (r, owner.subject)
    assert repeated > 0  # the sessions did dictate a subject twice


def test_corpus_texts() -> None:
    lines = corpus_texts(n_scripts=90)
    assert len(lines) > 500 and len(set(lines)) == len(lines)
    assert any(line.startswith('{"name": "find_flights"') for line in lines)
    assert len({w for line in lines for w in line.split()}) < 5000


@needs_espeak
def test_render_session(renderer: EspeakRenderer) -> None:
    for family in ("pause_handling", "background"):
        s = FAMILIES[family](random.Random(1))
        rng = random.Random(1)
        out = render_session(s, Voice("en-us+m3", 170, 50), rng, renderer)
        assert out.audio.dtype == np.float32 and out.audio.shape == (out.script.n_units * SAMPLE_RATE,)
        assert np.isfinite(out.audio).all() and np.abs(out.audio).max() <= 1.0
        check_script(out.script, out.words)
        words = [w for w in out.words if w["speaker"] == "user"]
        assert [w["word"] for w in words[:3]] == s.utterances[0].text.replace(",", "").split()[:3] \
            or family == "background"
        for w in out.words:  # each word's clip really is there: louder than the silence before
            a, b = int(w["start"] * SAMPLE_RATE), int(w["end"] * SAMPLE_RATE)
            assert 0 <= a < b <= len(out.audio)


@needs_espeak
def test_render_places_words_exactly(renderer: EspeakRenderer) -> None:
    from ticktock.scenarios.augment import CLEAN

    s = FAMILIES["short_qa"](random.Random(5))
    out = render_session(s, Voice("en-us+f2", 160, 50), random.Random(0), renderer, CLEAN)
    mask = np.zeros(len(out.audio), dtype=bool)
    for w in out.words:
        mask[int(w["start"] * SAMPLE_RATE): int(w["end"] * SAMPLE_RATE) + 1] = True
    assert np.abs(out.audio[~mask]).max() < 1e-3, "sound outside the word spans"
    assert np.sqrt(np.mean(out.audio[mask] ** 2)) > 0.01


@needs_espeak
def test_render_is_deterministic_and_write_suite(tmp_path, capsys) -> None:
    s = make_scripts("quick", n=1)[0]
    a = render_script(s, "quick", EspeakRenderer())
    b = render_script(s, "quick", EspeakRenderer())
    assert np.array_equal(a.audio, b.audio) and a.words == b.words and a.voice == b.voice
    assert a.voice["main"]["name"] in HELDOUT_VOICES
    write_suite("quick", tmp_path, n=2, progress=True)
    assert capsys.readouterr().out == "", "the progress bar must not reach stdout (a command's --json goes there)"
    entries = load_manifest(tmp_path)
    assert len(entries) == 2 and (tmp_path / entries[0]["audio"]).exists()
    import soundfile as sf

    audio, sr = sf.read(tmp_path / entries[0]["audio"], dtype="float32")
    assert sr == SAMPLE_RATE and len(audio) == entries[0]["n_units"] * SAMPLE_RATE
    assert {"audio", "voice", "words", "units", "plan"} <= set(entries[0])


def test_resample_and_silence_split() -> None:
    from ticktock.scenarios.espeak import resample_fft, voiced_segments

    sr = 22050
    t = np.arange(sr) / sr
    tone = np.sin(2 * np.pi * 440 * t).astype(np.float32)
    y = resample_fft(tone, sr, SAMPLE_RATE)
    assert len(y) == SAMPLE_RATE and abs(np.sqrt(np.mean(y**2)) - np.sqrt(0.5)) < 0.01
    x = np.concatenate([tone[:4000], np.zeros(8000, np.float32), tone[:3000], np.zeros(500, np.float32),
                        tone[:3000]])
    segs = voiced_segments(x, sr)  # the 500-sample gap (23 ms) is inside a word
    assert len(segs) == 2 and segs[0][1] < 4000 + 8000


@needs_espeak
def test_function_words_do_not_merge(renderer: EspeakRenderer) -> None:
    clips = renderer.words(["of", "the", "that", "there", "were"], Voice("en-gb-x-rp+f5", 180, 50))
    assert set(clips) == {"of", "the", "that", "there", "were"}
    assert all(0.05 < len(c) / SAMPLE_RATE < 0.7 for c in clips.values())


def test_a_cached_suite_from_older_scripts_is_stale() -> None:
    """A suite rendered before the generator changed is rendered again, not silently reused."""
    from ticktock.scenarios.store import is_stale
    from ticktock.scenarios.suites import make_scripts

    entries = [s.to_dict() for s in make_scripts("quick")]
    for e in entries:  # rendering moves the times: that alone is no change
        for u in e["utterances"]:
            u["end_s"] += 0.3
    assert not is_stale("quick", entries)
    recall = next(e for e in entries if e["recall"])
    recall["recall"][0]["answer"] += " (changed)"
    assert is_stale("quick", entries)


def test_sessions_appended_to_a_suite_leave_the_earlier_ones_unchanged() -> None:
    """`full` grew by 40 two-call sessions after results were measured on its first 756: those stay the same."""
    from dataclasses import replace

    full = SUITES["full"]
    nine = replace(full, n=756, appended=())
    assert [full.family_at(i) for i in range(756)] == [nine.family_at(i) for i in range(756)]
    assert [full.family_at(i) for i in range(756, full.n)] == ["tool_pair"] * 40
    assert [s.to_dict() for s in make_scripts(full, 3)] == [s.to_dict() for s in make_scripts(nine, 3)]
    assert make_scripts(full)[-1].id == f"full-{full.n - 1:05d}-tool_pair"


@needs_espeak
def test_a_cached_suite_that_grew_renders_only_its_new_sessions(tmp_path, monkeypatch) -> None:
    from dataclasses import replace

    from ticktock.scenarios import store, suites

    grown = replace(SUITES["pairs"], n=3)
    monkeypatch.setitem(suites.SUITES, "pairs", replace(grown, n=2))
    folder, entries = store.ensure_suite("pairs", root=tmp_path, progress=False)
    first = (folder / entries[0]["audio"]).stat().st_mtime_ns
    monkeypatch.setitem(suites.SUITES, "pairs", grown)
    folder, entries = store.ensure_suite("pairs", root=tmp_path, progress=False)
    assert [e["id"] for e in entries] == [s.id for s in make_scripts(grown)]
    assert (folder / entries[0]["audio"]).stat().st_mtime_ns == first  # not rendered again
    assert all((folder / e["audio"]).exists() for e in entries)


def test_a_suite_cached_with_calls_in_another_format_is_stale() -> None:
    from ticktock.scenarios.store import is_stale
    from ticktock.scenarios.suites import make_scripts

    entries = [s.to_dict() for s in make_scripts("quick")]
    assert not is_stale("quick", entries)
    unit = next(u for e in entries for u in e["units"] if u["decision"] == "tool")
    name, kwargs = parse_call(unit["content"])
    unit["content"] = f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")"
    assert is_stale("quick", entries)


def test_tool_calls_are_json_and_the_keyword_form_still_reads() -> None:
    call = format_call("find_flights", origin="TYO", dest="OSA", day="Fri")
    assert json.loads(call) == {"name": "find_flights", "arguments": {"origin": "TYO", "dest": "OSA", "day": "Fri"}}
    want = ("find_flights", {"origin": "TYO", "dest": "OSA", "day": "Fri"})
    assert parse_call(call) == want == parse_call('find_flights(origin="TYO", dest="OSA", day="Fri")')
    assert run_tool(call) == run_tool('find_flights(origin="TYO", dest="OSA", day="Fri")')
    assert same_call(call, ' {"arguments": {"day": "Fri", "dest": "OSA", "origin": "TYO"}, "name": "find_flights"}')
    assert not same_call(call, format_call("find_flights", origin="TYO", dest="OSA", day="Sat"))
    assert not same_call(call, call[:-1])  # cut short: not a call at all


def test_two_tools_at_once_are_one_unit_holding_both_calls_as_a_json_list() -> None:
    for i in range(N_PER_FAMILY):
        s = GENERATORS["tool_pair"](random.Random(i))
        check_script(s)
        _, tl = realize(s)
        check_script(s, tl.words)
        tools = [u for u in s.units if u.decision == "tool"]
        assert len(tools) == 1 and tools[0].content == s.tool_call
        calls = parse_calls(s.tool_call)
        assert len(calls) == 2 and calls[0][0] != calls[1][0], "two different tools"
        result = s.units[tools[0].index + 1].tool_result
        assert result == run_tool(s.tool_call) and result.count("; ") == 1
        assert s.units[tools[0].index + 1].decision == "speak" and "answer" in s.units[tools[0].index + 1].tags


def test_a_list_of_calls_reads_back_and_compares_in_order() -> None:
    timer, weather = format_call("set_timer", minutes=5), format_call("get_weather", city="PAR", day="Fri")
    both = format_calls([timer, weather])
    assert json.loads(both) == [json.loads(timer), json.loads(weather)]
    assert parse_calls(both) == [parse_call(timer), parse_call(weather)]
    assert parse_calls(timer) == [parse_call(timer)]
    assert run_tool(both) == f"{run_tool(timer)}; {run_tool(weather)}"
    assert same_call(both, both.replace(", ", ","))
    assert not same_call(both, format_calls([weather, timer]))  # order matters
    assert not same_call(both, timer) and not same_call(both, both[:-1])
    for bad in ("[]", "[1, 2]", f"[{timer}, 3]", '[{"name": "set_timer"}]', f"[{timer}"):
        with pytest.raises(ValueError):
            parse_calls(bad)
    with pytest.raises(ValueError):
        parse_call(both)  # one call is never a list


def test_the_pairs_suite_fills_the_65_to_128_token_bucket() -> None:
    """The shipped tokenizer writes every pair's tool unit (decision + calls + terminator) in 65-128 tokens,
    and the protocol does not cut it."""
    from ticktock.model import DEFAULT_MODEL
    from ticktock.model.tokenizer import load_tokenizer
    from ticktock.protocol import Decision, DuplexProtocol

    protocol = DuplexProtocol(load_tokenizer(DEFAULT_MODEL / "tokenizer.json"))
    scripts = make_scripts("pairs")
    assert len(scripts) == SUITES["pairs"].n and {s.family for s in scripts} == {"tool_pair"}
    for s in scripts:
        unit = next(u for u in s.units if u.decision == "tool")
        n = len(protocol.output_ids(Decision.TOOL, unit.content))
        assert 65 <= n <= 128 and n <= protocol.max_unit_tokens, (s.id, n)


@pytest.mark.parametrize("bad", ['{"name": "set_timer"}', '{"name": "set_timer", "arguments": {"minutes": [5]}}',
                                 '{"name": "set timer", "arguments": {}}', '{"name": 3, "arguments": {}}',
                                 '{"name": "set_timer", "arguments": {}, "extra": 1}', "[1, 2]", "set_timer(5)",
                                 '{"name": "set_timer", "arguments": {"minutes": 5}'])
def test_a_malformed_call_is_refused_with_a_clear_error(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_call(bad)


def test_tool_sessions_are_scored_by_call_not_by_spelling() -> None:
    from ticktock.bench.quality import calls_match

    timer, flight = format_call("set_timer", minutes=5), format_call("find_flights", origin="TYO", dest="OSA", day="Fri")
    assert calls_match([timer.replace(" ", ""), flight], [timer, flight])
    assert calls_match(["set_timer(minutes=5)"], [timer])
    assert not calls_match([flight, timer], [timer, flight])  # order matters
    assert not calls_match([timer], [timer, flight]) and not calls_match([], [])
    assert not calls_match([format_call("set_timer", minutes=6)], [timer])


@needs_espeak
def test_a_damaged_manifest_keeps_its_whole_entries_and_renders_the_rest(tmp_path, monkeypatch, capsys) -> None:
    from dataclasses import replace

    from ticktock.scenarios import store, suites

    monkeypatch.setitem(suites.SUITES, "pairs", replace(SUITES["pairs"], n=3))
    folder, entries = store.ensure_suite("pairs", root=tmp_path, progress=False)
    first = (folder / entries[0]["audio"]).stat().st_mtime_ns
    lines = (folder / "manifest.jsonl").read_text().splitlines()
    (folder / "manifest.jsonl").write_text(lines[0] + "\n" + lines[1][:40] + lines[2][:30] + "\n" + lines[2] + "\n")
    with pytest.raises(suites.DamagedManifest, match="line 2") as err:
        load_manifest(folder)
    assert err.value.entries == entries[:1]
    folder, again = store.ensure_suite("pairs", root=tmp_path, progress=False)
    assert again == entries and load_manifest(folder) == entries
    assert (folder / entries[0]["audio"]).stat().st_mtime_ns == first  # the whole entry was kept, not rendered
    assert "rendering the rest again" in capsys.readouterr().err
    assert not (folder / "manifest.jsonl.partial").exists()


def _render_pairs(root: str) -> list[str]:
    from ticktock.scenarios import store

    return [e["id"] for e in store.ensure_suite("pairs", root=Path(root), n=3, progress=False)[1]]


@needs_espeak
def test_two_commands_rendering_one_suite_at_once_leave_one_whole_manifest(tmp_path) -> None:
    import multiprocessing as mp

    with mp.get_context("fork").Pool(2) as pool:
        ids = pool.map(_render_pairs, [str(tmp_path)] * 2)
    want = [s.id for s in make_scripts("pairs", 3)]
    assert ids == [want, want]
    assert [e["id"] for e in load_manifest(tmp_path / "pairs-3")] == want


def test_jitter_suite_shifts_the_same_session_and_re_times_its_labels():
    """`<suite>-jitter`: the source's scripts and voices, the audio later by 0-1 s, every label moved with it."""
    from ticktock.scenarios.espeak import EspeakRenderer
    from ticktock.scenarios.suites import render_script, script_at

    renderer = EspeakRenderer()
    shifts = []
    for i in range(3):
        a, b = script_at("quick", i), script_at("quick-jitter", i)
        ra, rb = render_script(a, "quick", renderer), render_script(b, "quick-jitter", renderer)
        shift = b.plan["lead_s"] - a.plan["lead_s"]
        assert 0.0 <= shift <= 1.0 and ra.voice == rb.voice
        assert [w["word"] for w in ra.words] == [w["word"] for w in rb.words]
        assert abs(rb.words[0]["start"] - ra.words[0]["start"] - shift) < 1e-6
        first = lambda r: next(u.index for u in r.script.units if u.decision != "listen")  # noqa: E731
        assert first(rb) - first(ra) in (0, 1)  # the response moves with the speech
        shifts.append(shift)
    assert len(set(shifts)) == 3  # seeded per session, not one offset for all


def test_a_suite_rendered_otherwise_is_rendered_again(tmp_path, monkeypatch) -> None:
    """Scripts unchanged but the rendering changed since (another `RENDERING` stamp, or none: an older cache):
    the cache is rendered again; with the current stamp it is reused."""
    from dataclasses import replace

    from ticktock.scenarios import store, suites
    from ticktock.scenarios.render import RENDERING

    monkeypatch.setitem(suites.SUITES, "pairs", replace(SUITES["pairs"], n=1))
    calls = []
    real = store.write_suite

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "write_suite", counted)
    monkeypatch.setattr(suites, "_render_one", _fake_render)
    folder, _ = store.ensure_suite("pairs", root=tmp_path, progress=False)
    assert store.rendering_of(folder) == RENDERING and len(calls) == 1
    store.ensure_suite("pairs", root=tmp_path, progress=False)
    assert len(calls) == 1  # same stamp: reused
    (folder / "rendering").write_text(f"{RENDERING - 1}\n")
    store.ensure_suite("pairs", root=tmp_path, progress=False)
    assert len(calls) == 2 and store.rendering_of(folder) == RENDERING
    (folder / "rendering").unlink()
    store.ensure_suite("pairs", root=tmp_path, progress=False)
    assert len(calls) == 3


def _fake_render(job: tuple) -> dict:
    """A manifest entry of the script itself (no audio): the cache's bookkeeping is what is under test."""
    return job[0]
