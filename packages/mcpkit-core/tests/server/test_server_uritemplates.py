"""RFC 6570 matching (``mcpkit.server.uritemplates``), levels 1 to 4.

The main check is a round trip: expand a template with the ``uri-template`` library,
then match the URI back and get the same variables.
"""

from __future__ import annotations

from typing import Any

import pytest
import uri_template

from mcpkit.server.uritemplates import TemplateMatcher

ROUND_TRIPS: list[tuple[str, dict[str, Any]]] = [
    # level 1
    ("file:///{path}", {"path": "a b"}),
    ("x://h/{x}", {"x": "café 50%/?#"}),
    ("x://h/{owner}/{repo}/issues/{id}", {"owner": "a", "repo": "b", "id": "3"}),
    # level 2
    ("test://{+path}", {"path": "a/b/c"}),
    ("http://x{#frag}", {"frag": "sec/1"}),
    ("x://h/{+path}{#frag}", {"path": "a/b", "frag": "top"}),
    # level 3
    ("x://h/{x,y}", {"x": "1", "y": "2"}),
    ("x://h/{+x,y}", {"x": "a/b", "y": "c"}),
    ("x://h/{#x,y}", {"x": "a", "y": "c"}),
    ("x://h/file{.ext}", {"ext": "txt"}),
    ("x://h/file{.ext}", {"ext": "tar.gz"}),
    ("x://h{/a,b}", {"a": "1", "b": "2"}),
    ("x://h/m{;x,y}", {"x": "1", "y": "2"}),
    ("x://h/m{;x,y}", {"x": "1", "y": ""}),
    ("x://h/s{?q,lang}", {"q": "cat", "lang": "en"}),
    ("x://h/s{?q,lang}", {"q": "cat"}),
    ("x://h/s{?q,lang}", {}),
    ("x://h/s?fixed=1{&more}", {"more": "yes"}),
    ("x://h/{+path}{?q}", {"path": "a/b", "q": "1"}),
    # level 4
    ("x://h/{var:3}", {"var": "abc"}),
    ("x://h{/seg*}", {"seg": ["a.txt", "b", "c"]}),
    ("x://h/{list*}", {"list": ["a=b", "c"]}),
    ("x://h/{keys*}", {"keys": {"a": "1", "b": "2"}}),
    ("x://h/m{;list*}", {"list": ["r", "g"]}),
    ("x://h/m{;keys*}", {"keys": {"a": "1", "b": "2"}}),
    ("x://h{?keys*}", {"keys": {"a": "1", "b": "2"}}),
    ("x://h{?list*}", {"list": ["1", "2"]}),
    ("x://h/m{;x}", {"x": "a,b"}),
]


@pytest.mark.parametrize(("template", "variables"), ROUND_TRIPS)
def test_expanded_uri_matches_back_to_the_same_variables(
    template: str, variables: dict[str, Any]
) -> None:
    uri = str(uri_template.URITemplate(template).expand(**variables))
    assert TemplateMatcher(template).match(uri) == variables


def test_query_pairs_match_in_any_order() -> None:
    matcher = TemplateMatcher("x://h/s{?q,lang,page}")
    assert matcher.match("x://h/s?page=2&q=cat") == {"page": "2", "q": "cat"}


def test_non_explode_list_stays_one_comma_joined_string() -> None:
    assert TemplateMatcher("x://h/{list}").match("x://h/red,green") == {"list": "red,green"}


def test_prefix_modifier_caps_the_length_in_characters() -> None:
    matcher = TemplateMatcher("x://h/{var:3}")
    assert matcher.match("x://h/abcd") is None
    assert matcher.match("x://h/%C3%A9t%C3%A9") == {"var": "été"}


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("x://h/{id}", "x://h/a/b"),  # a simple value never spans "/"
        ("x://h/{id}", "x://h/"),  # nor is it empty
        ("x://h/{id}", "x://h/a?b"),
        ("x://h/{id}/data", "x://h/1/other"),
        ("x://h/{id}", "y://h/1"),
        ("x://h{/seg*}", "x://h"),
    ],
)
def test_uris_the_template_cannot_produce_do_not_match(template: str, uri: str) -> None:
    assert TemplateMatcher(template).match(uri) is None


def test_invalid_template_is_refused() -> None:
    with pytest.raises(ValueError, match="RFC 6570"):
        TemplateMatcher("x://h/{unclosed")
