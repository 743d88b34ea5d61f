"""Debian's chromium driven by Playwright (no browser download): one launch for every browser test."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags chromium keeps calling out, refused by a closed network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# Words in the page's tables, times and headings that break across lines (a line box per word; file names,
# which may break at - _ / ., excepted): #39 saw "Nam/e" and dates letter by letter at 390 px.
BROKEN_WORDS = """() => {
  const broken = [];
  for (const el of document.querySelectorAll('main th, main td, main time, main h2')) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const re = /\\S+/g; let m;
      while ((m = re.exec(node.textContent))) {
        const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        if (r.getClientRects().length > 1 && !/[-_/.]/.test(m[0])) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


@contextmanager
def chromium() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.fail("Debian's chromium is needed for the web view tests: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
