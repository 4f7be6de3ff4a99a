"""The ``id-key`` check (issue 25 §1): ``id(...)`` in keys and names is rejected in every
distribution's sources; other uses and reasoned exceptions are not."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from check_kinds import run
from kinds import id_keys

BAD = {
    "f-string": 'key = f"s:{id(session)}"',
    "concatenation": 'key = "s:" + str(id(session))',
    "percent": 'key = "s:%x" % id(session)',
    "hex name": "name = hex(id(transport))",
    "format method": 'name = "{}@{}".format(kind, id(transport))',
    "subscript": "notes[id(session)] = note",
    "subscript read": "note = notes[id(session)]",
    "tuple key": "cache[(name, id(session))] = value",
    "dict key": "table = {id(session): note}",
    "dict comprehension": "table = {id(s): s for s in sessions}",
    "get": "note = notes.get(id(session))",
    "setdefault": "notes.setdefault(id(session), [])",
    "pop tuple": "notes.pop((id(a), id(b)), None)",
    "set member": "seen = {id(session)}",
    "set add": "seen.add(id(session))",
    "membership": "found = id(session) in seen",
    "builtins": "import builtins\nkey = f'{builtins.id(session)}'",
    # through a name (rule 3): the ordinary way to write the pool of issue 25 §1
    "name then subscript": "key = id(ctx.session)\nconn = pool[key]",
    "name then get": "def lease(ctx):\n    key = id(ctx.session)\n    return pool.get(key)",
    "annotated name then f-string": "sid: int = id(session)\nname = f's:{sid}'",
    "tuple name then subscript": "k = (id(ctx), name)\npool[k] = conn",
    "returned": "def client_key(ctx):\n    return id(ctx.session)",
}

GOOD = {
    "identity comparison": "same = id(a) == id(b)",
    "log argument": 'logger.debug("object %s", id(obj))',
    "a method named id": "key = f'{record.id()}'",
    "an attribute named id": "notes[session.id] = note",
    "caller key": "notes[caller_key(ctx)] = note",
    "name compared": "a_id = id(a)\nsame = a_id == id(b)",
    "name in another function": "def f():\n    key = id(a)\n    return key == 1\n"
    "def g(key):\n    return pool[key]",
    "__hash__": "class A:\n    def __hash__(self):\n        return id(self)",
}


def flagged(source: str) -> list[int]:
    return [f.line for f in id_keys.findings_in(textwrap.dedent(source), Path("m.py"))]


@pytest.mark.parametrize("source", BAD.values(), ids=list(BAD))
def test_id_in_a_key_or_name_is_flagged(source: str) -> None:
    assert flagged(source)


@pytest.mark.parametrize("source", GOOD.values(), ids=list(GOOD))
def test_other_uses_of_id_are_not_flagged(source: str) -> None:
    assert flagged(source) == []


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_every_distributions_sources_are_checked_and_allow_comments_need_a_reason(
    tmp_path: Path,
) -> None:
    root = tmp_path.resolve()
    bad = 'key = f"s:{id(session)}"\n'
    write(root, "packages/mcpkit-core/src/mcpkit/a.py", bad)
    write(root, "experimental/mcpkit-exp-x/src/mcpkit/b.py", bad)
    write(root, "packages/mcpkit-core/tests/test_a.py", bad)  # tests are not product code
    write(
        root,
        "packages/mcpkit-ext-y/src/mcpkit/c.py",
        "# kind-ok: id-key the object lives as long as the table\nkey = f'{id(x)}'\n",
    )
    write(root, "packages/mcpkit-ext-y/src/mcpkit/d.py", "key = f'{id(x)}'  # kind-ok: id-key\n")
    found = [line for line in run(root) if "[id-key]" in line]
    assert any(line.startswith("packages/mcpkit-core/src/mcpkit/a.py:1:") for line in found)
    assert any(line.startswith("experimental/mcpkit-exp-x/src/mcpkit/b.py:1:") for line in found)
    assert not any("tests/test_a.py" in line for line in found)
    assert not any("c.py" in line for line in found)
    assert any("d.py:1:" in line and "reason" in line for line in found)
    assert len(found) == 3


def test_the_repository_is_clean() -> None:
    root = Path(__file__).resolve().parents[2]
    assert [line for line in run(root) if "[id-key]" in line] == []
