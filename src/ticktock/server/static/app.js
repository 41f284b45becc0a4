// ticktock live page: microphone -> audio.append frames; unit / tool.call / audio.delta events -> transcript and timeline.
// Protocol: docs/protocol.md.
"use strict";

const FRAME_SECONDS = 0.1; // audio per audio.append message
const $ = (id) => document.getElementById(id);

const state = {
  ws: null, audio: null, source: null, node: null, stream: null, capturing: false,
  pending: [], pendingLen: 0, rate: 0,
  units: [], misses: 0, reply: null, calls: {}, playAt: 0,
};

// ------------------------------------------------------------------ UI helpers
function setStatus(text, cls) {
  const el = $("status");
  el.textContent = text;
  el.className = "pill " + (cls || "idle");
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

// ------------------------------------------------------------------ audio in
function toBase64(int16) {
  const bytes = new Uint8Array(int16.buffer, int16.byteOffset, int16.byteLength);
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function onSamples(block) {
  if (!state.capturing) return; // blocks still in flight after Stop
  state.pending.push(block);
  state.pendingLen += block.length;
  if (state.pendingLen >= Math.round(state.rate * FRAME_SECONDS)) sendPending();
}

function sendPending() {
  if (!state.pendingLen) return;
  const pcm = new Int16Array(state.pendingLen);
  let o = 0;
  for (const b of state.pending) {
    for (let i = 0; i < b.length; i++) pcm[o++] = Math.max(-32768, Math.min(32767, Math.round(b[i] * 32767)));
  }
  state.pending = [];
  state.pendingLen = 0;
  send({ type: "audio.append", audio: toBase64(pcm), format: "pcm16", sample_rate: state.rate });
}

async function startMicrophone() {
  state.stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false },
  });
  try {
    state.audio = new AudioContext({ sampleRate: 16000 }); // the model's rate: the browser resamples
  } catch (e) {
    state.audio = new AudioContext(); // the server resamples whatever rate we declare
  }
  await state.audio.resume();
  state.rate = state.audio.sampleRate;
  $("s-rate").textContent = state.rate;
  state.source = state.audio.createMediaStreamSource(state.stream);
  const sink = state.audio.createGain();
  sink.gain.value = 0;
  sink.connect(state.audio.destination);
  if (state.audio.audioWorklet) {
    await state.audio.audioWorklet.addModule("/static/capture-worklet.js");
    state.node = new AudioWorkletNode(state.audio, "ticktock-capture", { numberOfInputs: 1, numberOfOutputs: 1 });
    state.node.port.onmessage = (e) => onSamples(e.data);
  } else { // older browsers
    state.node = state.audio.createScriptProcessor(2048, 1, 1);
    state.node.onaudioprocess = (e) => onSamples(new Float32Array(e.inputBuffer.getChannelData(0)));
  }
  state.source.connect(state.node);
  state.node.connect(sink);
  state.capturing = true;
}

function stopMicrophone() {
  state.capturing = false;
  if (state.node) state.node.disconnect();
  if (state.source) state.source.disconnect();
  if (state.stream) state.stream.getTracks().forEach((t) => t.stop());
  state.node = state.source = state.stream = null;
}

// ------------------------------------------------------------------ audio out
function play(ev) {
  if (!$("play").checked || !state.audio) return;
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
  if (u.miss) state.misses++;
  $("s-units").textContent = state.units.length;
  $("s-misses").textContent = state.misses;
  $("s-latency").textContent = u.latency_ms.toFixed(0);
  $("s-lag").textContent = u.lag_ms.toFixed(0);
  $("s-slots").textContent = u.resident_slots;
  if (u.decision === "speak" && u.text) {
    if (!state.reply) {
      state.reply = document.createElement("div");
      state.reply.className = "reply";
      state.reply.innerHTML = '<span class="meta"></span><span class="text"></span>';
      state.reply.dataset.first = u.index;
      addToTranscript(state.reply);
    }
    const text = state.reply.querySelector(".text");
    text.textContent = (text.textContent + " " + u.text).trim();
    state.reply.querySelector(".meta").textContent =
      "ticktock · units " + state.reply.dataset.first + "–" + u.index;
    $("transcript").scrollTop = $("transcript").scrollHeight;
  }
  if (u.decision !== "speak" || u.terminator === "turn_eos") state.reply = null; // the turn ended
  drawTimeline();
}

function onToolCall(ev) {
  const div = document.createElement("div");
  div.className = "toolcall";
  div.innerHTML = '<span class="meta"></span><span class="call"></span><span class="result"></span>';
  div.querySelector(".meta").textContent = "tool call · unit " + ev.unit + " · " + ev.call_id;
  div.querySelector(".call").textContent = ev.call;
  state.calls[ev.call_id] = div;
  addToTranscript(div);
}

function onToolResult(ev) {
  const div = state.calls[ev.call_id];
  if (div) div.querySelector(".result").textContent = "→ " + ev.result + (ev.source === "server" ? "  (mock tool)" : "");
}

function onEvent(ev) {
  switch (ev.type) {
    case "session.started":
      setStatus("live · " + ev.decoder, "live");
      logEvent("session " + ev.session_id + " started · " + ev.model + " · decoder " + ev.decoder + " · tts " + (ev.tts ? "on" : "off"));
      break;
    case "unit": onUnit(ev); break;
    case "tool.call": onToolCall(ev); break;
    case "tool.result": onToolResult(ev); break;
    case "audio.delta": play(ev); break;
    case "error":
      logEvent("error " + ev.code + ": " + ev.message, true);
      if (ev.code === "server_busy") { setStatus("server busy", "busy"); teardown(); }
      break;
    case "session.closed":
      logEvent("session closed (" + ev.reason + "): " + ev.units + " units · log " + ev.log_path);
      setStatus("closed", "idle");
      teardown();
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
async function start() {
  $("start").disabled = true;
  if (state.audio) { state.audio.close(); state.audio = null; state.playAt = 0; }
  state.units = []; state.misses = 0; state.reply = null; state.calls = {};
  drawTimeline();
  setStatus("connecting", "idle");
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(proto + "://" + location.host + "/ws");
  state.ws = ws;
  ws.onmessage = (m) => { try { onEvent(JSON.parse(m.data)); } catch (e) { logEvent("bad event: " + e, true); } };
  ws.onclose = () => { if (state.ws === ws) { logEvent("connection closed"); teardown(); } };
  ws.onerror = () => { setStatus("connection error", "error"); };
  await new Promise((ok, fail) => { ws.onopen = ok; setTimeout(() => fail(new Error("connect timeout")), 5000); });
  const msg = { type: "session.start", decoder: $("decoder").value, temperature: parseFloat($("temperature").value) || 0 };
  if ($("system").value.trim()) msg.system = $("system").value.trim();
  send(msg);
  await startMicrophone();
  $("stop").disabled = false;
}

function stop() {
  $("stop").disabled = true;
  sendPending(); // the last partial frame
  stopMicrophone();
  send({ type: "session.stop" }); // the server decodes what it has, then sends session.closed
  setStatus("closing", "idle");
}

function teardown() {
  stopMicrophone();
  $("start").disabled = false;
  $("stop").disabled = true;
  if (state.ws) { const ws = state.ws; state.ws = null; ws.close(); }
}

$("start").onclick = () => start().catch((e) => { logEvent("could not start: " + e.message, true); setStatus("error", "error"); teardown(); });
$("stop").onclick = stop;
const params = new URLSearchParams(location.search); // ?decoder=ar&system=... presets the controls
if (params.get("decoder")) $("decoder").value = params.get("decoder");
if (params.get("system")) $("system").value = params.get("system");
window.addEventListener("resize", drawTimeline);
drawTimeline();
