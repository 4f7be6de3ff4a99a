"""The regression guard (issue 31, target 0): this tree's server CPU per request against a
given commit's, row by row, in interleaved pairs, so a change on the request path shows
its cost apart from the host's drift.

    uv run --group bench python bench/compare.py BASE [--reps 15] [--duration 5] \
        [--transport http,stdio] [--era handshake,modern] [-c 32] [--handler async]

``BASE`` is any commit-ish (``7fb3f91``, ``main``, ``HEAD~1``). Prints one JSON row per
(transport, era): ``median`` is the median of the per-pair head/base ratios of server CPU
µs per ``tools/call``, ``iqr`` their interquartile range, ``min``/``max`` their range.

Rules:
1. The base is checked out with ``git worktree add --detach`` into a fresh temporary
   directory outside the repository, synced there (``uv sync --all-packages --group
   bench``, bounded by ``SYNC_TIMEOUT_S``) and removed afterwards (its ``.venv``, then
   ``git worktree remove --force``), also when the measurement fails or is interrupted;
   a removal that fails is reported on stderr.
2. The measurement is ``paired_commits.measure``: the same echo server script from each
   tree, pinned, pairs interleaved (head first, then base first), at least 15 pairs by
   default; ``--handler`` serves the echo tool in that form on both sides.
3. The exit status is 1 when a row's median exceeds ``--limit`` (default 1.03, the
   issue's bound), 2 when no pair succeeded, else 0; so the guard can gate a script.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import paired_commits  # noqa: E402

SYNC_TIMEOUT_S = 900
"""Rule 1: the base tree's ``uv sync``."""
REMOVE_TIMEOUT_S = 600
"""Rule 1: ``git worktree remove`` of the base tree (a loaded machine is slow at it)."""
MIN_PAIRS = 15
"""Rule 2: fewer pairs cannot tell a 3 % effect from a loaded host's noise."""


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The options (``paired_commits``'s, plus ``BASE``, ``--handler``, ``--limit`` and
    ``--allow-few``); ``SystemExit`` (status 2) on a refused combination."""
    ap = paired_commits.parser(__doc__)
    ap.add_argument("base", help="the commit to compare with (anything git rev-parse takes)")
    ap.add_argument("--handler", choices=["async", "sync", "inline"], default="async")
    ap.add_argument("--limit", type=float, default=1.03, help="rule 3: the largest median")
    ap.add_argument("--allow-few", action="store_true", help=f"allow fewer than {MIN_PAIRS} --reps")
    ap.set_defaults(duration=5.0, warmup=1.0)
    args = ap.parse_args(argv)
    if args.reps < MIN_PAIRS and not args.allow_few:
        ap.error(f"--reps {args.reps} is under {MIN_PAIRS}; pass --allow-few to mean it")
    if args.limit <= 0:
        ap.error("--limit must be positive")
    if args.handler != "async":
        handler = f"--handler {args.handler}"
        args.head_args = f"{args.head_args} {handler}".strip()
        args.base_args = f"{args.base_args} {handler}".strip()
    try:
        paired_commits.check(args)
    except ValueError as exc:
        ap.error(str(exc))
    return args


def verdict(rows: list[dict[str, object]], limit: float) -> int:
    """Rule 3: 2 with no row, 1 when a row's median is over ``limit``, else 0."""
    if not rows:
        return 2
    medians = [row["median"] for row in rows]
    return 1 if any(isinstance(m, float) and m > limit for m in medians) else 0


def _git(repo: Path, *argv: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *argv], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout.strip()


@contextmanager
def base_tree(repo: Path, base: str) -> Generator[Path]:
    """Rule 1: a synced checkout of ``base`` in a temporary directory, removed on exit."""
    commit = _git(repo, "rev-parse", "--verify", f"{base}^{{commit}}")
    with tempfile.TemporaryDirectory(prefix="mcpkit-compare-") as tmp:
        tree = Path(tmp) / f"base-{commit[:12]}"
        _git(repo, "worktree", "add", "--detach", str(tree), commit)
        try:
            print(f"base {commit[:12]} in {tree}; syncing", file=sys.stderr, flush=True)
            subprocess.run(
                ["uv", "sync", "--all-packages", "--group", "bench", "--quiet"],
                cwd=tree,
                check=True,
                timeout=SYNC_TIMEOUT_S,
            )
            yield tree
        finally:
            # the environment first (most of the files, and git need not walk them)
            shutil.rmtree(tree / ".venv", ignore_errors=True)
            done = subprocess.run(
                ["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)],
                capture_output=True,
                text=True,
                timeout=REMOVE_TIMEOUT_S,
            )
            if done.returncode != 0:
                print(
                    f"could not remove the worktree {tree}: {done.stderr.strip()}; "
                    "`git worktree prune` forgets it once the directory is gone",
                    file=sys.stderr,
                )


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    repo = args.head.resolve()
    with base_tree(repo, args.base) as tree:
        rows = paired_commits.measure(args, tree)
    return verdict(rows, args.limit)


if __name__ == "__main__":
    sys.exit(main())
