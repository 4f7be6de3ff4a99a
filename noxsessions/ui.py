"""nox sessions of mcpkit-ext-ui (MCP Apps): its tests alone, and the browser tests.

Rules:
1. ``ext-ui`` installs mcpkit-ext-ui alone with its ``test`` group (common rule 1).
2. ``ext-ui-browser`` drives Debian's ``chromium`` (installed with apt when missing; the
   session fails, never skips, when it cannot) with Playwright for Python, launching the
   system binary: Playwright's own browser download cannot work here.
3. The reference App SDK, npm ``@modelcontextprotocol/ext-apps`` at :data:`EXT_APPS_VERSION`,
   comes from the npm registry with ``npm pack`` (Node 22 from
   ``conformance/toolchain.py``); the tarball is cached in the session's tmp dir and
   unpacked fresh each run. Its ``dist/src`` directory is passed as ``MCPKIT_EXT_APPS_DIR``.
4. Screenshots go to ``.nox/ext-ui-browser/tmp/screenshots/`` (``MCPKIT_SCREENSHOTS``),
   emptied at the start of each run. The tests write nothing else, and never a tracked
   file.
5. ``ui-example-png`` (not in the default run) is the one step that redraws the docs
   picture ``docs/extensions/ui-example.png``: it runs the example-app browser test, copies
   its screenshot over the picture and records the picture's inputs
   (``tools/docs_pictures.py --write ui-example``). The lint session's
   ``tools/tests/test_docs_pictures.py`` fails while those inputs differ from the record.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import nox

from noxsessions.common import ensure_apt, pytest, sync, xdist_workers

ROOT = Path(__file__).resolve().parent.parent
EXT_APPS_PACKAGE = "@modelcontextprotocol/ext-apps"
EXT_APPS_VERSION = "2.0.4"
"""The App SDK the interop test loads (issue 16: the reference is 2.0.4)."""


@nox.session(name="ext-ui")
def ext_ui(session: nox.Session) -> None:
    """mcpkit-ext-ui alone: its tests with only mcpkit-core and its `test` group."""
    sync(session, "mcpkit-ext-ui", "test")
    pytest(session, "packages/mcpkit-ext-ui/tests", workers=xdist_workers())


def ext_apps_sdk(session: nox.Session, tmp: Path) -> Path:
    """Rule 3: the unpacked ``dist/src`` of the pinned App SDK (``app-with-deps.js`` in it)."""
    cache = tmp / "npm"
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / f"modelcontextprotocol-ext-apps-{EXT_APPS_VERSION}.tgz"
    if not tarball.exists():
        sys.path.insert(0, str(ROOT / "conformance"))
        import toolchain  # conformance/toolchain.py: Node 22 and npm, pinned

        npm = shutil.which("npm")
        if npm is None:
            session.error("npm not found: install it (apt-get install -y npm) for the App SDK")
        argv = [npm, "pack", f"{EXT_APPS_PACKAGE}@{EXT_APPS_VERSION}", "--pack-destination"]
        done = subprocess.run(
            [*argv, str(cache), "--silent"],
            env=toolchain.toolchain_env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0 or not tarball.exists():
            session.error(f"npm pack {EXT_APPS_PACKAGE}@{EXT_APPS_VERSION}: {done.stderr[-2000:]}")
    unpacked = tmp / "ext-apps"
    shutil.rmtree(unpacked, ignore_errors=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(unpacked, filter="data")
    sdk = unpacked / "package" / "dist" / "src"
    if not (sdk / "app-with-deps.js").is_file():
        session.error(f"{tarball} has no package/dist/src/app-with-deps.js")
    return sdk


def browser_env(session: nox.Session) -> Path:
    """Chromium, the ``browser`` group and the App SDK (rules 2-3); an empty screenshots
    directory in the session's tmp dir (rule 4), returned."""
    programs = ensure_apt(session, {"chromium": "chromium"})
    sync(session, "mcpkit-ext-ui", "browser")
    tmp = Path(session.create_tmp())
    screenshots = tmp / "screenshots"
    shutil.rmtree(screenshots, ignore_errors=True)
    screenshots.mkdir(parents=True)
    session.env["MCPKIT_CHROMIUM"] = programs["chromium"]
    session.env["MCPKIT_EXT_APPS_DIR"] = str(ext_apps_sdk(session, tmp))
    session.env["MCPKIT_SCREENSHOTS"] = str(screenshots)
    return screenshots


@nox.session(name="ext-ui-browser")
def ext_ui_browser(session: nox.Session) -> None:
    """The MCP Apps browser tests: Playwright drives Debian's chromium (apt) headless,
    offline; the npm App SDK is loaded in a page for the interop test. Screenshots:
    `.nox/ext-ui-browser/tmp/screenshots/`; no tracked file is written."""
    browser_env(session)
    pytest(session, "packages/mcpkit-ext-ui/tests_browser")


@nox.session(name="ui-example-png", default=False)
def ui_example_png(session: nox.Session) -> None:
    """Rule 5: redraw `docs/extensions/ui-example.png` from the example-app browser test and
    record its inputs. Run it on purpose when the check says the picture is stale."""
    screenshots = browser_env(session)
    test = "packages/mcpkit-ext-ui/tests_browser/test_examples.py"
    session.run(
        "python", "-m", "pytest", "-q", f"{test}::test_example_app_renders_its_chart_and_stats"
    )
    shutil.copyfile(screenshots / "example-app.png", ROOT / "docs/extensions/ui-example.png")
    session.run("python", str(ROOT / "tools" / "docs_pictures.py"), "--write", "ui-example")
