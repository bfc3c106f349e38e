"""`memrepo serve` in a real browser: headless Chromium (Debian's `chromium` and `chromedriver`,
installed by .ci/run) driven by Selenium, against a real server over a real repository.

Clicks, not requests: the browser logs in by opening the one-time URL the server prints; search
finds a memory; a review proposal accepted by its button becomes a commit with its trailers, and
the loser's history then shows that commit's diff; undo by its button restores the files byte
for byte; `<script>` in a memory shows as text and never runs; a form on another page posting
without the token is refused; a foreign Host is refused; without the login nothing shows. The
run also takes the screenshots of docs/web.md (docs/screenshots/*.png, rewritten with MEMREPO_SCREENSHOTS=1).

Chromium runs with the flags that keep it off the network (no background networking, no
component updates, no sync), and reaches only 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Iterator

import pytest

from helpers import commit_all, git, write_memory
from memrepo.web import server
from test_curate import fake, ids  # noqa: F401  (fixture)
from test_review import tensions

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
# docs/web.md's pictures: rewritten with MEMREPO_SCREENSHOTS=1 (each run's differ in their times, and
# a test run should not change the checkout); otherwise taken into a temporary folder and checked.
SHOTS = ROOT / "docs" / "screenshots" if os.environ.get("MEMREPO_SCREENSHOTS") == "1" else \
    Path(tempfile.mkdtemp(prefix="memrepo-screenshots-"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-dev-shm-usage", "--window-size=1280,900",
         "--host-resolver-rules=MAP evil.example 127.0.0.1")


def _unavailable() -> str:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        return "Debian's chromium and chromium-driver are not installed (.ci/run installs them)"
    return ""


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    why = _unavailable()
    if why:
        if os.environ.get("MEMREPO_E2E_REQUIRE") == "1":
            pytest.fail(f"browser tests cannot run: {why}", pytrace=False)
        pytest.skip(why)
    os.environ.setdefault("SE_AVOID_STATS", "true")  # Selenium Manager never runs: both paths are given
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _serve(repo: str, driver: object) -> Iterator[str]:
    """A server, and the browser logged in the way its user would: by opening the one-time URL
    that `memrepo serve` prints (`App.login_url`), which leaves it on the memories page."""
    srv = server.Server(server.App(repo, label="~/team-memory"), 0)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        driver.get(srv.app.login_url())  # type: ignore[attr-defined]
        assert driver.find_element(_by("tag"), "h1").text == "Memories"  # type: ignore[attr-defined]
        yield f"http://127.0.0.1:{srv.app.port}"
    finally:
        srv.shutdown()
        srv.server_close()


def _by(kind: str) -> str:
    from selenium.webdriver.common.by import By

    return {"css": By.CSS_SELECTOR, "name": By.NAME, "tag": By.TAG_NAME, "xpath": By.XPATH}[kind]


def _click(driver: object, element: object, until: str) -> None:
    """Click, then wait until the page that follows holds `until` (a click returns before its navigation ends)."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def holds(d: object) -> bool:
        try:
            return until in d.find_element(_by("tag"), "body").text  # type: ignore[attr-defined]
        except (StaleElementReferenceException, NoSuchElementException):
            return False
        except WebDriverException as exc:  # Chromium's form of "stale" while the next page replaces the body
            if "does not belong to the document" in str(exc):
                return False
            raise

    element.click()  # type: ignore[attr-defined]
    # The body found may belong to the page being left: read it again until the new one holds `until`.
    WebDriverWait(driver, 60).until(holds)


def _shot(driver: object, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"{name}.png"))  # type: ignore[attr-defined]


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, "friday-freeze", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships to production without an explicit OK.",
                 topics=["deploy", "release policy"], entities=["production"])
    write_memory(repo, "coffee-order", title="The team orders coffee from the corner roaster",
                 description="Beans come from the corner roaster every Monday.", topics=["coffee"])
    assert commit_all(repo, "memories").returncode == 0
    return repo


def test_search_finds_a_memory_and_its_page_opens(browser, store: str) -> None:
    d = browser
    for base in _serve(store, d):
        d.get(base + "/")
        box = d.find_element(_by("name"), "q")
        box.send_keys("can I deploy to production on friday?")
        _click(d, d.find_element(_by("xpath"), "//button[text()='Search']"), "1 of 2 memories")
        links = [a.text for a in d.find_elements(_by("css"), "tbody a")]
        assert links == ["No production deploys on Friday afternoon"], links
        _click(d, d.find_element(_by("css"), "tbody a"), "History")
        assert d.find_element(_by("tag"), "h1").text == "No production deploys on Friday afternoon"
        assert "History" in d.find_element(_by("tag"), "body").text
        _shot(d, "memory")


def test_a_proposal_accepted_by_clicking_is_a_commit_and_its_diff_is_in_the_history(browser, repo: str,
                                                                                     fake) -> None:  # noqa: F811
    tensions(repo, fake, "p13")
    loser, winner = ids("p13")
    d = browser
    for base in _serve(repo, d):
        d.get(base + "/review")
        assert loser in d.find_element(_by("tag"), "body").text
        _shot(d, "review")
        _click(d, d.find_element(_by("xpath"), "//button[text()='Accept']"), "accepted")
        trailers = git(repo, "log", "-1", "--format=%(trailers:unfold,only)").stdout
        assert "Memrepo-Action: supersede\n" in trailers and "Memrepo-Proposal: " in trailers
        assert git(repo, "log", "-1", "--format=%s").stdout.strip() == f"curator: supersede {loser} by {winner}"
        d.get(f"{base}/m/{loser}")
        history = d.find_element(_by("xpath"), "//h2[text()='History']/following-sibling::section[1]")
        assert f"curator: supersede {loser} by {winner}" in history.text
        added = [e.text for e in history.find_elements(_by("css"), "pre.diff span.add")]
        assert f"+superseded_by: {winner}" in added, added
        assert "supersede" in history.find_element(_by("css"), "table").text


def test_undo_by_clicking_restores_the_files_byte_for_byte(browser, store: str) -> None:
    from memrepo.store import lifecycle

    path = os.path.join(store, "memory", "friday-freeze.md")
    before = open(path, "rb").read()
    _, run = lifecycle.retire(store, "friday-freeze", "the freeze ended")
    assert open(path, "rb").read() != before
    d = browser
    for base in _serve(store, d):
        d.get(base + "/runs")
        _shot(d, "runs")
        row = d.find_element(_by("xpath"), f"//tr[td[text()='{run}']]")
        _click(d, row.find_element(_by("xpath"), ".//button[text()='Undo']"), "undid")
        assert open(path, "rb").read() == before
        assert git(store, "status", "--porcelain").stdout == ""


def test_script_in_a_memory_shows_as_text_and_never_runs(browser, repo: str) -> None:
    write_memory(repo, "xss-probe", title="Probe <script>document.title='owned'</script>",
                 description="<img src=x onerror=\"document.title='owned'\">", topics=["probe"],
                 body="<script>document.title='owned'</script>\n")
    assert commit_all(repo, "probe").returncode == 0
    d = browser
    for base in _serve(repo, d):
        for path in ("/", "/m/xss-probe"):
            d.get(base + path)
            assert d.title != "owned"  # the script would have set it so; the title shows it as text
            assert "<script>document.title='owned'</script>" in d.find_element(_by("tag"), "body").text
            assert not d.find_elements(_by("css"), "main script, main img")


def test_a_form_on_another_page_cannot_change_anything(browser, store: str, tmp_path: Path) -> None:
    """A cross-site form post: another page's form aimed at the server, without the token, from a
    browser logged in (its SameSite=Strict cookie stays home, and the Origin is not the server's)."""
    from memrepo.store import lifecycle

    _, run = lifecycle.retire(store, "friday-freeze", "the freeze ended")
    head = git(store, "rev-parse", "HEAD").stdout
    d = browser
    for base in _serve(store, d):
        attack = tmp_path / "attack.html"
        attack.write_text(f'<form method="post" action="{base}/runs/undo"><input name="run" value="{run}">'
                          '<button type="submit">win a prize</button></form>')
        d.get(attack.as_uri())
        _click(d, d.find_element(_by("tag"), "button"), "changes need a login")
    assert git(store, "rev-parse", "HEAD").stdout == head


def test_a_foreign_host_name_is_refused(browser, store: str) -> None:
    """DNS rebinding: evil.example resolves to 127.0.0.1 (--host-resolver-rules), the server refuses it."""
    d = browser
    for base in _serve(store, d):
        d.get(base.replace("127.0.0.1", "evil.example") + "/")
        assert "answers only to 127.0.0.1 and localhost" in d.find_element(_by("tag"), "body").text
        d.get(base.replace("127.0.0.1", "localhost") + "/")  # a name the server answers to, but a new site:
        assert d.find_element(_by("tag"), "h1").text == "Not logged in"  # its cookie is 127.0.0.1's


def test_without_the_login_nothing_shows(browser, store: str) -> None:
    """Another user's browser, or this one before the login: a page naming the fix, no memory."""
    d = browser
    for base in _serve(store, d):
        assert "Friday afternoon" in d.find_element(_by("tag"), "body").text
        d.delete_all_cookies()
        for path in ("/", "/runs", "/m/friday-freeze"):
            d.get(base + path)
            body = d.find_element(_by("tag"), "body").text
            assert "needs a login" in body and "memrepo serve --login-url" in body and "Friday" not in body
        assert not d.get_cookies()


def test_screenshots_of_the_pages(browser, store: str) -> None:
    """docs/web.md's pictures of the memories list and the recall timeline (review, runs and one
    memory are taken by the tests above, on their own repositories)."""
    from memrepo.recall import decide, log

    for prompt, agent in (("it's friday 17:00, can I still ship this hotfix to production?", ""),
                          ("ok, go ahead", "codex"), ("what do we order coffee from?", "gemini")):
        log.log_decision(store, prompt, decide.decide(store, prompt), "s-1", agent)
    d = browser
    for base in _serve(store, d):
        d.get(base + "/")
        _shot(d, "memories")
        d.get(base + "/recall")
        assert d.find_elements(_by("tag"), "svg")
        _shot(d, "recall")
    for name in ("memories", "recall"):
        assert (SHOTS / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
