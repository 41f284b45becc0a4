"""Lay a `Plan` out in time: word times, per-unit targets, tags (rules in `script.py`).

`layout(plan, duration)` is a pure function of the plan and the word durations, so the
generator can lay a plan out with estimated durations and the renderer again with the
real ones of the voice it draws.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Callable

from .plan import Noise, Plan, Reply, Say
from .script import CHUNK_S, RESPONSE_DELAY_S, Script, UnitTarget, Utterance
from .text import estimate_word_s, pause_after, speech_pieces, spoken_words

DurationFn = Callable[[str, str], float]  # (word, voice 'main'|'other') -> seconds
# (utterance text, voice) -> [(start_s, end_s)] of its spoken words in one connected clip, or None: word by word
WordTimesFn = Callable[[str, str], "list[tuple[float, float]] | None"]


def estimated_duration(word: str, voice: str) -> float:
    return estimate_word_s(word)


def onset_unit(last_word_end: float) -> int:
    """The first unit k whose chunk end (k+1)*CHUNK_S >= last_word_end + RESPONSE_DELAY_S."""
    return max(0, math.ceil((last_word_end + RESPONSE_DELAY_S) / CHUNK_S - 1e-9) - 1)


def units_overlapping(start: float, end: float) -> range:
    """Units whose chunk [k, k+1)*CHUNK_S overlaps the interval (start, end)."""
    return range(int(start // CHUNK_S), math.ceil(end / CHUNK_S - 1e-9))


@dataclass
class Timeline:
    utterances: list[Utterance] = field(default_factory=list)
    words: list[dict] = field(default_factory=list)  # {word, start, end, speaker, role, voice, gain_db}
    # what the renderer mixes, sorted as `words` are: {start, speaker, voice, gain_db} and "word" (a word's clip)
    # or "utterance" (the text of a connected clip, its first word starting at `start`)
    sounds: list[dict] = field(default_factory=list)
    noises: list[dict] = field(default_factory=list)  # {color, start, end, snr_db}
    units: list[UnitTarget] = field(default_factory=list)
    n_units: int = 0


class _Layout:
    """Cursor-based layout state; one method per event kind."""

    def __init__(self, plan: Plan, duration: DurationFn, connected: WordTimesFn | None = None) -> None:
        self.dur = duration
        self.connected = connected
        self.tl = Timeline()
        self.cursor = plan.lead_s  # where the next non-overlapping sound may start
        self.last_user_end: float | None = None
        self.next_free_unit = 0  # the model's next output may not come earlier
        self.model_end = 0.0  # end of the model's last playback
        self.barge_start: float | None = None
        self.part_end: float | None = None
        self.pauses: list[tuple[float, float]] = []
        self.background: list[tuple[float, float]] = []
        self.targets: dict[int, UnitTarget] = {}
        self.tags: dict[int, set[str]] = defaultdict(set)

    def place(self, text: str, start: float, ev: Say) -> float:
        """Put the words of `text` on the timeline from `start`; returns the last word's end."""
        times = self.connected(text, ev.voice) if self.connected is not None else None
        if times is not None:
            return self._place_connected(text, start, ev, times)
        t, end = start, start
        for tok in text.split():
            for w in spoken_words(tok):
                end = t + self.dur(w, ev.voice)
                self._word(w, t, end, ev)
                self._sound(t, ev, word=w)
                t = end + ev.word_gap_s
            t += pause_after(tok)
        return self._utterance(text, start, end, ev)

    def _place_connected(self, text: str, start: float, ev: Say, times: list[tuple[float, float]]) -> float:
        words = [w for tok in text.split() for w in spoken_words(tok)]
        assert len(words) == len(times), f"{len(times)} word times for the {len(words)} words of {text!r}"
        for w, (a, b) in zip(words, times):
            self._word(w, start + a, start + b, ev)
        self._sound(start, ev, utterance=text)
        return self._utterance(text, start, start + times[-1][1], ev)

    def _word(self, w: str, start: float, end: float, ev: Say) -> None:
        self.tl.words.append({"word": w, "start": round(start, 4), "end": round(end, 4), "speaker": ev.speaker,
                              "role": ev.role, "voice": ev.voice, "gain_db": ev.gain_db})

    def _sound(self, start: float, ev: Say, **what: str) -> None:
        self.tl.sounds.append({"start": round(start, 4), "speaker": ev.speaker, "voice": ev.voice,
                               "gain_db": ev.gain_db, **what})

    def _utterance(self, text: str, start: float, end: float, ev: Say) -> float:
        self.tl.utterances.append(Utterance(ev.speaker, text, round(start, 4), round(end, 4), ev.role,
                                            ev.voice, ev.gain_db))
        return end

    def say(self, ev: Say) -> None:
        if ev.role == "barge_in":
            assert self.barge_start is not None, "a barge-in must follow a Reply with interrupt_at"
            start, self.barge_start = self.barge_start, None
        else:
            start = self.cursor + ev.gap_s
        end = self.place(ev.text, start, ev)
        if ev.speaker == "user":
            if self.part_end is not None:
                self.pauses.append((self.part_end, start))
            self.part_end = end if ev.role == "part" else None
            self.last_user_end = end
        else:
            self.background.append((start, end))
        if ev.advance:
            self.cursor = max(self.cursor, end)

    def noise(self, ev: Noise) -> None:
        start = self.cursor + ev.gap_s
        end = start + ev.dur_s
        self.tl.noises.append({"color": ev.color, "start": round(start, 4), "end": round(end, 4),
                               "snr_db": ev.snr_db})
        self.background.append((start, end))
        if ev.advance:
            self.cursor = end

    def reply(self, ev: Reply) -> None:
        assert self.last_user_end is not None, "a Reply needs a user turn before it"
        k = max(onset_unit(self.last_user_end), self.next_free_unit)
        self.tags[k].add("turn_end")
        result_unit = None
        if ev.call is not None:
            self.targets[k] = UnitTarget(k, "tool", ev.call)
            self.tags[k].add("tool")
            k += 1
            result_unit = k
        pieces = speech_pieces(ev.text)
        n_spoken = len(pieces) if ev.interrupt_at is None else ev.interrupt_at
        assert 0 <= n_spoken <= len(pieces), "interrupt_at beyond the reply"
        for i in range(n_spoken):
            last = ev.interrupt_at is None and i == len(pieces) - 1
            self.targets[k + i] = UnitTarget(k + i, "speak", pieces[i], turn_end=last)
            self.tags[k + i].update(ev.tags)
        if result_unit is not None:
            self.targets.setdefault(result_unit, UnitTarget(result_unit))
            self.targets[result_unit].tool_result = ev.result
            self.tags[result_unit].add("tool_result")
        k_last = k + n_spoken - 1
        for bc in ev.backchannels:
            start = (k + bc.piece + 1) * CHUNK_S + bc.offset_s
            end = self.place(bc.text, start, Say(bc.text, role="backchannel"))
            if int(end // CHUNK_S) <= k_last:
                self.tags[int(end // CHUNK_S)].add("backchannel")
        self.model_end = max(self.model_end, (k_last + 2) * CHUNK_S)
        if ev.interrupt_at is None:
            self.next_free_unit = k_last + 1
            self.cursor = max(self.cursor, (k_last + 2) * CHUNK_S)
        else:
            j = k + n_spoken
            self.barge_start = j * CHUNK_S + ev.interrupt_offset_s
            self.tags[j].add("barge_in")
            self.next_free_unit = j + 1

    def finish(self, tail_units: int) -> Timeline:
        ends = [self.model_end, self.cursor] + [w["end"] for w in self.tl.words] + \
               [n["end"] for n in self.tl.noises]
        n = math.ceil(max(ends) / CHUNK_S - 1e-9) + tail_units
        for a, b in self.pauses:
            for k in range(n):
                if (k + 1) * CHUNK_S >= a + RESPONSE_DELAY_S and k * CHUNK_S < b:
                    self.tags[k].add("pause")
        for a, b in self.background:
            for k in units_overlapping(a, b):
                self.tags[k].add("background")
        units = []
        for k in range(n):
            u = self.targets.get(k, UnitTarget(k))
            u.tags = sorted(self.tags.get(k, ()))
            units.append(u)
        self.tl.units, self.tl.n_units = units, n
        self.tl.words.sort(key=lambda w: (w["start"], w["speaker"]))
        self.tl.sounds.sort(key=lambda w: (w["start"], w["speaker"]))
        return self.tl


def layout(plan: Plan, duration: DurationFn = estimated_duration, connected: WordTimesFn | None = None) -> Timeline:
    """Lay `plan` out with per-word `duration`s into utterances, word times and unit targets; an utterance
    that `connected` times is laid out as one clip with those word times."""
    lay = _Layout(plan, duration, connected)
    for ev in plan.events:
        {"say": lay.say, "noise": lay.noise, "reply": lay.reply}[ev.kind](ev)
    assert lay.barge_start is None, "a Reply with interrupt_at needs a barge-in Say after it"
    return lay.finish(plan.tail_units)


def realize(script: Script, duration: DurationFn = estimated_duration,
            connected: WordTimesFn | None = None) -> tuple[Script, Timeline]:
    """Lay `script.plan` out with `duration` (and `connected`, see `layout`) and return the script with the new
    timing."""
    tl = layout(Plan.from_dict(script.plan), duration, connected)
    return replace(script, utterances=tl.utterances, units=tl.units, n_units=tl.n_units), tl
