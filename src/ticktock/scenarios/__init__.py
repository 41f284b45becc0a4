"""The synthetic spoken-dialogue world (docs/design.md §5): scripted sessions for nine task families,
rendered with espeak-ng (and, for training and held-out checks, festival, SAM and flite) to 16 kHz audio
with exact word times.

    from ticktock.scenarios import make_scripts, write_suite, load_manifest
    scripts = make_scripts("quick")            # Script objects (timing from estimated durations)
    write_suite("quick", "data/quick")         # audio + manifest.jsonl (timing from real audio)

Pieces: `world` (facts, mock tools), `intents/` (what is asked), `families` (how the turn
unfolds), `plan` + `timeline` (events laid out in time; rules in `script`), `espeak` +
`festival` + `sam` + `flite` (other engines, `engines` routes voices to them) + `render` + `augment` + `effects`
(audio), `voices` (train / held-out split), `suites` (named sets),
`corpus` (tokenizer text).
"""

from .augment import CLEAN, Augment
from .corpus import corpus_texts
from .espeak import EspeakError, EspeakRenderer, espeak_available
from .families import FAMILIES, long_session
from .plan import Backchannel, Noise, Plan, Reply, Say
from .render import Rendered, render_session
from .script import (CHUNK_S, DECISIONS, RESPONSE_DELAY_S, TAGS, Script, UnitTarget, Utterance,
                     check_script, parse_call, parse_calls, same_call)
from .suites import (GENERATORS, SUITES, Suite, iter_scripts, load_manifest, load_session,
                     make_scripts, manifest_entry, render_script, script_at, write_suite)
from .timeline import Timeline, layout, onset_unit, realize
from .voices import HELDOUT_VOICES, TRAIN_VOICES, Voice, draw_voice
from .world import TOOLS, format_call, format_calls, run_tool

__all__ = [
    "Augment", "Backchannel", "CHUNK_S", "CLEAN", "DECISIONS", "EspeakError", "EspeakRenderer",
    "FAMILIES", "GENERATORS", "HELDOUT_VOICES", "Noise", "Plan", "RESPONSE_DELAY_S", "Rendered",
    "Reply", "SUITES", "Say", "Script", "Suite", "TAGS", "TOOLS", "TRAIN_VOICES",
    "Timeline", "UnitTarget", "Utterance", "Voice", "check_script", "corpus_texts", "draw_voice",
    "espeak_available", "format_call", "format_calls", "iter_scripts", "layout", "load_manifest", "load_session",
    "long_session", "make_scripts", "manifest_entry", "onset_unit", "parse_call", "parse_calls", "realize",
    "render_script", "render_session", "run_tool", "same_call", "script_at", "write_suite",
]
