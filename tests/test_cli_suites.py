"""The CLI names its suites by hand (building the parser imports no scenario code); these keep the lists true to
the registry in scenarios/suites.py."""
import argparse

from ticktock.cli import build_parser
from ticktock.scenarios.suites import SUITES


def _suite_choices(*path: str) -> list[str]:
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return next(a for a in parser._actions if a.dest == "suite").choices


def test_data_make_offers_every_renderable_suite():
    assert sorted(_suite_choices("data", "make")) == sorted(n for n in SUITES if n != "train")


def test_eval_offers_only_registered_suites_and_every_voiced_copy():
    choices = _suite_choices("eval")
    assert set(choices) <= set(SUITES)
    # the copies eval reaches by flag (--phase-jitter) are left out; every other copy of heldout is offered
    copies = {n for n, s in SUITES.items() if s.voiced_from == "heldout"}
    assert copies <= set(choices)
    assert not any(SUITES[n].jitter_of for n in choices)


def test_bench_and_memory_offer_only_registered_suites():
    for command in ("bench", "memory"):
        assert set(_suite_choices(command)) <= set(SUITES)
