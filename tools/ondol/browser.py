"""Headless Chromium (Debian's `chromium`, installed by scripts/deps.sh): renders a page
as a reader's browser would, to check it (tests) and to take its screenshot (`./ondol
report --png`)."""
import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ondol import OndolError

NAMES = ("chromium", "chromium-browser")
WIDTH = 1280
# --no-sandbox: Chromium refuses to run as root with its sandbox, and CI runs as root.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--hide-scrollbars", "--disable-dev-shm-usage", "--virtual-time-budget=10000")

# Injected first into a copy of the page: records every error (scripts, resources that
# fail to load, console.error) and, once the page has loaded, what each <figure> shows and
# the page's text, as JSON in <pre id=ondol-probe> for --dump-dom to carry out.
PROBE = """<script>
window.ondolErrors = [];
window.addEventListener("error", e => window.ondolErrors.push(
  e.message || "failed to load " + ((e.target && (e.target.src || e.target.href)) || "?")), true);
const ondolConsoleError = console.error;
console.error = (...args) => { window.ondolErrors.push(args.join(" "));
                               ondolConsoleError(...args); };
window.addEventListener("load", () => {
  const figures = [...document.querySelectorAll("figure")].map(f => {
    const g = f.querySelector("svg, img");
    const box = g ? g.getBoundingClientRect() : {width: 0, height: 0};
    const isImg = g && g.tagName.toLowerCase() === "img";
    return {id: f.id, kind: g ? g.tagName.toLowerCase() : null,
            width: box.width, height: box.height,
            loaded: !!g && (!isImg || (g.complete && g.naturalWidth > 0)),
            marks: g && !isImg ? g.querySelectorAll("path").length : 0};
  });
  const out = document.createElement("pre");
  out.id = "ondol-probe";
  out.textContent = JSON.stringify({figures, errors: window.ondolErrors,
    height: document.documentElement.scrollHeight, text: document.body.innerText});
  document.body.appendChild(out);
});
</script>"""


def find() -> str | None:
    """The Chromium binary on PATH, or None."""
    return next(filter(None, map(shutil.which, NAMES)), None)


def probe(page: Path, timeout: float = 120) -> dict:
    """Render `page` and return what the probe saw: `figures` (id, kind, width, height,
    loaded, marks = SVG paths drawn), `errors`, `height` (pixels) and `text`; plus
    `console`, the browser's own log lines that report an uncaught error."""
    copy = page.with_name(f".probe-{page.name}")
    source = page.read_text()
    head = source.index("<head>") + len("<head>")
    copy.write_text(source[:head] + PROBE + source[head:])
    try:
        proc = _run(["--enable-logging=stderr", "--v=0", "--dump-dom", copy.as_uri()],
                    timeout)
    finally:
        copy.unlink()
    found = re.search(r'<pre id="ondol-probe">(.*?)</pre>', proc.stdout, re.S)
    if not found:
        raise OndolError(f"chromium rendered no probe result for {page} "
                         f"(exit {proc.returncode}): {proc.stderr[-500:]}")
    seen = json.loads(html.unescape(found.group(1)))
    seen["console"] = [line for line in proc.stderr.splitlines()
                       if "CONSOLE" in line and "Uncaught" in line]
    return seen


def screenshot(page: Path, png: Path, timeout: float = 120) -> Path:
    """A PNG of the whole page, WIDTH pixels wide (the height measured by `probe`)."""
    height = probe(page, timeout)["height"]
    _run([f"--window-size={WIDTH},{height}", f"--screenshot={png.resolve()}",
          page.as_uri()], timeout)
    if not png.is_file():
        raise OndolError(f"chromium wrote no screenshot {png}")
    return png


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    binary = find()
    if binary is None:
        raise OndolError("chromium is not installed (scripts/deps.sh installs it)")
    # A profile of its own, so parallel runs do not share (and lock) one.
    with tempfile.TemporaryDirectory(prefix="ondol-chromium-") as profile:
        try:
            return subprocess.run([binary, *FLAGS, f"--user-data-dir={profile}", *args],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise OndolError(f"chromium took more than {timeout:.0f} s") from None
