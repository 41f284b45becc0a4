"""The page in headless Chromium when a session does not go to plan: every way a session can be refused or ended
leaves a readable reason on the page, the microphone off, no audio streaming, and a Start button that works.

The fake microphone plays a shipped example (Chromium's `--use-file-for-fake-audio-capture`, looped). An init script
counts what the page does behind its own back: `getUserMedia` calls and their tracks, WebSockets opened, and the
`type` of every message sent. Screenshots go to tests/artifacts/; `TICKTOCK_DOC_SCREENSHOTS=1` also writes the
docs/page-*.png ones.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from ticktock.commands.demo import EXAMPLES
from ticktock.decoding.registry import DECODERS
from ticktock.server import ServerConfig
from ticktock.server.background import BackgroundServer
from ticktock.server.wire import MAX_SYSTEM_CHARS

from browser_support import ARTIFACTS, BROWSER_MARKS, CHROMIUM, sync_api

pytestmark = BROWSER_MARKS
DOCS = Path(__file__).parent.parent / "docs"
HAS_IDLE_TIMEOUT = "idle_timeout" in ServerConfig.__dataclass_fields__

PROBE = """
window.__probe = { gum: 0, tracks: [], sockets: 0, sent: [] };
const gum = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
navigator.mediaDevices.getUserMedia = async (c) => {
  __probe.gum++; const s = await gum(c); __probe.tracks.push(...s.getTracks()); return s;
};
const NativeSocket = window.WebSocket;
window.WebSocket = class extends NativeSocket { constructor(...a) { super(...a); __probe.sockets++; } };
const nativeSend = NativeSocket.prototype.send;
NativeSocket.prototype.send = function (d) {
  try { __probe.sent.push(JSON.parse(d).type); } catch (e) { __probe.sent.push("?"); }
  return nativeSend.call(this, d);
};
"""
LIVE_TRACKS = "__probe.tracks.filter((t) => t.readyState === 'live').length"


@contextmanager
def chromium(example: str = "qa"):
    flags = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
             f"--use-file-for-fake-audio-capture={EXAMPLES / f'{example}.wav'}",
             "--autoplay-policy=no-user-gesture-required", "--no-sandbox"]
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=flags)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 760})
            page.add_init_script(PROBE)
            yield page
        finally:
            browser.close()


def server(runtime, tmp_path, **options) -> BackgroundServer:
    return BackgroundServer(ServerConfig(**{"port": 0, "log_dir": str(tmp_path / "sessions"), "tts": False, **options}),
                            runtime)


def status(page) -> str:
    return page.inner_text("#status")


def wait_status(page, prefix: str, timeout: float = 30_000) -> None:
    page.wait_for_function("(p) => document.querySelector('#status').textContent.startsWith(p)", arg=prefix,
                           timeout=timeout)


def wait_idle(page, timeout: float = 30_000) -> None:
    page.wait_for_function("!document.querySelector('#start').disabled", timeout=timeout)


def sent(page, kind: str) -> int:
    return page.evaluate("(k) => __probe.sent.filter((t) => t === k).length", kind)


def screenshot(page, name: str) -> None:
    """The top of the page (controls, notice, transcript, timeline): what a reader of docs/ needs, kept small."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), clip={"x": 0, "y": 0, "width": 1200, "height": 545})
    if os.environ.get("TICKTOCK_DOC_SCREENSHOTS"):
        shutil.copyfile(ARTIFACTS / name, DOCS / name)


def assert_back_to_start(page, frames_before: int | None = None) -> None:
    """Idle again: Start enabled, Stop disabled, the microphone released, and no audio leaving the page."""
    assert not page.is_disabled("#start") and page.is_disabled("#stop")
    assert page.evaluate(LIVE_TRACKS) == 0, "a microphone track is still live"
    frames = sent(page, "audio.append")
    page.wait_for_timeout(1200)  # the page used to keep streaming 10 frames a second into no_session errors
    assert sent(page, "audio.append") == frames, "audio still streams after the session ended"
    if frames_before is not None:
        assert frames == frames_before
    assert "no_session" not in page.inner_text("#events")


def start_again_reaches_the_server(page, srv: BackgroundServer) -> None:
    starts = sent(page, "session.start")
    page.click("#start")
    wait_status(page, "live")
    assert sent(page, "session.start") == starts + 1
    assert srv.server.health()["sessions"] == 1
    page.wait_for_function("Number(document.querySelector('#timeline').dataset.units) >= 1", timeout=20_000)
    page.click("#stop")
    wait_status(page, "closed")
    assert page.is_hidden("#notice") or "Stopped" not in page.inner_text("#notice")


# ---------------------------------------------------------------- the options the page offers


def test_controls_hold_to_what_the_protocol_accepts(runtime, tmp_path):
    with server(runtime, tmp_path) as srv, chromium() as page:
        page.goto(srv.http_url)
        page.wait_for_load_state("networkidle")
        decoders = page.eval_on_selector_all("#decoder option", "os => os.map((o) => o.value)")
        assert decoders == list(DECODERS)  # every registered decoder, in the registry's order
        assert page.get_attribute("#temperature", "min") == "0" and page.get_attribute("#temperature", "max") == "5"
        page.fill("#system", "x" * (MAX_SYSTEM_CHARS + 1))  # typing stops at the limit
        assert len(page.input_value("#system")) == MAX_SYSTEM_CHARS
        assert page.inner_text("#system-count") == f"{MAX_SYSTEM_CHARS} / {MAX_SYSTEM_CHARS}"

        page.fill("#system", "")
        page.fill("#temperature", "7")  # a number input takes it; the page must not send it
        page.click("#start")
        assert "temperature must be a number from 0 to 5" in page.inner_text("#notice")
        assert page.evaluate("__probe.sockets") == 0 and page.evaluate("__probe.gum") == 0
        assert_back_to_start(page)

        long_prompt = "y" * (MAX_SYSTEM_CHARS + 5)  # a ?system= preset is not cut by maxlength: refused on the page
        page.goto(f"{srv.http_url}/?system={long_prompt}")
        page.click("#start")
        assert f"{MAX_SYSTEM_CHARS + 5} characters" in page.inner_text("#notice")
        assert page.evaluate("__probe.sockets") == 0


# ---------------------------------------------------------------- every way a session ends


def test_rejected_start_ends_in_words_and_a_working_start(runtime, tmp_path):
    """bad_option from the server (a prompt over its limit): the page must not stream into no_session errors."""
    with server(runtime, tmp_path) as srv, chromium() as page:
        page.goto(srv.http_url)
        # the page holds the prompt to the protocol's limit; with its limit lifted (an older page, a stricter
        # server) the server's own refusal must still end cleanly
        page.evaluate("document.querySelector('#system').removeAttribute('maxlength')")
        page.fill("#system", "z" * (MAX_SYSTEM_CHARS + 1))
        page.click("#start")
        wait_idle(page)
        notice = page.inner_text("#notice")
        assert "The server refused to start the session." in notice
        assert f"system prompt longer than {MAX_SYSTEM_CHARS} characters" in notice
        assert status(page) == "rejected"
        assert page.evaluate("__probe.gum") == 0, "the microphone was opened for a session that never started"
        assert_back_to_start(page, frames_before=0)
        screenshot(page, "page-rejected.png")

        page.fill("#system", "")
        start_again_reaches_the_server(page, srv)


def test_server_busy_ends_in_words_and_a_working_start(runtime, tmp_path):
    from websockets.sync.client import connect

    options = {"idle_timeout": 0} if HAS_IDLE_TIMEOUT else {}  # the slot holder sends no audio
    with server(runtime, tmp_path, max_sessions=1, **options) as srv, chromium() as page:
        page.goto(srv.http_url)
        with connect(srv.url) as holder:  # another client holds the only slot
            holder.send(json.dumps({"type": "session.start"}))
            assert json.loads(holder.recv(timeout=30))["type"] == "session.started"
            page.click("#start")
            wait_idle(page)
            notice = page.inner_text("#notice")
            assert "The server is busy" in notice and "maximum of 1 concurrent session" in notice
            assert status(page) == "server busy"
            assert page.evaluate("__probe.gum") == 0, "the microphone was opened although the server was busy"
            assert_back_to_start(page, frames_before=0)
            screenshot(page, "page-busy.png")
        deadline = time.monotonic() + 20
        while srv.server.health()["sessions"] and time.monotonic() < deadline:
            time.sleep(0.1)  # the holder's session finishes and frees the slot
        start_again_reaches_the_server(page, srv)


@pytest.mark.skipif(not HAS_IDLE_TIMEOUT, reason="the server has no idle timeout (ServerConfig.idle_timeout)")
def test_idle_timeout_ends_in_words_and_a_working_start(runtime, tmp_path):
    with server(runtime, tmp_path, idle_timeout=2.0) as srv, chromium() as page:
        page.goto(srv.http_url)
        page.click("#start")
        wait_status(page, "live")
        page.wait_for_function("Number(document.querySelector('#timeline').dataset.units) >= 2", timeout=20_000)
        page.evaluate("state.audio.suspend()")  # the audio stops reaching the server (an OS interruption, say)
        wait_idle(page, timeout=20_000)
        notice = page.inner_text("#notice")
        assert "no audio reached it for too long" in notice and "no audio for 2 s" in notice
        assert status(page) == "timed out"
        assert_back_to_start(page)
        screenshot(page, "page-idle.png")
        start_again_reaches_the_server(page, srv)


def test_dropped_socket_ends_in_words_and_a_working_start(runtime, tmp_path):
    srv = server(runtime, tmp_path).start()
    port = srv.server.port
    with chromium() as page:
        try:
            page.goto(srv.http_url)
            page.click("#start")
            wait_status(page, "live")
            page.wait_for_function("Number(document.querySelector('#timeline').dataset.units) >= 1", timeout=20_000)
        finally:
            srv.close()  # the server goes away mid-session
        wait_idle(page, timeout=20_000)
        assert "The connection to the server was lost." in page.inner_text("#notice")
        assert status(page) == "disconnected"
        assert_back_to_start(page)
        with server(runtime, tmp_path, port=port) as again:  # back on the same address
            start_again_reaches_the_server(page, again)


# ---------------------------------------------------------------- both sides of the conversation


def test_transcript_shows_what_the_user_said_beside_the_reply(runtime, tmp_path):
    unit = {"type": "unit", "decision": "listen", "text": "", "terminator": None, "latency_ms": 50.0,
            "post_audio_ms": 40.0, "lag_ms": 0.0, "miss": False, "resident_slots": 100}
    with server(runtime, tmp_path) as srv, chromium() as page:
        page.goto(srv.http_url)
        page.evaluate("(u) => onEvent({...u, index: 0})", unit)  # a server without the side channel: no `asr`
        assert "sends no transcript" in page.inner_text("#asr-hint")
        heard = [{**unit, "index": 1, "asr": "what is two"}, {**unit, "index": 2, "asr": "times eight"},
                 {**unit, "index": 3, "asr": None, "decision": "speak", "text": "it is 16.", "terminator": "turn_eos"}]
        page.evaluate("(us) => us.forEach(onEvent)", heard)
        assert page.is_hidden("#asr-hint")
        user = page.inner_text("#transcript .turn.user .text")
        reply = page.inner_text("#transcript .turn.model.reply .text")
    assert user == "what is two times eight" and reply == "it is 16."


def test_transcripts_one_unit_late_and_the_last_on_session_closed(runtime, tmp_path):
    """As the server sends them: unit t's event carries unit t-1's words (`asr_unit`), session.closed the last unit's."""
    unit = {"type": "unit", "decision": "listen", "text": "", "terminator": None, "latency_ms": 50.0,
            "post_audio_ms": 40.0, "lag_ms": 0.0, "miss": False, "resident_slots": 100}
    events = [{**unit, "index": 0, "asr": None, "asr_unit": None}, {**unit, "index": 1, "asr": "what is", "asr_unit": 0},
              {**unit, "index": 2, "asr": "two", "asr_unit": 1},
              {"type": "session.closed", "reason": "stop", "units": 3, "log_path": "x.jsonl", "asr": "thanks",
               "asr_unit": 2}]
    with server(runtime, tmp_path) as srv, chromium() as page:
        page.goto(srv.http_url)
        page.evaluate("(es) => es.forEach(onEvent)", events)
        user = page.inner_text("#transcript .turn.user .text")
        meta = page.inner_text("#transcript .turn.user .meta")
    assert user == "what is two thanks" and meta.endswith("units 0–2"), (user, meta)


# ---------------------------------------------------------------- the shipped examples, recorded (not asserted)


@pytest.mark.parametrize("example", ["qa", "tool"])
def test_record_what_the_page_shows_for_an_example(runtime, tmp_path, example):
    """With the server's defaults (its default system prompt): the model may answer wrongly; that is recorded."""
    meta = json.loads((EXAMPLES / f"{example}.json").read_text())
    with server(runtime, tmp_path) as srv, chromium(example) as page:
        page.goto(srv.http_url)
        page.click("#start")
        wait_status(page, "live")
        page.wait_for_function(f"Number(document.querySelector('#timeline').dataset.units) >= {meta['n_units'] + 1}",
                               timeout=60_000)
        page.click("#stop")
        wait_status(page, "closed")
        shown = page.eval_on_selector_all("#transcript .turn",
                                          "ts => ts.map((t) => t.innerText.replace(/\\n/g, ' | '))")
        decisions = page.evaluate("state.units.map((u) => u.decision[0]).join('')")  # l/s/t per unit
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"page-example-{example}.png"), full_page=True)
    record = {"example": example, "user": meta["user"], "expected": meta["answer"], "tool_call": meta["tool_call"],
              "page": shown, "decisions": decisions}
    (ARTIFACTS / f"page-example-{example}.json").write_text(json.dumps(record, indent=1))
    print(json.dumps(record))
    assert shown is not None
