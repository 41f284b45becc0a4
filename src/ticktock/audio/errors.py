"""Errors raised by the audio front-end."""

from __future__ import annotations


class AudioError(ValueError):
    """Bad audio input (missing/unreadable file, bad dtype, rate, NaNs, ...).

    Subclasses ValueError so callers that already catch ValueError keep working;
    the message is meant to be shown to the user as-is, and `hint` (if any) says what to do about it.
    """

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint
