"""English said with another language's festival diphones: more English voices from festival's foreign ones.

festival's foreign voices read English with their own front end (an Italian reading of English spelling). Here the
front end is the English one of festival's kdl voice (CMU lexicon, English phrasing, accents and durations) and only
the waveform comes from the foreign voice's diphones (real recordings of another speaker), each English phone
mapped to the nearest phone that voice has. Voice `festival/english_pc_diphone`: English phones in Piero Cosi's
Italian diphones (also `english_lp_diphone`, Italian, and `english_hy_fi_mv_diphone`, Finnish). Needs the kdl voice
(festvox-kdlpc16k) and the diphone voice installed.
"""

from __future__ import annotations

PREFIX = "english_"
FRONT = "ked_diphone"  # whose English front end speaks
# CMU (radio) phones -> the nearest phones of festival's Italian and Finnish phone sets; diphthongs keep their
# first vowel, phones a language lacks take the nearest it has
TO_ITALIAN = {
    "aa": "a", "ae": "E", "ah": "a", "ao": "O", "aw": "a", "ax": "a", "ay": "a", "b": "b", "ch": "tS", "d": "d",
    "dh": "d", "eh": "E", "er": "e", "ey": "e", "f": "f", "g": "g", "hh": "#", "ih": "i", "iy": "i", "jh": "dZ",
    "k": "k", "l": "l", "m": "m", "n": "n", "ng": "ng", "ow": "o", "oy": "O", "p": "p", "r": "r", "s": "s",
    "sh": "S", "t": "t", "th": "t", "uh": "u", "uw": "u", "v": "v", "w": "w", "y": "j", "z": "z", "zh": "Z",
    "pau": "#",
}
# Finnish: where it differs from the Italian map
TO_FINNISH = {**TO_ITALIAN, "aa": "a:", "ae": "e", "ao": "o:", "ax": "e", "ch": "S", "eh": "e", "hh": "h",
              "iy": "i:", "jh": "j", "ng": "N", "oy": "o", "th": "T", "uw": "u:", "z": "s", "zh": "S"}
# voice -> (its diphone database, the phone map into its phone set)
DIPHONE_DBS = {"pc_diphone": ("pc_lpc_group", TO_ITALIAN), "lp_diphone": ("lp_lpc_group", TO_ITALIAN),
               "hy_fi_mv_diphone": ("mv_lpc_group", TO_FINNISH)}


def diphones_of(voice: str) -> str | None:
    """The diphone voice behind an English-front-end voice name ('english_pc_diphone' -> 'pc_diphone'), else None."""
    return voice[len(PREFIX):] if voice.startswith(PREFIX) and voice[len(PREFIX):] in DIPHONE_DBS else None


def needs(voice: str) -> tuple[str, ...]:
    """The festival voices that must be installed to say `voice`."""
    db = diphones_of(voice)
    return (FRONT, db) if db else (voice,)


def scheme_lines(voice: str) -> list[str]:
    """festival commands that make the English front end speak through `voice`'s diphones."""
    db = diphones_of(voice)
    database, phones = DIPHONE_DBS[db]
    pairs = " ".join(f'("{a}" "{b}")' for a, b in phones.items())
    return [f"(voice_{FRONT})",
            f'(load (path-append (cdr (assoc \'{db} voice-locations)) "festvox/{db}.scm"))',  # its database
            f"(voice_{FRONT})",  # the English front end again, over whatever loading the voice file set
            f"(set! tt_phone_map '({pairs}))",
            "(define (tt_map_phones utt) (mapcar (lambda (s) (let ((m (assoc_string (item.name s) tt_phone_map)))"
            " (if m (item.set_name s (cadr m))))) (utt.relation.items utt 'Segment)) utt)",
            "(set! UniSyn_module_hooks (list tt_map_phones))",
            "(Parameter.set 'us_sigpr 'lpc)",
            f"(us_db_select '{database})"]
