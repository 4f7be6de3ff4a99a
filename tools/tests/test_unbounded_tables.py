"""The unbounded-table check (issue 25 §3): a string-keyed table grown at run time with
no stated bound is flagged; bounded types, non-string keys, tables never grown and
reasoned allow comments are not."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from check_kinds import run
from kinds import unbounded_tables


def tree(tmp_path: Path, source: str, where: str = "packages/demo/src/demo/mod.py") -> Path:
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return tmp_path


def flagged(root: Path) -> list[tuple[str, int]]:
    return [(f.path.name, f.line) for f in unbounded_tables.check(root)]


BAD = """\
from collections import OrderedDict
from dataclasses import dataclass, field

Key = tuple[str, int]
_CACHE: dict[str, int] = {}


class Recorder:
    def __init__(self) -> None:
        self.shapes: dict[str, str] = {}
        self.seen = OrderedDict()
        self.by_key: dict[Key, int] = {}

    def record(self, name: str) -> None:
        self.shapes[name] = name
        seen = self.seen
        seen[name] = None
        self.by_key[(name, 1)] = 1
        _CACHE[name] = 1


@dataclass
class Session:
    subscriptions: set[str] = field(default_factory=set[str])


def subscribe(session: Session, uri: str) -> None:
    session.subscriptions.add(uri)
"""


def test_string_keyed_tables_grown_at_run_time_are_flagged(tmp_path: Path) -> None:
    root = tree(tmp_path, BAD)
    assert [line for _, line in flagged(root)] == [5, 10, 11, 12, 24]


GOOD = """\
import asyncio
from typing import Any

from mcpkit.core.bounded import BoundedMap

TABLE = {"a": 1, "b": 2}


class Fine:
    def __init__(self) -> None:
        self.bounded: BoundedMap[str, str] = BoundedMap(max_entries=8, max_bytes=1024)
        self.by_id: dict[int, str] = {}
        self.tasks: dict[asyncio.Task[Any], int] = {}
        self.fixed: dict[str, int] = {"x": 1}
        self.allowed: dict[str, int] = {}  # kind-ok: unbounded-table keys are registered names
        # kind-ok: unbounded-table at most one entry per configured origin
        self.above: dict[str, int] = {}

    def grow(self, name: str, n: int) -> None:
        self.bounded[name] = name
        self.by_id[n] = name
        self.allowed[name] = n
        self.above[name] = n
"""


def test_bounded_non_string_never_grown_and_allowed_tables_pass(tmp_path: Path) -> None:
    root = tree(tmp_path, GOOD)
    assert [f for f in run(root) if "[unbounded-table]" in f] == []
    # the two allowed ones are findings the comments allow
    assert sorted(line for _, line in flagged(root)) == [15, 17]


def test_only_distribution_sources_are_read(tmp_path: Path) -> None:
    tree(tmp_path, BAD, "tests/test_mod.py")
    tree(tmp_path, BAD, "experimental/demo/tests/mod.py")
    assert flagged(tmp_path) == []
    tree(tmp_path, BAD, "experimental/demo/src/demo/mod.py")
    assert len(flagged(tmp_path)) == 5


GROWN_BY_ENTRY = """\
from collections import defaultdict


class Log:
    def __init__(self) -> None:
        self.by_name: defaultdict[str, list[str]] = defaultdict(list)
        self.seen = {"initial"}
        self.counts: dict[str, int] = dict.fromkeys(("a", "b"), 0)
        self.by_id: defaultdict[int, list[str]] = defaultdict(list)

    def record(self, name: str, n: int) -> None:
        self.by_name[name].append(n)  # a defaultdict inserts the key on the read
        self.seen.add(name)
        self.counts[name] = n
        self.by_id[n].append(name)
"""


def test_tables_grown_through_an_entry_set_displays_and_fromkeys_are_flagged(
    tmp_path: Path,
) -> None:
    # Evasions written the ordinary way: ``x[k].append(v)`` on a defaultdict (the
    # idiom grows x without ``x[k] = v``), a set display, ``dict.fromkeys``.
    root = tree(tmp_path, GROWN_BY_ENTRY)
    assert [line for _, line in flagged(root)] == [6, 7, 8]
