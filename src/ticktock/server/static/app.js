// ticktock live page: microphone -> audio.append frames; unit / tool.call / audio.delta events -> transcript and timeline.
// Protocol: docs/protocol.md.
//
// One session per Start, on its own WebSocket:
//   idle ──Start──► connecting ──open──► starting ──session.started──► live ──Stop──► closing ──session.closed──► idle
// Every other way out (a rejected session.start, server_busy, idle_timeout, context_full, a dropped socket, a
// microphone that cannot open) goes through end(): the microphone and the stream stop, the socket closes, the
// reason is shown in words, and Start works again. The microphone opens only once the server has started a session.
"use strict";

const FRAME_SECONDS = 0.1; // audio per audio.append message
const CONNECT_TIMEOUT_MS = 5000;
const START_TIMEOUT_MS = 30000; // session.start -> session.started (the prefix prefill waits behind other sessions)
const CLOSE_TIMEOUT_MS = 30000; // session.stop -> session.closed (the server decodes what it still owes)
const MAX_ERRORS_IN_A_ROW = 5; // errors with no unit between them: the server refuses what we stream
const TEMPERATURE = { min: 0, max: 5 }; // session.start.temperature
const DECODER_NOTES = { sl: "Speculative Listening", ar: "autoregressive" };
const $ = (id) => document.getElementById(id);

const state = {
  phase: "idle", ws: null, timer: null, sessionId: null, errorsInARow: 0, lastError: null,
  audio: null, source: null, node: null, stream: null, capturing: false,
  pending: [], pendingLen: 0, rate: 0,
  units: [], misses: 0, reply: null, heard: null, calls: {}, playAt: 0, asrSeen: false,
};

// What a server error that ends the session means to the person at the page: [status, pill class, headline, next step].
const ENDINGS = {
  bad_option: ["rejected", "error", "The server refused to start the session.", "Change that option and press Start again."],
  bad_message: ["rejected", "error", "The server refused to start the session.", "Press Start to try again."],
  session_active: ["rejected", "error", "The server still runs a session for this page.", "Press Start to try again."],
  server_busy: ["server busy", "busy", "The server is busy: every session slot is taken.", "Press Start to try again in a moment."],
  idle_timeout: ["timed out", "busy", "The server closed the session: no audio reached it for too long.",
                 "Check that the microphone is on, then press Start for a new session."],
  context_full: ["memory full", "busy", "The session's memory is full, so the server closed it.", "Press Start for a new session."],
  no_session: ["ended", "error", "The server has no session for this page any more.", "Press Start for a new session."],
  internal: ["server error", "error", "The server failed on this session.", "Press Start to try again."],
};
const ENDS_A_LIVE_SESSION = new Set(["idle_timeout", "context_full", "no_session"]);

// ------------------------------------------------------------------ UI helpers
function setPhase(phase, label, cls) {
  state.phase = phase;
  const el = $("status");
  el.textContent = label || phase;
  el.className = "pill " + (cls || "idle");
  const idle = phase === "idle";
  $("start").disabled = !idle;
  $("stop").disabled = idle || phase === "closing";
  for (const id of ["decoder", "temperature", "system"]) $(id).disabled = !idle;
}

function notify(kind, headline, detail, next) {
  const el = $("notice");
  el.className = kind; // error | busy | info
  el.replaceChildren();
  for (const [cls, text] of [["head", headline], ["next", next], ["detail", detail]]) {
    if (!text) continue;
    const span = document.createElement("span");
    span.className = cls;
    span.textContent = text;
    el.append(span, " ");
  }
  el.hidden = false;
}

function clearNotice() {
  $("notice").hidden = true;
  $("notice").replaceChildren();
}

function logEvent(text, isError) {
  const div = document.createElement("div");
  if (isError) div.className = "err";
  div.textContent = new Date().toLocaleTimeString() + "  " + text;
  $("events").prepend(div);
}

function addToTranscript(el) {
  const t = $("transcript");
  t.appendChild(el);
  t.scrollTop = t.scrollHeight;
}

function bubble(cls, meta) {
  const div = document.createElement("div");
  div.className = "turn " + cls;
  div.innerHTML = '<span class="meta"></span><span class="text"></span>';
  div.querySelector(".meta").textContent = meta;
  addToTranscript(div);
  return div;
}

// ------------------------------------------------------------------ options
// Limits come from the page's controls (maxlength, min/max), which follow docs/protocol.md; a server that
// lists its decoders in /health (`decoders`) or its prompt limit (`max_system_chars`) overrides them.
async function loadServerOptions() {
  let health;
  try {
    const r = await fetch("/health", { cache: "no-store" });
    health = await r.json();
  } catch (e) {
    return; // the static lists stand
  }
  if (Array.isArray(health.decoders) && health.decoders.length) {
    const sel = $("decoder"), keep = sel.value;
    sel.replaceChildren(...health.decoders.map((name) => {
      const opt = document.createElement("option");
      opt.value = name;
      opt.textContent = DECODER_NOTES[name] ? `${name} (${DECODER_NOTES[name]})` : name;
      return opt;
    }));
    sel.value = health.decoders.includes(keep) ? keep : health.decoders[0];
  }
  if (Number.isInteger(health.max_system_chars) && health.max_system_chars > 0) {
    $("system").maxLength = health.max_system_chars;
    countSystem();
  }
}

function countSystem() {
  const el = $("system"), n = el.value.trim().length, max = el.maxLength;
  $("system-count").textContent = max > 0 ? `${n} / ${max}` : `${n}`;
  $("system-count").classList.toggle("over", max > 0 && n > max);
}

// The session.start message, or an Error whose message says which control to fix.
function readOptions() {
  const msg = { type: "session.start", decoder: $("decoder").value };
  const raw = $("temperature").value.trim(); // "" when empty or not a number at all (validity.badInput)
  const t = raw === "" ? 0 : Number(raw);
  if ($("temperature").validity.badInput || !Number.isFinite(t) || t < TEMPERATURE.min || t > TEMPERATURE.max) {
    throw new Error(`temperature must be a number from ${TEMPERATURE.min} to ${TEMPERATURE.max} (0 = greedy); it is "${raw}".`);
  }
  msg.temperature = t;
  const system = $("system").value.trim(), max = $("system").maxLength; // -1: no limit on the page
  if (max > 0 && system.length > max) {
    throw new Error(`the system prompt has ${system.length} characters; the server accepts at most ${max}.`);
  }
  if (system) msg.system = system;
  if (!msg.decoder) throw new Error("choose a decoder.");
  return msg;
}

// ------------------------------------------------------------------ audio in
function toBase64(int16) {
  const bytes = new Uint8Array(int16.buffer, int16.byteOffset, int16.byteLength);
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function onSamples(block) {
  if (!state.capturing) return; // blocks still in flight after the stream stopped
  state.pending.push(block);
  state.pendingLen += block.length;
  if (state.pendingLen >= Math.round(state.rate * FRAME_SECONDS)) sendPending();
}

function sendPending() {
  if (!state.pendingLen || !state.capturing) return;
  const pcm = new Int16Array(state.pendingLen);
  let o = 0;
  for (const b of state.pending) {
    for (let i = 0; i < b.length; i++) pcm[o++] = Math.max(-32768, Math.min(32767, Math.round(b[i] * 32767)));
  }
  state.pending = [];
  state.pendingLen = 0;
  send({ type: "audio.append", audio: toBase64(pcm), format: "pcm16", sample_rate: state.rate });
}

// Created in the click handler: a context made there may play audio; capture and playback both use it.
function newAudioContext() {
  if (state.audio) state.audio.close();
  state.playAt = 0;
  try {
    state.audio = new AudioContext({ sampleRate: 16000 }); // the model's rate: the browser resamples
  } catch (e) {
    state.audio = new AudioContext(); // the server resamples whatever rate we declare
  }
}

async function startMicrophone() {
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false },
  });
  if (state.phase !== "live") { stream.getTracks().forEach((t) => t.stop()); return; } // ended while we waited
  state.stream = stream;
  const audio = state.audio;
  await audio.resume();
  state.rate = audio.sampleRate;
  $("s-rate").textContent = state.rate;
  if (audio.audioWorklet) {
    await audio.audioWorklet.addModule("/static/capture-worklet.js");
  }
  if (state.phase !== "live" || state.stream !== stream) return;
  state.source = audio.createMediaStreamSource(stream);
  const sink = audio.createGain();
  sink.gain.value = 0;
  sink.connect(audio.destination);
  if (audio.audioWorklet) {
    state.node = new AudioWorkletNode(audio, "ticktock-capture", { numberOfInputs: 1, numberOfOutputs: 1 });
    state.node.port.onmessage = (e) => onSamples(e.data);
  } else { // older browsers
    state.node = audio.createScriptProcessor(2048, 1, 1);
    state.node.onaudioprocess = (e) => onSamples(new Float32Array(e.inputBuffer.getChannelData(0)));
  }
  state.source.connect(state.node);
  state.node.connect(sink);
  for (const track of stream.getAudioTracks()) {
    track.onended = () => { if (state.stream === stream) stop("the microphone stopped"); };
  }
  state.capturing = true;
}

function stopMicrophone() {
  state.capturing = false;
  state.pending = [];
  state.pendingLen = 0;
  if (state.node) { state.node.disconnect(); if (state.node.port) state.node.port.onmessage = null; }
  if (state.source) state.source.disconnect();
  if (state.stream) state.stream.getTracks().forEach((t) => { t.onended = null; t.stop(); });
  state.node = state.source = state.stream = null;
}

// ------------------------------------------------------------------ audio out
function play(ev) {
  if (!$("play").checked || !state.audio || state.audio.state === "closed") return;
  const raw = atob(ev.audio);
  const n = raw.length >> 1;
  const buf = state.audio.createBuffer(1, n, ev.sample_rate || 16000);
  const ch = buf.getChannelData(0);
  for (let i = 0; i < n; i++) {
    let v = raw.charCodeAt(2 * i) | (raw.charCodeAt(2 * i + 1) << 8);
    if (v >= 0x8000) v -= 0x10000;
    ch[i] = v / 32768;
  }
  const src = state.audio.createBufferSource();
  src.buffer = buf;
  src.connect(state.audio.destination);
  state.playAt = Math.max(state.audio.currentTime, state.playAt);
  src.start(state.playAt);
  state.playAt += buf.duration;
}

// ------------------------------------------------------------------ events
function onUnit(u) {
  state.units.push(u);
  state.errorsInARow = 0;
  if (u.miss) state.misses++;
  $("s-units").textContent = state.units.length;
  $("s-misses").textContent = state.misses;
  $("s-latency").textContent = u.latency_ms.toFixed(0);
  $("s-lag").textContent = u.lag_ms.toFixed(0);
  $("s-slots").textContent = u.resident_slots;
  onHeard(u);
  if (u.decision === "speak" && u.text) {
    if (!state.reply) {
      state.reply = bubble("model reply", "");
      state.reply.dataset.first = u.index;
    }
    const text = state.reply.querySelector(".text");
    text.textContent = (text.textContent + " " + u.text).trim();
    state.reply.querySelector(".meta").textContent = "ticktock · units " + state.reply.dataset.first + "–" + u.index;
    $("transcript").scrollTop = $("transcript").scrollHeight;
    state.heard = null; // the user's next words start a new turn
  }
  if (u.decision !== "speak" || u.terminator === "turn_eos") state.reply = null; // the turn ended
  drawTimeline();
}

// What the user said: the transcription side channel's `asr` of unit `asr_unit` (the unit before the event's own;
// docs/protocol.md), where the server sends it.
function onHeard(u) {
  if (!("asr" in u)) {
    const hint = $("asr-hint");
    if (!state.asrSeen && hint.hidden) {
      hint.textContent = "What you said appears here when the server runs the transcription side channel; this server sends no transcript of your speech.";
      hint.hidden = false;
    }
    return;
  }
  state.asrSeen = true;
  $("asr-hint").hidden = true;
  const words = (u.asr || "").trim();
  if (!words) return;
  const unit = u.asr_unit ?? u.index;
  if (!state.heard) {
    state.heard = bubble("user heard", "");
    state.heard.dataset.first = unit;
  }
  const text = state.heard.querySelector(".text");
  text.textContent = (text.textContent + " " + words).trim();
  state.heard.querySelector(".meta").textContent = "you (as the model heard it) · units " + state.heard.dataset.first + "–" + unit;
  if (u.decision !== "listen") state.heard = null; // the model answered: the user's next words are a new turn
}

function onToolCall(ev) {
  const div = document.createElement("div");
  div.className = "turn model toolcall";
  div.innerHTML = '<span class="meta"></span><span class="call"></span><span class="result"></span>';
  div.querySelector(".meta").textContent = "tool call · unit " + ev.unit + " · " + ev.call_id;
  div.querySelector(".call").textContent = ev.call;
  state.calls[ev.call_id] = div;
  addToTranscript(div);
  state.heard = null;
}

function onToolResult(ev) {
  const div = state.calls[ev.call_id];
  if (div) div.querySelector(".result").textContent = "→ " + ev.result + (ev.source === "server" ? "  (mock tool)" : "");
}

function onError(ev) {
  logEvent("error " + ev.code + ": " + ev.message, true);
  state.lastError = ev;
  const [label, cls, headline, next] = ENDINGS[ev.code] ||
    ["error", "error", "The server refused what the page sent.", "Press Start to try again."];
  if (state.phase === "connecting" || state.phase === "starting") {
    end(label, cls, headline, ev.message, next); // the answer to session.start: no session was started
  } else if (ENDS_A_LIVE_SESSION.has(ev.code)) {
    end(label, cls, headline, ev.message, next); // the server has no session for our audio any more
  } else if (++state.errorsInARow >= MAX_ERRORS_IN_A_ROW) {
    end("error", "error", `The server refused ${state.errorsInARow} messages in a row, so the page stopped streaming.`,
        ev.message, "Press Start to try again.");
  }
  // anything else answers one message; the session goes on (docs/protocol.md)
}

function onEvent(ev) {
  switch (ev.type) {
    case "session.started":
      if (state.phase !== "starting") break;
      clearTimeout(state.timer);
      state.sessionId = ev.session_id;
      setPhase("live", "live · " + ev.decoder, "live");
      logEvent("session " + ev.session_id + " started · " + ev.model + " · decoder " + ev.decoder + " · tts " + (ev.tts ? "on" : "off"));
      startMicrophone().catch((e) => {
        send({ type: "session.stop" });
        end("no microphone", "error", "The microphone could not be opened.", e.message,
            "Allow microphone access, then press Start again.");
      });
      break;
    case "unit": onUnit(ev); break;
    case "tool.call": onToolCall(ev); break;
    case "tool.result": onToolResult(ev); break;
    case "audio.delta": play(ev); break;
    case "error": onError(ev); break;
    case "session.closed":
      if ("asr" in ev) onHeard({ ...ev, decision: "listen" }); // the last unit's transcript
      logEvent("session closed (" + ev.reason + "): " + ev.units + " units · log " + ev.log_path);
      if (ev.reason === "stop") {
        end("closed", "idle");
      } else {
        const code = ev.reason === "error" ? "internal" : ev.reason;
        const [label, cls, headline, next] = ENDINGS[code] || ["closed", "error", "The server closed the session.", "Press Start for a new session."];
        end(label, cls, headline, state.lastError ? state.lastError.message : "reason: " + ev.reason, next);
      }
      break;
  }
}

function send(msg) {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(msg));
}

// ------------------------------------------------------------------ timeline
function drawTimeline() {
  const cv = $("timeline");
  const dpr = window.devicePixelRatio || 1;
  const W = cv.clientWidth || cv.width, H = cv.clientHeight || cv.height;
  if (cv.width !== W * dpr) { cv.width = W * dpr; cv.height = H * dpr; }
  const g = cv.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, W, H);
  const css = getComputedStyle(document.documentElement);
  const color = (name) => css.getPropertyValue("--" + name).trim();
  const left = 44, bottom = 22, top = 10, plotH = H - bottom - top;
  const units = state.units.slice(-60);
  const maxMs = Math.max(1500, ...units.map((u) => Math.max(u.latency_ms, u.lag_ms + 1000) * 1.1));
  const y = (ms) => top + plotH * (1 - Math.min(ms, maxMs) / maxMs);
  const slot = (W - left - 8) / 60, bw = Math.max(2, slot * 0.7);
  // axis
  g.fillStyle = color("dim"); g.font = "11px system-ui";
  for (let ms = 0; ms <= maxMs; ms += 500) {
    g.fillText(ms + "", 4, y(ms) + 4);
    g.strokeStyle = color("line"); g.beginPath(); g.moveTo(left, y(ms)); g.lineTo(W, y(ms)); g.stroke();
  }
  units.forEach((u, i) => {
    const x = left + i * slot;
    g.fillStyle = color(u.decision === "speak" ? "speak" : u.decision === "tool" ? "tool" : "listen");
    g.fillRect(x, y(u.latency_ms), bw, y(0) - y(u.latency_ms));
    g.fillStyle = color("post"); // the model's own post-audio work, inside the bar
    g.fillRect(x + bw * 0.3, y(u.post_audio_ms), bw * 0.4, y(0) - y(u.post_audio_ms));
    if (i % 10 === 0) { g.fillStyle = color("dim"); g.fillText(u.index + "", x, H - 6); }
  });
  // the 1 s deadline
  g.strokeStyle = color("deadline"); g.setLineDash([6, 4]); g.lineWidth = 1.5;
  g.beginPath(); g.moveTo(left, y(1000)); g.lineTo(W, y(1000)); g.stroke(); g.setLineDash([]);
  // lag b_t, drawn on top of the deadline: a unit misses when it rises above 0
  g.strokeStyle = color("lag"); g.lineWidth = 2; g.beginPath();
  units.forEach((u, i) => { const x = left + i * slot + bw / 2; i ? g.lineTo(x, y(u.lag_ms)) : g.moveTo(x, y(u.lag_ms)); });
  g.stroke(); g.lineWidth = 1;
  cv.dataset.units = state.units.length;
}

// ------------------------------------------------------------------ session
function start() {
  if (state.phase !== "idle") return;
  let msg;
  try {
    msg = readOptions();
  } catch (e) {
    notify("error", "Check the options.", e.message, "");
    return;
  }
  clearNotice();
  newAudioContext();
  state.units = []; state.misses = 0; state.reply = null; state.heard = null; state.calls = {};
  state.sessionId = null; state.errorsInARow = 0; state.lastError = null; state.asrSeen = false;
  $("asr-hint").hidden = true;
  drawTimeline();
  setPhase("connecting", "connecting");
  const url = (location.protocol === "https:" ? "wss" : "ws") + "://" + location.host + "/ws";
  const ws = new WebSocket(url);
  state.ws = ws;
  ws.onmessage = (m) => {
    if (state.ws !== ws) return; // a socket this page has already left
    let ev;
    try { ev = JSON.parse(m.data); } catch (e) { logEvent("bad event: " + e, true); return; }
    onEvent(ev);
  };
  ws.onopen = () => {
    if (state.ws !== ws) return;
    setPhase("starting", "starting");
    send(msg);
    armTimer(START_TIMEOUT_MS, "The server did not answer session.start.");
  };
  ws.onclose = (e) => {
    if (state.ws !== ws) return; // closed by end(): already handled
    const why = `the WebSocket closed (code ${e.code}${e.reason ? ", " + e.reason : ""})`;
    logEvent("connection closed: " + why, true);
    if (state.phase === "connecting") end("disconnected", "error", "Could not reach the server at " + url + ".", why, "Start the server, then press Start again.");
    else end("disconnected", "error", "The connection to the server was lost.", why, "Press Start to reconnect.");
  };
  armTimer(CONNECT_TIMEOUT_MS, "Could not reach the server at " + url + ".");
}

function armTimer(ms, headline) {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => end("no answer", "error", headline, `no answer within ${ms / 1000} s`, "Press Start to try again."), ms);
}

function stop(why) {
  if (state.phase === "connecting" || state.phase === "starting") { // nothing started yet: just leave
    end("idle", "idle", why ? "Stopped: " + why + "." : "", "", "");
    return;
  }
  if (state.phase !== "live") return;
  sendPending(); // the last partial frame
  stopMicrophone();
  send({ type: "session.stop" }); // the server decodes what it has, then sends session.closed
  setPhase("closing", "closing");
  if (why) notify("info", "Stopped: " + why + ".", "", "");
  armTimer(CLOSE_TIMEOUT_MS, "The server did not confirm the end of the session.");
}

// Back to idle from any phase: microphone off, no more frames, socket closed, the reason (if any) in words.
function end(label, cls, headline, detail, next) {
  clearTimeout(state.timer);
  stopMicrophone();
  const ws = state.ws;
  state.ws = null; // from here on its events and its close are ignored
  if (ws) ws.close();
  setPhase("idle", label, cls);
  if (headline) notify(cls === "idle" ? "info" : cls, headline, detail, next);
}

$("start").onclick = () => {
  try { start(); } catch (e) { end("error", "error", "The page could not start a session.", e.message, "Press Start to try again."); }
};
$("stop").onclick = () => stop();
$("system").addEventListener("input", countSystem);
const params = new URLSearchParams(location.search); // ?decoder=ar&system=...&temperature=... presets the controls
if (params.get("decoder")) $("decoder").value = params.get("decoder");
if (params.get("system")) $("system").value = params.get("system");
if (params.get("temperature")) $("temperature").value = params.get("temperature");
countSystem();
loadServerOptions().then(() => { if (params.get("decoder")) $("decoder").value = params.get("decoder"); });
window.addEventListener("resize", drawTimeline);
drawTimeline();
