"""End to end in headless Chromium: a fake microphone plays the shipped qa.wav into the page, the page streams it to
the in-process server, and shows the model's spoken reply and the chunk timeline. Screenshot: tests/artifacts/."""

from __future__ import annotations

import json
import urllib.parse

from ticktock.commands.demo import EXAMPLES
from ticktock.server import ServerConfig
from ticktock.server.background import BackgroundServer

from browser_support import ARTIFACTS, BROWSER_MARKS, CHROMIUM, sync_api

pytestmark = BROWSER_MARKS


def test_page_shows_reply_and_timeline_from_a_fake_microphone(tmp_path, runtime):
    wav = EXAMPLES / "qa.wav"  # 16-bit PCM, what Chromium's fake capture reads; it loops
    system = json.loads(wav.with_suffix(".json").read_text())["system"]
    cfg = ServerConfig(port=0, max_sessions=1, log_dir=str(tmp_path / "sessions"), tts=True)
    flags = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
             f"--use-file-for-fake-audio-capture={wav}", "--autoplay-policy=no-user-gesture-required", "--no-sandbox"]
    with BackgroundServer(cfg, runtime) as srv, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=flags)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 820})
            page.goto(f"{srv.http_url}/?" + urllib.parse.urlencode({"system": system, "decoder": "sl"}))
            page.click("#start")
            # a whole question and its answer: the reply shows up within ~16 s of audio
            page.wait_for_function("document.querySelector('#transcript .reply .text')?.textContent.length > 0"
                                   " && Number(document.querySelector('#timeline').dataset.units) >= 12",
                                   timeout=45_000)
            reply = page.inner_text("#transcript .reply .text")
            units = int(page.get_attribute("#timeline", "data-units"))
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "browser.png"), full_page=True)
            page.click("#stop")
            page.wait_for_function("document.querySelector('#status').textContent === 'closed'", timeout=20_000)
            log = page.inner_text("#events")
        finally:
            browser.close()
    assert len(reply.split()) >= 2, reply
    assert units >= 12
    assert "session closed (stop)" in log and "error" not in log
    assert (ARTIFACTS / "browser.png").stat().st_size > 10_000
