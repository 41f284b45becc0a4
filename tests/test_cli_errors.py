"""The command line's errors: one line on stderr (the reason and what to do), a non-zero exit status, no traceback
unless asked for (`--debug`, TICKTOCK_DEBUG=1); `--version`; and the demo on a plain recording."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from conftest import random_model


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got {lines}"
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def bad_audio(tmp_path):
    """Files `ticktock demo --wav` must refuse, by name."""
    (tmp_path / "notes.txt").write_text("what is the capital of france\n")
    sf.write(tmp_path / "empty.wav", np.zeros(0, dtype=np.float32), 16000)
    nan = np.zeros(16000, dtype=np.float32)
    nan[100] = np.nan
    sf.write(tmp_path / "nan.wav", nan, 16000, subtype="FLOAT")
    return {"missing": tmp_path / "missing.wav", "text": tmp_path / "notes.txt", "empty": tmp_path / "empty.wav",
            "nan": tmp_path / "nan.wav", "folder": tmp_path}


@pytest.mark.parametrize("case, reason, todo", [
    ("missing", "audio file not found", "check the path"),
    ("text", "not a readable audio file", "wav, flac or ogg"),
    ("empty", "audio file is empty", "record or render some audio"),
    ("nan", "NaN or infinite samples", "export the recording again"),
    ("folder", "not a file", "not a folder"),
])
def test_demo_refuses_bad_audio_in_one_line(case, reason, todo, bad_audio, capsys):
    from ticktock.cli import main

    assert main(["demo", "--wav", str(bad_audio[case])]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith("ticktock: error: ") and reason in line and todo in line


def test_an_unknown_decoder_lists_the_valid_ones(capsys):
    from ticktock.cli import main
    from ticktock.decoding.registry import DECODERS

    with pytest.raises(SystemExit) as stop:
        main(["demo", "--decoder", "foo"])
    assert stop.value.code == 2
    line = one_error_line(capsys.readouterr().err)
    assert "invalid choice: 'foo'" in line and all(repr(d) in line for d in DECODERS)
    assert "ticktock demo --help" in line


@pytest.mark.parametrize("argv, reason", [
    (["demo", "--example", "nope"], "unknown example 'nope'; choose from"),
    (["bench", "--decoders", "ar,foo"], "unknown decoder(s) foo; known: ar,"),
    (["bench", "--temperature", "hot"], "--temperature: expected a comma-separated list of numbers"),
    (["serve", "--ray", "replicas=2", "gpus=1"], "--ray takes KEY=VALUE with KEY one of replicas, cpus,"),
    (["bench", "--live", "serial"], "--live runs sessions in real time: it needs --clock wall"),
    (["eval", "--families", "smalltalk"], "unknown families: smalltalk"),
    (["data", "make", "--suite", "nope"], "invalid choice: 'nope'"),
    ([], "the following arguments are required: command"),
])
def test_usage_errors_are_one_line(argv, reason, capsys):
    from ticktock.cli import main

    try:
        rc = main(argv)
    except SystemExit as stop:  # argparse's own errors
        rc = stop.code
    assert rc == 2
    assert reason in one_error_line(capsys.readouterr().err)


def test_a_bad_json_beside_the_wav_is_one_line(tmp_path, capsys, tiny_runtime):
    from ticktock.cli import main

    sf.write(tmp_path / "q.wav", np.zeros(8000, dtype=np.float32), 16000)
    (tmp_path / "q.json").write_text("{not json")
    assert main(["demo", "--wav", str(tmp_path / "q.wav")]) == 2
    assert "q.json is not JSON" in one_error_line(capsys.readouterr().err)


def test_an_unexpected_error_is_one_line_and_debug_shows_it(monkeypatch, capsys):
    import ticktock.commands.demo as demo
    from ticktock.cli import main

    def boom(args):
        raise RuntimeError("something broke\nacross two lines")

    monkeypatch.setattr(demo, "run", boom)
    assert main(["demo"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "RuntimeError: something broke across two lines" in line and "--debug" in line
    with pytest.raises(RuntimeError):
        main(["demo", "--debug"])
    monkeypatch.setenv("TICKTOCK_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main(["demo"])


def test_version(capsys):
    from importlib.metadata import version

    from ticktock.cli import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"ticktock {version('ticktock')}"
    with pytest.raises(SystemExit) as stop:  # argparse's --version, beside other options
        main(["--version", "--debug"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"ticktock {version('ticktock')}"


def _ticktock(*argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TICKTOCK_DEBUG"}
    return subprocess.run([sys.executable, "-m", "ticktock.cli", *argv], capture_output=True, text=True, env=env,
                          timeout=120)


def test_a_missing_wav_from_a_real_process(tmp_path):
    proc = _ticktock("demo", "--wav", str(tmp_path / "nope.wav"))
    assert proc.returncode == 2 and proc.stdout == ""
    missing = tmp_path / "nope.wav"
    assert one_error_line(proc.stderr) == f"ticktock: error: audio file not found: {missing}; check the path"
    proc = _ticktock("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("ticktock ")


def test_a_command_error_from_a_real_process():
    """`python -m ticktock.cli` (as the GPU scripts run it): a command's own error is one line, status 2."""
    proc = _ticktock("bench", "--live", "batched", "--clock", "cost")
    assert proc.returncode == 2
    assert one_error_line(proc.stderr) == ("ticktock: error: --live runs sessions in real time: it needs --clock wall "
                                           "and one worker")


# ----------------------------------------------------------------- the demo on a plain recording


@pytest.fixture
def tiny_runtime(protocol, monkeypatch):
    """`ticktock demo` on a tiny random model (milliseconds a unit) instead of the shipped one."""
    import ticktock.commands.demo as demo
    from ticktock.runtime import Runtime

    model = random_model(2, protocol.vocab_size)
    seen = {}

    def load(path, device, dtype, side_channel=False):
        seen["side_channel"] = side_channel
        return Runtime(model, protocol, "random", True)

    monkeypatch.setattr(demo, "load_runtime", load)
    return seen


def test_demo_pads_a_recording_that_ends_mid_turn(tmp_path, capsys, tiny_runtime):
    from ticktock.cli import main

    rng = np.random.default_rng(0)
    speech = np.concatenate([(rng.standard_normal(24000) * 0.3).astype(np.float32), np.zeros(1600, np.float32)])
    sf.write(tmp_path / "q.wav", speech, 16000)  # 1.5 s of "speech", 0.1 s of silence
    assert main(["demo", "--wav", str(tmp_path / "q.wav"), "--decoder", "ar", "--json"]) == 0
    out = capsys.readouterr().out
    units = json.loads(out.strip().splitlines()[-1])["q"]
    assert len(units) >= 4  # 1.6 s + 2.4 s of silence, and more while the model is mid-turn
    assert "note: appended 2.4 s of silence" in out and "ends 0.1 s after its last speech" in out
    assert "post-audio latency" in out and "missed its deadline" in out  # the legend
    legend = out[out.index("ℓ_t ms  post-audio"):].splitlines()[:-1]  # (a random model's text may hold control bytes)
    assert len(legend) >= 5 and all(len(line) <= 80 for line in legend)

    assert main(["demo", "--wav", str(tmp_path / "q.wav"), "--no-pad", "--json"]) == 0
    out = capsys.readouterr().out
    assert len(json.loads(out.strip().splitlines()[-1])["q"]) == 2 and "note:" not in out


def test_demo_transcript_turns_the_side_channel_on(tmp_path, capsys, tiny_runtime):
    from ticktock.cli import main

    sf.write(tmp_path / "q.wav", np.zeros(40000, dtype=np.float32), 16000)
    assert main(["demo", "--wav", str(tmp_path / "q.wav"), "--transcript"]) == 0
    assert tiny_runtime["side_channel"] is True
    assert "heard (side channel, after_content):" in capsys.readouterr().out


def test_speech_end_and_the_padding():
    from ticktock.audio import speech_end
    from ticktock.commands.demo import pad_tail

    x = np.zeros(48000, dtype=np.float32)
    x[8000:24000] = 0.5 * np.sin(np.arange(16000) / 5)  # speech from 0.5 s to 1.5 s
    assert speech_end(x) == pytest.approx(1.5, abs=0.02)
    assert speech_end(np.zeros(16000, np.float32)) == 0.0
    padded, appended, had = pad_tail(x)
    assert had == pytest.approx(1.5, abs=0.02) and appended == pytest.approx(1.0, abs=0.02)
    assert padded.size == x.size + round(appended * 16000)
    assert pad_tail(padded)[1] == 0.0  # enough silence already


def test_the_default_system_prompt_is_one_the_model_was_trained_with():
    from ticktock.commands.demo import DEFAULT_SYSTEM_PROMPT
    from ticktock.scenarios.suites import make_scripts

    assert DEFAULT_SYSTEM_PROMPT in {s.system for s in make_scripts("train", 200)}


def test_serve_ray_options_parse():
    from ticktock.commands.serve import RayOptions

    assert RayOptions.parse([]) == RayOptions(replicas=2, cpus=1.0, per_gpu=1, max_connections=None, address=None)
    opts = RayOptions.parse(["replicas=3", "cpus=0.5", "per_gpu=2", "max_connections=4", "address=auto"])
    assert (opts.replicas, opts.cpus, opts.per_gpu, opts.max_connections, opts.address) == (3, 0.5, 2, 4, "auto")
    for bad, reason in ((["replicas"], "KEY=VALUE"), (["replicas=two"], "expected a number"),
                        (["per_gpu=0"], "at least 1")):
        with pytest.raises(ValueError, match=reason):
            RayOptions.parse(bad)
