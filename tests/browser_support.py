"""What the browser tests share: Playwright's sync API, the Chromium binary, the marks that skip them without
either (or without a shipped model) and the folder their screenshots go to."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ticktock.model import DEFAULT_MODEL

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_MARKS = [
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (Debian: apt-get install chromium)"),
    pytest.mark.skipif(not (DEFAULT_MODEL / "model.safetensors").exists(), reason="no shipped model"),
]
ARTIFACTS = Path(__file__).parent / "artifacts"
