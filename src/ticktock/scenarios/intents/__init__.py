"""What users ask: short questions, word problems, long explanations, tool requests, dictation.

Each intent is `fn(rng) -> Exchange` (or `Memo` for dictation) with several phrasings."""

from .exchange import Exchange, Memo
from .explain import long_request
from .memo import dictation
from .qa import short_question
from .reasoning import word_problem
from .tools import tool_request

__all__ = ["Exchange", "Memo", "dictation", "long_request", "short_question", "tool_request",
           "word_problem"]
