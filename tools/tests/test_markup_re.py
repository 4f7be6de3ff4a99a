"""The markup-re check: regular expressions on markup or URLs in shipped code are found
(Python, JavaScript files, scripts inside HTML files); parsers and other patterns are not."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from check_kinds import run
from kinds import markup_re


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


SRC = "packages/pkg/src/pkg"


def lines_found(root: Path) -> list[tuple[str, int]]:
    return sorted((str(f.path), f.line) for f in markup_re.check(root))


def test_python_patterns_on_markup_or_urls_are_found(tmp_path: Path) -> None:
    write(
        tmp_path,
        f"{SRC}/bad.py",
        "import re\n"
        "from re import search as find\n"
        'DOCTYPE = re.compile(r"^\\s*<!doctype[^>]*>", re.I)\n'
        'def body(doc):\n    return re.search(r"<body[^>]*>", doc)\n'
        'CLOSE = re.compile(r"</(script)")\n'
        'ORIGIN = re.compile(rf"(?P<scheme>https?)://{HOST}")\n'
        'LINK = find("(?:https?|wss?):" + "//x", "")\n'
        'TAG = re.sub("<[a-z]+>", "", "")\n'
        'SPACED = r"<\\s*/\\s*script"\n'
        "def close(text):\n    return re.split(SPACED, text)\n",
    )
    found = lines_found(tmp_path)
    assert [line for _, line in found] == [3, 5, 6, 7, 8, 9, 12]


def test_a_module_alias_and_names_in_classes_and_functions_are_followed(
    tmp_path: Path,
) -> None:
    # Evasions written the ordinary way: ``import re as _re``; a pattern kept in a class
    # constant or a local name before it is compiled.
    write(
        tmp_path,
        f"{SRC}/aliased.py",
        "import re as _re\n"
        'HEAD = _re.compile(r"<head[^>]*>", _re.I)\n'
        "class View:\n"
        '    DOCTYPE = r"^\\s*<!doctype"\n'
        "    def strip(self, html):\n"
        "        return _re.sub(View.DOCTYPE, '', html)\n"
        "def scheme(url):\n"
        '    pattern = r"^(https?)://"\n'
        "    return _re.match(pattern, url)\n",
    )
    assert [line for _, line in lines_found(tmp_path)] == [2, 6, 9]


def test_python_parsers_and_other_patterns_are_not_found(tmp_path: Path) -> None:
    write(
        tmp_path,
        f"{SRC}/good.py",
        "import re\nfrom html.parser import HTMLParser\nfrom urllib.parse import urlsplit\n"
        'TOKEN = re.compile(r"^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$")\n'
        'NAMED = re.compile(r"(?P<major>[0-9]+)\\.(?P<minor>[0-9]+)")\n'
        'BEHIND = re.compile(r"(?<=a)b(?<!c)")\n'
        'LESS = re.compile(r"a < b")\n'
        'parts = urlsplit("https://example.com")\n',
    )
    # outside a distribution's src: not shipped, not checked
    write(tmp_path, "tests/test_x.py", 'import re\nre.compile(r"<body>")\n')
    assert lines_found(tmp_path) == []


def test_javascript_and_scripts_in_html_are_read(tmp_path: Path) -> None:
    write(
        tmp_path,
        f"{SRC}/static/app.js",
        "var ok = text.split(/\\s+/);\n"
        "var doctype = /^\\s*<!doctype[^>]*>/i.exec(html);\n"
        'var url = new RegExp("^https?:\\\\/\\\\/");\n'
        "var slash = base.replace(/\\/$/, '');\n"
        "// a comment about /<p>/ is not code\n",
    )
    write(
        tmp_path,
        f"{SRC}/static/page.html",
        "<!DOCTYPE html>\n<html><body>\n<p>text with </b> and a/b/c</p>\n<script>\n"
        "var a = 1;\n"
        "var tag = html.match(/<meta[^>]*>/g);\n"
        "</script>\n</body></html>\n",
    )
    found = lines_found(tmp_path)
    js = Path(f"{SRC}/static/app.js")
    page = Path(f"{SRC}/static/page.html")
    assert found == sorted([(str(js), 2), (str(js), 3), (str(page), 6)])


def test_a_reasoned_allow_comment_allows_one_finding(tmp_path: Path) -> None:
    write(
        tmp_path,
        f"{SRC}/allowed.py",
        "import re\n"
        "# kind-ok: markup-re escapes script text for the tokenizer\n"
        'A = re.compile(r"</(script)")\n'
        'B = re.compile(r"<body>")  # kind-ok: markup-re\n',
    )
    write(
        tmp_path,
        f"{SRC}/allowed.js",
        "// kind-ok: markup-re a fixed fragment we generate ourselves\nvar t = /<p>/;\n",
    )
    problems = [p for p in run(tmp_path) if "[markup-re]" in p]
    assert len(problems) == 1
    assert "allowed.py:4:" in problems[0]
    assert "needs a reason" in problems[0]


def test_the_repository_is_clean() -> None:
    root = Path(__file__).resolve().parents[2]
    assert [p for p in run(root) if "[markup-re]" in p] == []
