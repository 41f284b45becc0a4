"""One live session: audio arrives in real time, one unit per 1 s chunk, drafting in the idle window.

    unit t−1 ends ──► DRAFT job: prefill + decoder.prepare(window)  (while chunk t is being received)
    chunk t complete ──► CHUNK job: session.step(chunk t)  ──► log ──► `unit` event (+ tool.call, audio.delta)

Times are measured on the server's wall clock: `arrival` is when chunk t's last
sample came in, `ready` = max(arrival, end of unit t−1), latency ℓ_t = end of
unit t − ready (queueing behind other sessions included), lag
b_t = max(0, b_{t−1} + ℓ_t − Δ) (docs/design.md §7). `post_audio_ms` is the model work
the unit needed after its audio arrived.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Awaitable, Callable

import numpy as np

from ..audio import SAMPLE_RATE
from ..cache.policies import POLICIES, EvictionPolicy, make_policy
from ..decoding.registry import DECODERS
from ..engine import Engine, engine_pool
from ..runtime import Runtime
from ..scenarios.world import tool_result
from ..scenarios.compose import DEFAULT_SYSTEM_PROMPT
from ..session import DuplexSession, UnitResult
from ..session.timeline import LiveTimeline
from .audio_in import AudioIn
from .draft_gate import live_decoder
from .log import SessionLog
from .wire import (BACKLOG_FULL, BAD_OPTION, CONTEXT_FULL, IDLE_TIMEOUT, INTERNAL, NO_SESSION,
                       TOOL_RESULT_LATE, UNKNOWN_CALL, AudioAppend, ProtocolError, SessionStart, ToolResult,
                       error_event, event, quote)
from .scheduler import CHUNK, DRAFT, SETUP, Scheduler
from .speech import Speaker

Send = Callable[[dict], Awaitable[None]]
_STOP = object()
_IDLE = object()  # no audio for the idle timeout: the session gives its slot back
MAX_BACKLOG_CHUNKS = 120  # chunks received but not decoded yet: a client far ahead of real time is slowed down
SIDE_CHANNEL = "after_content"  # the placement the shipped side channel was trained for (docs/side-channel.md)


@dataclass
class PendingCall:
    call_id: str
    call: str
    unit: int
    result: str | None = None  # from the client, waiting for the next unit
    delivered_by: str | None = None  # "client" | "server" once fed to the model


def validate_options(opts: SessionStart) -> None:
    if opts.decoder not in DECODERS:
        raise ProtocolError(BAD_OPTION, f"unknown decoder {quote(opts.decoder)}; known: {', '.join(sorted(DECODERS))}")
    if opts.kv_policy not in POLICIES:
        raise ProtocolError(BAD_OPTION, f"unknown KV policy {quote(opts.kv_policy)}; known: {', '.join(POLICIES)}")
    try:
        session_policy(opts)
    except (ValueError, TypeError) as err:
        raise ProtocolError(BAD_OPTION, str(err)) from None


def session_policy(opts: SessionStart) -> EvictionPolicy:
    return make_policy(opts.kv_policy, **({"budget": opts.kv_budget} if opts.kv_budget is not None else {}))


class LiveSession:
    def __init__(self, opts: SessionStart, runtime: Runtime, scheduler: Scheduler, send: Send,
                 log_dir: str | Path, speaker: Speaker | None = None, max_slots: int = 8192,
                 idle_timeout: float = 0.0, engine: str = "auto"):
        validate_options(opts)
        self.id = uuid.uuid4().hex[:12]
        self.opts, self.runtime, self.scheduler, self.send = opts, runtime, scheduler, send
        self.speaker = speaker if (speaker is not None and speaker.available and opts.tts) else None
        self.max_slots = max_slots
        self.idle_timeout = idle_timeout  # seconds; 0: never
        self.engine_kind = engine
        self.engine: Engine | None = None  # taken from the model's pool on open, given back on close
        self.chunk_seconds = runtime.protocol.chunk_seconds
        self.audio = AudioIn(runtime.protocol.chunk_samples)
        self.log_path = Path(log_dir) / f"{time.strftime('%Y%m%d-%H%M%S')}-{self.id}.jsonl"
        self.log: SessionLog | None = None
        self.session: DuplexSession | None = None
        self.queue: asyncio.Queue = asyncio.Queue()
        self.timeline = LiveTimeline(self.chunk_seconds)
        self.calls: list[PendingCall] = []
        self.units = 0
        self.last: UnitResult | None = None  # the last unit decoded: its trailing transcript goes on the next event
        self.stopping = self.aborted = self.closed = False
        self.expected_arrival = time.monotonic() + self.chunk_seconds
        self.t0 = self.last_audio = time.monotonic()  # last_audio: audio arrived, or a unit decoded some
        self._task: asyncio.Task | None = None
        self._side: set[asyncio.Task] = set()  # speech synthesis in flight
        self.close_reason = "stop"

    # ------------------------------------------------------------ lifecycle
    async def open(self) -> dict:
        """Build the model session on the device thread (prefix prefill), start the unit loop; returns `session.started`."""
        o = self.opts
        system = o.system if o.system is not None else DEFAULT_SYSTEM_PROMPT  # one the model was trained with
        rt = self.runtime
        self.engines = engine_pool(rt.model, self.engine_kind, self.max_slots)
        self.engine = self.engines.acquire()
        try:
            self.session = await self.scheduler.run(lambda: DuplexSession(
                rt.model, rt.protocol, live_decoder(o.decoder), temperature=o.temperature, seed=o.seed,
                system=system, policy=session_policy(o), max_slots=self.max_slots, engine=self.engine,
                side_channel=SIDE_CHANNEL if o.side_channel else None), SETUP)
        except BaseException:
            self.engines.release(self.engine)
            self.engine = None
            raise
        self.log = SessionLog(self.log_path)
        started = event("session.started", session_id=self.id, model=rt.name, decoder=o.decoder,
                        temperature=o.temperature, kv_policy=o.kv_policy, kv_budget=o.kv_budget, system=system,
                        auto_tools=o.auto_tools, tts=self.speaker is not None, side_channel=bool(o.side_channel),
                        chunk_seconds=self.chunk_seconds,
                        sample_rate=SAMPLE_RATE, log_path=self.log_path.name)
        self.log.write({**started, "options": asdict(o)})
        self.t0 = self.expected_arrival = self.last_audio = time.monotonic()
        self.expected_arrival += self.chunk_seconds
        self._task = asyncio.create_task(self._units())
        return started

    def append(self, msg: AudioAppend) -> None:
        if self.stopping:
            raise ProtocolError(NO_SESSION, "the session is stopping: audio after session.stop is dropped")
        if self.queue.qsize() >= MAX_BACKLOG_CHUNKS:
            waiting = self.queue.qsize() * self.chunk_seconds
            raise ProtocolError(BACKLOG_FULL, f"{waiting:.0f} s of this session's audio are waiting to be decoded; "
                                              "this frame was dropped: send audio in real time")
        chunks = self.audio.push(msg)
        now = self.last_audio = time.monotonic()
        for c in chunks:
            self.queue.put_nowait((c, now))
        # when the next chunk will be complete if the client streams in real time: the drafting deadline
        self.expected_arrival = now + max(0.0, self.chunk_seconds - self.audio.buffered_seconds())

    def queued_bytes(self) -> int:
        """The session's audio received but not decoded yet, as held here (float32 at 16 kHz, plus resampler input)."""
        return 4 * self.queue.qsize() * self.audio.chunk_samples + self.audio.held_bytes()

    def stop(self) -> asyncio.Task:
        """End of audio: the partial last chunk is zero-padded and decoded; returns the task that closes the session."""
        if not self.stopping:
            self.stopping = True
            now = time.monotonic()
            for c in self.audio.flush():
                self.queue.put_nowait((c, now))
            self.queue.put_nowait(_STOP)
        return self._task

    async def abort(self) -> None:
        """The client is gone: finish (and log) the unit in flight, drop the rest."""
        self.aborted, self.close_reason = True, "disconnect"
        self.stopping = True
        self.queue.put_nowait(_STOP)
        if self._task is not None:
            await self._task

    # ------------------------------------------------------------ tools
    def tool_result(self, msg: ToolResult) -> None:
        waiting = [c for c in self.calls if c.delivered_by is None]
        if msg.call_id is None:
            if not waiting:
                raise ProtocolError(UNKNOWN_CALL, "no tool call is waiting for a result")
            call = waiting[-1]
        else:
            matches = [c for c in self.calls if c.call_id == msg.call_id]
            if not matches:
                raise ProtocolError(UNKNOWN_CALL, f"no tool call with call_id {quote(msg.call_id)}")
            call = matches[0]
        if call.delivered_by is not None:
            raise ProtocolError(TOOL_RESULT_LATE, f"{call.call_id} was already answered ({call.delivered_by}) before "
                                                  "this result arrived: answer within the unit after tool.call, "
                                                  "or start the session with auto_tools=false")
        call.result = msg.result
        self.log.write({"type": "tool.result", "call_id": call.call_id, "result": msg.result, "source": "client"})

    async def _next_tool_result(self) -> str | None:
        """The result fed to the next unit: the client's if it came, else the mock tool's (auto_tools)."""
        for call in self.calls:
            if call.delivered_by is not None:
                continue
            if call.result is not None:
                call.delivered_by = "client"
                return call.result
            if self.opts.auto_tools:
                call.result = tool_result(call.call)  # a malformed call gets an error result
                call.delivered_by = "server"
                ev = event("tool.result", session_id=self.id, call_id=call.call_id, result=call.result, source="server")
                self.log.write(ev)
                await self.send(ev)
                return call.result
        return None

    # ------------------------------------------------------------ the unit loop
    def _prepare(self) -> None:  # device thread
        if self.session.prepared is not None:
            return
        window = 0.0 if self.queue.qsize() else min(self.scheduler.draft_window(),
                                                    max(0.0, self.expected_arrival - time.monotonic()))
        self.session.prepare(window)

    def _step(self, chunk: np.ndarray, tool_result: str | None) -> UnitResult:  # device thread
        if self.session.prepared is None:  # the chunk came before the idle work ran: the prefill rides with it
            self.session.skip_idle_work()
        return self.session.step(chunk, tool_result)

    async def _units(self) -> None:
        try:
            await self._loop()
        except Exception as err:  # a model failure ends this session, never the server
            self.close_reason = "error"
            self.log.write(error_event(INTERNAL, f"the session failed at unit {self.units}: {type(err).__name__}: {err}"))
            # the client gets no exception text: it may hold server paths; the log has it
            await self.send(error_event(INTERNAL, f"the session failed at unit {self.units} ({type(err).__name__}); "
                                                  "the server's session log has the details", self.id))
        finally:
            await self._close()

    async def _loop(self) -> None:
        while True:
            draft = None
            if self.queue.empty() and not self.stopping:
                draft = asyncio.ensure_future(self.scheduler.run(self._prepare, DRAFT))
                draft.add_done_callback(_swallow)
            item = await self._next()
            if draft is not None:
                draft.cancel()  # not started yet: dropped; running: it finishes before the chunk job anyway
            if item is _STOP or self.aborted:
                return
            if item is _IDLE:
                self.close_reason = "idle_timeout"
                msg = (f"no audio for {self.idle_timeout:g} s: the session was closed to free its slot "
                       "(stream audio continuously, silence included, or start a new session)")
                self.log.write(error_event(IDLE_TIMEOUT, msg))
                await self.send(error_event(IDLE_TIMEOUT, msg, self.id))
                return
            chunk, arrival = item
            tool_result = await self._next_tool_result()
            if self._cache_nearly_full(tool_result):
                self.close_reason = "context_full"
                msg = (f"the session's KV cache is full ({self.max_slots} slots) after {self.units} units: "
                       "start a new session, or use a kv_policy that evicts")
                self.log.write(error_event(CONTEXT_FULL, msg))
                await self.send(error_event(CONTEXT_FULL, msg, self.id))
                return
            res = await self.scheduler.run(lambda: self._step(chunk, tool_result), CHUNK, key=arrival)
            latency, lag = self.timeline.add(arrival, time.monotonic())
            await self._emit(res, arrival, latency, lag, tool_result)

    async def _next(self) -> object:
        """The next queued chunk or _STOP; _IDLE once no audio has come for `idle_timeout` s with none waiting."""
        while self.idle_timeout > 0 and self.queue.empty():
            left = self.last_audio + self.idle_timeout - time.monotonic()
            if left <= 0:
                return _IDLE
            try:
                return await asyncio.wait_for(self.queue.get(), left)  # a cancelled get leaves the queue as it was
            except asyncio.TimeoutError:
                pass  # audio may have come without completing a chunk: look at last_audio again
        return await self.queue.get()

    def _cache_nearly_full(self, tool_result: str | None) -> bool:
        """True when the next unit might not fit: its audio, the tool result, a whole response and room to draft."""
        p = self.runtime.protocol
        extra = len(p.tool_result_ids(tool_result)) if tool_result else 0
        return self.session.engine.cache.length + extra + 4 * p.max_unit_tokens + 256 > self.max_slots

    async def _emit(self, res: UnitResult, arrival: float, latency: float, lag: float, tool_result: str | None) -> None:
        unit = unit_event(self.id, res, arrival - self.t0, latency, lag, tool_result)
        if self.opts.side_channel:  # the previous unit's transcript: its segment was decoded before this unit (`prepare`)
            unit.update(self._heard())
        self.last = res
        self.log.write(unit)  # logged before it is sent: a disconnect loses nothing computed
        self.units += 1
        self.last_audio = time.monotonic()  # the idle clock starts once the backlog is decoded
        await self.send(unit)
        if res.tool_call:
            call = PendingCall(f"call_{res.index}", res.tool_call, res.index)
            self.calls.append(call)
            ev = event("tool.call", session_id=self.id, call_id=call.call_id, call=call.call, unit=res.index)
            self.log.write(ev)
            await self.send(ev)
        if self.speaker is not None and res.decision == "speak" and res.text.strip():
            task = asyncio.create_task(self._speak(res.index, res.text))
            self._side.add(task)
            task.add_done_callback(self._side.discard)

    async def _speak(self, index: int, text: str) -> None:
        audio = await asyncio.to_thread(self.speaker.base64, text)
        if audio:
            await self.send(event("audio.delta", session_id=self.id, unit=index, text=text, audio=audio,
                                  format="pcm16", sample_rate=SAMPLE_RATE))

    def _heard(self) -> dict:
        """`asr` / `asr_unit`: the transcript of the last unit decoded (None: the model opened no segment)."""
        return {"asr": self.last.asr if self.last else None, "asr_unit": self.last.index if self.last else None}

    async def _close(self) -> None:
        self.stopping = True  # whatever ended the loop (stop, disconnect, error), no more audio is taken
        if self._side:
            await asyncio.gather(*self._side, return_exceptions=True)
        closed = event("session.closed", session_id=self.id, units=self.units, log_path=self.log_path.name,
                       reason=self.close_reason)
        if self.opts.side_channel and self.close_reason != "error":  # the last unit's segment, if not decoded yet
            try:
                await self.scheduler.run(self.session.flush, CHUNK)
                closed.update(self._heard())
            except Exception as err:  # the session ends either way; only that transcript is lost
                self.log.write(error_event(INTERNAL, f"the last unit's transcript failed: {type(err).__name__}: {err}"))
        if self.log is not None:
            self.log.write(closed)
            self.log.close()
        self.scheduler.release(self.id)
        if self.engine is not None:
            self.engines.release(self.engine)
            self.engine = None
        self.closed = True
        await self.send(closed)


def unit_event(session_id: str, res: UnitResult, arrival_s: float, latency: float, lag: float,
               tool_result: str | None) -> dict:
    return event("unit", session_id=session_id, index=res.index, decision=res.decision, text=res.text,
                 tool_call=res.tool_call, tool_result=tool_result, terminator=res.terminator,
                 post_audio_ms=round(res.post_audio * 1000, 2), latency_ms=round(latency * 1000, 2),
                 lag_ms=round(lag * 1000, 2), miss=lag > 1e-9, idle_ms=round(res.idle_used * 1000, 2),
                 arrival_s=round(arrival_s, 3), resident_slots=res.resident_slots, forwards=res.forwards,
                 tokens=len(res.tokens), drafted=sum(res.draft_len), accepted=sum(res.accepted_len))


def _swallow(fut: asyncio.Future) -> None:
    if not fut.cancelled():
        fut.exception()  # retrieved, so asyncio does not warn; drafting failures resurface in the chunk job
