"""The headless browser's reading of pages: forms parsed with html.parser (the fields a
browser would submit), and a choice it was not told how to make is an error."""

from __future__ import annotations

import pytest
from idp import Form, HeadlessBrowser, LoginFailed, Tls, parse_forms, same_endpoint

PAGE = """<!doctype html><html><body>
<input name="outside" value="not sent">
<form method="POST" action="/consent?x=1&amp;y=2">
  <input type="hidden" name="csrf" value="a&quot;b">
  <input type="text" name="login">
  <input type="password" name="password">
  <input type="checkbox" name="remember" value="yes">
  <input type="checkbox" name="terms" value="ok" checked>
  <button type="submit" name="decision" value="approve">Approve</button>
  <button name="decision" value="deny">Deny</button>
</form>
<input name="after" value="not sent either">
</body></html>"""


def test_a_form_is_read_as_a_browser_submits_it() -> None:
    (form,) = parse_forms(PAGE)
    assert form.action == "/consent?x=1&y=2"  # entities decoded
    assert form.method == "post"
    assert form.fields == [("csrf", 'a"b'), ("login", ""), ("password", ""), ("terms", "ok")]
    assert form.buttons == [("decision", "approve"), ("decision", "deny")]


def test_the_browser_fills_the_login_and_presses_the_button_asked_for(tls: Tls) -> None:
    (form,) = parse_forms(PAGE)
    filled = HeadlessBrowser(tls, login="carol", press=("deny",))._fill(form)
    assert filled == {
        "csrf": 'a"b',
        "login": "carol",
        "password": "any-password",
        "terms": "ok",
        "decision": "deny",
    }
    assert HeadlessBrowser(tls)._fill(form)["decision"] == "approve"  # the first, unasked


def test_a_choice_not_asked_for_is_an_error_not_a_guess(tls: Tls) -> None:
    (form,) = parse_forms(PAGE)
    with pytest.raises(LoginFailed):
        HeadlessBrowser(tls, press=("allow",))._fill(form)
    unnamed = Form("/login", "post", [("prompt", "login")], [("", "")], {"prompt": "hidden"})
    assert HeadlessBrowser(tls, press=("approve",))._fill(unnamed) == {"prompt": "login"}


def test_the_callback_is_recognised_by_its_parts_not_a_prefix() -> None:
    callback = "http://127.0.0.1/callback"
    assert same_endpoint("http://127.0.0.1/callback?code=c&state=s", callback)
    assert not same_endpoint("http://127.0.0.1/callback.evil.example/?code=c", callback)
    assert not same_endpoint("http://127.0.0.1:8/callback?code=c", callback)
    assert not same_endpoint("https://127.0.0.1/callback?code=c", callback)
