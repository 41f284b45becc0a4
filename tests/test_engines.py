"""Speech engines: festival and flite give exact word times; held-out and outside voices never train;
the existing suites render as they did."""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from ticktock.audio.io import SAMPLE_RATE
from ticktock.scenarios import EspeakRenderer, espeak_available, make_scripts, render_script
from ticktock.scenarios.augment import CLEAN
from ticktock.scenarios.engines import Engines
from ticktock.scenarios.festival import festival_voices, word_span
from ticktock.scenarios.flite import flite_binary
from ticktock.scenarios.render import render_session
from ticktock.scenarios.suites import SUITES, script_at
from ticktock.scenarios.sam import PRESETS, sam_available
from ticktock.scenarios.mbrola import mbrola_voices
from ticktock.scenarios.pico import pico_languages
from ticktock.scenarios.voices import (FESTIVAL_TRAIN_VOICES, HELDOUT_VOICES, MBROLA_TRAIN_VOICES, OUTSIDE_VOICES,
                                       PICO_TRAIN_VOICES, SAM_HELDOUT_VOICES, SPLITS, TRAIN_VOICES, Voice, engine_of,
                                       split_of)
from ticktock.train.data import DATA_PRESETS, training_voice

needs_espeak = pytest.mark.skipif(not espeak_available(), reason="espeak-ng not installed")
FESTIVAL = festival_voices()


def _exact_word_times(voice: Voice) -> None:
    """Every word sits in the audio exactly where its times say: the clip alone fills [start, end)."""
    script = script_at("quick", 0)
    renderer = Engines()
    r = render_session(script, voice, random.Random(0), renderer, CLEAN)
    assert len(r.audio) == r.script.n_units * SAMPLE_RATE
    for w in r.words:
        clip = renderer.words([w["word"]], Voice(**r.voice[w["voice"]]))[w["word"]]
        a, b = int(round(w["start"] * SAMPLE_RATE)), int(round(w["end"] * SAMPLE_RATE))
        assert abs((b - a) - len(clip)) <= 2, w  # start and end are kept to 0.1 ms (1.6 samples)
        assert np.abs(r.audio[a:b]).max() > 0, w


@pytest.mark.skipif("ked_diphone" not in FESTIVAL, reason="festival's kdl voice not installed")
def test_festival_word_times_are_exact() -> None:
    _exact_word_times(Voice("festival/ked_diphone", 170))


@pytest.mark.skipif(not {"ked_diphone", "pc_diphone"} <= FESTIVAL, reason="festival's kdl and pc voices not installed")
def test_english_through_italian_diphones_word_times_are_exact() -> None:
    _exact_word_times(Voice("festival/english_pc_diphone", 170))


def test_an_english_front_end_voice_names_what_it_needs() -> None:
    from ticktock.scenarios.festival_english import diphones_of, needs, scheme_lines

    assert diphones_of("english_pc_diphone") == "pc_diphone" and diphones_of("pc_diphone") is None
    assert needs("english_lp_diphone") == ("ked_diphone", "lp_diphone") and needs("kal_diphone") == ("kal_diphone",)
    lines = "\n".join(scheme_lines("english_pc_diphone"))
    assert "(voice_ked_diphone)" in lines and "(us_db_select 'pc_lpc_group)" in lines and '("th" "t")' in lines
    assert '("th" "T")' in "\n".join(scheme_lines("english_hy_fi_mv_diphone"))  # Finnish has the dental


@pytest.mark.skipif(flite_binary() is None, reason="flite not installed")
def test_flite_word_times_are_exact() -> None:
    _exact_word_times(Voice("flite/slt", 160))


@pytest.mark.skipif("en-US" not in pico_languages(), reason="Pico (libttspico-utils) not installed")
def test_pico_word_times_are_exact() -> None:
    _exact_word_times(Voice("pico/en-US", 150))


@pytest.mark.skipif("mb-us2" not in mbrola_voices(), reason="MBROLA and its us2 voice not installed")
def test_mbrola_word_times_are_exact_and_never_connected() -> None:
    _exact_word_times(Voice("mb-us2", 160, 40))
    assert EspeakRenderer().utterances(["what is the capital of france"], Voice("mb-us2", 160)) == {}


@pytest.mark.skipif(not sam_available(), reason="SAM not installed (scripts/prepare_sam.sh)")
def test_sam_word_times_are_exact() -> None:
    _exact_word_times(Voice("sam/stuffy", 160))


def test_word_span_is_between_the_pauses() -> None:
    assert word_span([("pau", 0.2), ("ih", 0.3), ("z", 0.43), ("pau", 0.6)]) == (0.2, 0.43)
    assert word_span([("#", 0.03), ("k", 0.1), ("a", 0.5), ("#", 0.58), ("#", 0.6)]) == (0.03, 0.5)


def test_training_never_draws_heldout_or_outside_voices() -> None:
    never = set(HELDOUT_VOICES) | set(SAM_HELDOUT_VOICES) | set(OUTSIDE_VOICES)
    others = (*FESTIVAL_TRAIN_VOICES, *MBROLA_TRAIN_VOICES, *PICO_TRAIN_VOICES)
    assert not never & (set(TRAIN_VOICES) | set(others))
    assert all(engine_of(v) == "espeak" for v in TRAIN_VOICES + MBROLA_TRAIN_VOICES)
    assert all(engine_of(v) == "pico" for v in PICO_TRAIN_VOICES)
    rng, data = random.Random(0), DATA_PRESETS["multi-engine"]
    drawn = {training_voice(data, rng, others=others).name for _ in range(3000)}
    assert drawn <= set(TRAIN_VOICES) | set(others) and not drawn & never
    assert set(others) <= drawn  # the other engines take their share
    assert SPLITS["festival-kdl"] == ("festival/ked_diphone",) and split_of("festival/ked_diphone") == "festival-kdl"
    assert all(engine_of(v) == "flite" for v in SPLITS["flite"])
    assert {v.split("/")[1] for v in SAM_HELDOUT_VOICES} == set(PRESETS)


def test_heldout_engine_suites_are_heldouts_scripts() -> None:
    for name in ("heldout-sam", "heldout-festival-kdl", "heldout-flite", "heldout-mbrola", "heldout-pico"):
        assert SUITES[name].n == SUITES["heldout"].n >= 90
        for i in (0, 7, 150):
            a, b = script_at("heldout", i), script_at(name, i)
            assert (a.plan, a.system, a.units) == (b.plan, b.system, b.units)


# sha256 of the first sessions' audio as the code before the second engine rendered them (fresh renderer)
RENDERED = {("quick", 0): "338d9edce2379bcc", ("quick", 1): "0128b748ba3fb14d",
            ("heldout-jitter", 0): "6fb86ee004012704", ("heldout-jitter", 1): "198f065257cf7dec"}


@needs_espeak
@pytest.mark.parametrize("suite,i", list(RENDERED))
def test_existing_suites_render_as_before(suite: str, i: int) -> None:
    r = render_script(make_scripts(suite, i + 1)[i], suite, EspeakRenderer())
    assert hashlib.sha256(r.audio.tobytes()).hexdigest()[:16] == RENDERED[suite, i]


def test_festival_unpacked_elsewhere_reads_its_data_there(tmp_path, monkeypatch) -> None:
    """festival unpacked outside /usr (a GPU machine's kit, scripts/gpu_env.sh) finds init.scm and its voices only
    through --datadir; --libdir alone still looks in /usr/share/festival."""
    from ticktock.scenarios.festival import festival_command

    binary = tmp_path / "festival"
    binary.write_text("#!/bin/sh\n")
    monkeypatch.setenv("TICKTOCK_FESTIVAL", str(binary))
    monkeypatch.setenv("TICKTOCK_FESTIVAL_LIB", "/kit/usr/share/festival")
    cmd = festival_command()
    assert cmd[0] == str(binary)
    assert cmd[cmd.index("--datadir") + 1] == "/kit/usr/share/festival"
    monkeypatch.delenv("TICKTOCK_FESTIVAL_LIB")
    assert festival_command() == [str(binary)]
