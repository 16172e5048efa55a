from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

# No per-example time limit: CI machines are shared and slow at times, and a slow example is
# not a wrong one (speed is measured in benchmarks/). Tests' own @settings add to this.
settings.register_profile("tokenmill", deadline=None)
settings.load_profile("tokenmill")

# Large corpora for extended checks; present in CI, possibly absent in a user's clone.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present in this clone")
    return SHARED_DATA


@pytest.fixture(scope="session")
def browser():  # type: ignore[no-untyped-def]
    """Headless Debian chromium driven by Playwright (scripts/test.sh installs both).

    Outside CI a machine without chromium skips the browser tests; in CI that is a failure.
    """
    import os
    import shutil

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (scripts/test.sh installs it)")
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


@pytest.fixture()
def page(browser):  # type: ignore[no-untyped-def]
    """A fresh page in the session's browser; any JavaScript error on it fails the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
