"""The report in a real browser: headless Chromium opens ``index.html``, every image loads and
every in-page anchor resolves. A deliberately broken page must fail the same check.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it when it can). Playwright
drives it when installed (``executable_path``), otherwise Chromium's own ``--dump-dom`` mode
runs a check script injected into a copy of the page. Without any Chromium the test is
skipped and says why. ``HARDSOFT_SCREENSHOTS=DIR`` keeps the screenshots to look at;
``HARDSOFT_BROWSER=dump-dom`` uses the fallback even where Playwright is installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hardsoft.experiments import _REGISTRY, Context, Result, Table, register
from hardsoft.reproduce import reproduce

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

CHECK_JS = """() => {
  const images = [...document.images].map(i => ({src: i.getAttribute('src'),
                                                   ok: i.complete && i.naturalWidth > 0}));
  const anchors = [...document.querySelectorAll('a[href^="#"]')].map(a => {
    const id = decodeURIComponent(a.getAttribute('href').slice(1));
    return {href: a.getAttribute('href'), ok: document.getElementById(id) !== null};
  });
  return {images, anchors, title: document.title};
}"""


def chromium() -> str | None:
    """The Chromium binary: $HARDSOFT_CHROMIUM, or Debian's chromium on PATH."""
    if os.environ.get("HARDSOFT_CHROMIUM"):
        return os.environ["HARDSOFT_CHROMIUM"]
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _with_playwright(exe: str, page: Path, profile: Path, shot: Path) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(profile), executable_path=exe, headless=True, args=FLAGS[1:]
        )
        try:
            tab = ctx.new_page()
            tab.set_viewport_size({"width": 1280, "height": 900})
            tab.goto(page.as_uri(), wait_until="load")
            result = tab.evaluate(CHECK_JS)
            tab.screenshot(path=str(shot), full_page=True)
        finally:
            ctx.close()
    return result


def _with_dump_dom(exe: str, page: Path, profile: Path, shot: Path) -> dict:
    probe = page.with_name("_browser_check.html")
    script = (
        "<script>window.addEventListener('load', () => { const r = ("
        + CHECK_JS
        + ")(); const pre = document.createElement('pre'); pre.id = 'hs-check';"
        " pre.textContent = JSON.stringify(r); document.body.appendChild(pre); });</script>"
    )
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    base = [exe, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000"]
    dom = subprocess.run(
        [*base, "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120
    ).stdout
    subprocess.run(
        [*base, f"--screenshot={shot}", "--window-size=1280,3000", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
    probe.unlink()
    found = re.search(r'<pre id="hs-check">(.*?)</pre>', dom, re.S)
    assert found, f"the check script did not run: {dom[:300]!r}"
    text = found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    return json.loads(text.replace("&amp;", "&"))


def open_in_chromium(page: Path, tmp: Path) -> tuple[dict, Path]:
    """Load ``page`` in headless Chromium; its images and anchors, and a screenshot."""
    exe = chromium()
    if exe is None:
        pytest.skip("no Chromium here: install Debian's chromium (apt-get install chromium)")
    shot = Path(os.environ.get("HARDSOFT_SCREENSHOTS") or tmp) / f"{page.stem}.png"
    profile = tmp / f"profile-{page.stem}"  # a fresh user-data-dir per run
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return _with_dump_dom(exe, page, profile, shot), shot
    if os.environ.get("HARDSOFT_BROWSER") == "dump-dom":
        return _with_dump_dom(exe, page, profile, shot), shot
    return _with_playwright(exe, page, profile, shot), shot


@pytest.fixture
def figure_experiment():
    @register("zz-browser-figure", title="Browser check: a figure", version="1", order=10_002)
    def run(ctx: Context) -> Result:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot([1, 2, 4, 8], [1, 0.5, 0.25, 0.125], "o-", label="1/n")
        ax.set_xlabel("n")
        ax.set_ylabel("value")
        ax.legend()
        fig.savefig(ctx.figure_path("browser_check.png"), dpi=100)
        plt.close(fig)
        table = Table("a table", ["n", "value"], [[1, 1.0], [2, 0.5]])
        return Result({"x": 1}, figures=["browser_check.png"], tables=[table], summary="ok")

    yield
    _REGISTRY.pop("zz-browser-figure")


def test_report_opens_in_chromium_with_every_image_and_anchor(tmp_path, figure_experiment):
    out = tmp_path / "report"
    summary = reproduce(out, only=["softmax-to-hardmax", "zz-browser-figure"], show_progress=False)
    assert not summary["failed"], summary["failed"]
    result, shot = open_in_chromium(out / "index.html", tmp_path)
    assert result["title"] == "hardsoft report (quick)"
    assert len(result["images"]) == 2, result["images"]
    assert all(img["ok"] for img in result["images"]), result["images"]
    hrefs = {a["href"] for a in result["anchors"]}
    assert {"#softmax-to-hardmax", "#zz-browser-figure", "#summary"} <= hrefs
    assert all(a["ok"] for a in result["anchors"]), result["anchors"]
    assert shot.stat().st_size > 20_000  # a real rendering, not a blank page


def test_the_check_catches_a_missing_image_and_a_dangling_anchor(tmp_path) -> None:
    page = tmp_path / "broken.html"
    page.write_text(
        "<!doctype html><html><head><title>broken</title></head><body>"
        "<a href='#nowhere'>x</a><a href='#here'>y</a><h2 id='here'>here</h2>"
        "<img src='figures/missing.png' alt='missing'></body></html>"
    )
    result, _ = open_in_chromium(page, tmp_path)
    assert [img["ok"] for img in result["images"]] == [False]
    assert {a["href"]: a["ok"] for a in result["anchors"]} == {"#nowhere": False, "#here": True}
