"""The Skills extension's costs on 1,000 skills x 10 files, against the server's own
``resources/list`` over the same 10,000 files (issue 28).

    uv run python bench/skills_cpu.py [--skills 1000] [--files 10] [--reps 5] [--json out.json]

Rules:
1. A fresh temporary directory holds ``--skills`` skills of ``--files`` files each
   (``SKILL.md`` plus text files of 200-300 bytes), written once.
2. ``startup`` is ``Skills.from_directory`` (walk, read and hash every file, parse every
   frontmatter) plus ``install`` (one resource registration per file), wall and process
   CPU seconds, split into ``scan`` and ``register``.
3. ``rescan_unchanged`` is one ``refresh(force=True)`` with nothing changed: a ``stat``
   of every file and no read (``hashed`` must stay put; the figure reports it);
   ``rescan_one_changed`` the same after one file was rewritten (one read).
4. ``per page`` figures are ``time.process_time`` per page of a full listing through an
   in-memory client on 2026-07-28 (client and server in one process, both billed), page
   size 100: ``skills/list`` (100 entries of 10 manifest items per page) against
   ``resources/list`` (100 resources per page). The first page of each listing re-checks
   the directory (rule 3's cost) and is reported apart; later pages do not. Medians
   over ``--reps``.
Not a test: numbers only; nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio


def write_tree(root: Path, skills: int, files: int) -> None:
    for i in range(skills):
        skill = root / f"team-{i % 10}" / f"skill-{i}"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: skill-{i}\ndescription: Benchmark skill number {i}\n"
            f"metadata:\n  version: '1.{i}'\n---\n\n# Skill {i}\n\nSee the references.\n"
        )
        for j in range(files - 1):
            (skill / "references").mkdir(exist_ok=True)
            (skill / "references" / f"ref-{j}.md").write_text(f"# Ref {j}\n" + "x" * (200 + j * 10))


async def pages(client: Any, method: str, key: str) -> tuple[float, list[float]]:
    """(process seconds of the first page, of each later page) of one full listing."""
    cursor: str | None = None
    seconds: list[float] = []
    while True:
        started = time.process_time()
        result = await client.request(method, {"cursor": cursor} if cursor else {}, use_cache=False)
        seconds.append(time.process_time() - started)
        assert result[key]
        cursor = result.get("nextCursor")
        if not cursor:
            return seconds[0], seconds[1:]


def measure(skills: int, files: int, reps: int) -> dict[str, Any]:
    from mcpkit.client import Client
    from mcpkit.ext.skills import Skills
    from mcpkit.server import Server

    out: dict[str, Any] = {"skills": skills, "files_per_skill": files}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_tree(root, skills, files)
        wall, cpu = time.perf_counter(), time.process_time()
        served = Skills.from_directory(root)
        scan = (time.perf_counter() - wall, time.process_time() - cpu)
        server = Server("bench", page_size=100)
        wall, cpu = time.perf_counter(), time.process_time()
        served.install(server)
        register = (time.perf_counter() - wall, time.process_time() - cpu)
        out["startup_scan_s"] = {"wall": scan[0], "cpu": scan[1]}
        out["startup_register_s"] = {"wall": register[0], "cpu": register[1]}
        catalog = served.catalog
        assert catalog is not None

        async def rescans() -> None:
            before = catalog.hashed
            wall, cpu = time.perf_counter(), time.process_time()
            await served.refresh(force=True)
            out["rescan_unchanged_s"] = {
                "wall": time.perf_counter() - wall,
                "cpu": time.process_time() - cpu,
                "files_read": catalog.hashed - before,
            }
            target = root / "team-0" / "skill-0" / "references" / "ref-0.md"
            target.write_text(target.read_text() + "changed\n")
            before = catalog.hashed
            wall, cpu = time.perf_counter(), time.process_time()
            await served.refresh(force=True)
            out["rescan_one_changed_s"] = {
                "wall": time.perf_counter() - wall,
                "cpu": time.process_time() - cpu,
                "files_read": catalog.hashed - before,
            }
            first: dict[str, list[float]] = {"skills/list": [], "resources/list": []}
            later: dict[str, list[float]] = {"skills/list": [], "resources/list": []}
            async with Client(server, mode="modern") as client:
                for _ in range(reps):
                    for method, key in (("skills/list", "skills"), ("resources/list", "resources")):
                        head, rest = await pages(client, method, key)
                        first[method].append(head)
                        later[method] += rest
                        out[f"{method} pages"] = 1 + len(rest)
            for method in first:
                out[f"{method} first_page_cpu_s"] = statistics.median(first[method])
                out[f"{method} later_page_cpu_s"] = statistics.median(later[method])

        anyio.run(rescans)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skills", type=int, default=1000)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    result = measure(args.skills, args.files, args.reps)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text)


if __name__ == "__main__":
    main()
