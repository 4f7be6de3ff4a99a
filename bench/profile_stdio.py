"""Profile mcpkit's stdio path under the benchmark's load, and say where the time goes.

    uv run --group bench python bench/profile_stdio.py [--era handshake|modern] [-d 10]

``load.py`` (pinned to ``--client-cpu``) starts ``servers/mcpkit_echo.py`` (pinned to
``--server-cpu``) and pipelines ``tools/call echo`` with 32 outstanding and 100 B
payloads; after start-up and 2 s of warm-up, ``py-spy record --pid`` samples the server
for ``--duration`` seconds in ``--nonblocking`` mode (the server is never paused).

Writes the collapsed stacks (``stacks.txt``, flame-graph input) and ``profile.md``: the
top functions by self time (the frame on top of the stack) and by inclusive time
(anywhere on the stack), in % of the samples in which the server ran Python code, plus
the same self time rolled up by package or module.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def where(path: str) -> str:
    """A short name for a frame's file: the package under site-packages, the module under
    the standard library, the path below ``src/`` for mcpkit, else the file name."""
    if "/src/mcpkit/" in path:
        return "mcpkit/" + path.split("/src/mcpkit/", 1)[1]
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1]
    match = re.search(r"/lib/python3\.\d+/(.*)", path)
    return "stdlib/" + match.group(1) if match else path.rsplit("/", 1)[-1]


def group(name: str) -> str:
    """The package (or stdlib module) a frame's short file name belongs to."""
    parts = name.split("/")
    if parts[0] == "mcpkit":
        return "/".join(parts[:3]) if len(parts) > 3 else "/".join(parts[:2])
    if parts[0] == "stdlib":
        return "stdlib/" + parts[1].removesuffix(".py")
    return parts[0].removesuffix(".py")


def summarise(stacks: Path, top: int) -> tuple[int, list[str]]:
    own: Counter[str] = Counter()
    anywhere: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    total = 0
    for line in stacks.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames: list[str] = []
        for raw in stack.split(";"):
            match = FRAME.match(raw)
            frames.append(f"{match['func']} ({where(match['file'])})" if match else raw.strip())
        total += count
        own[frames[-1]] += count
        packages[group(frames[-1].rsplit(" (", 1)[-1].rstrip(")"))] += count
        for frame in set(frames):
            anywhere[frame] += count
    md: list[str] = []
    for title, table in (
        ("self time by package/module", packages),
        ("top functions by self time", own),
        ("top functions by inclusive time", anywhere),
    ):
        md += [f"\n### {title}\n", "| % of samples | samples | where |", "|---|---|---|"]
        for name, count in table.most_common(top):
            md.append(f"| {100.0 * count / max(total, 1):.1f} | {count} | `{name}` |")
    return total, md


def server_pid(parent: int, timeout_s: float) -> int:
    """The first child of process ``parent`` (the stdio server the generator spawned)."""
    limit = time.monotonic() + timeout_s
    while time.monotonic() < limit:
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            children = []
        if children:
            return int(children[0])
        time.sleep(0.05)
    raise SystemExit(f"no server process under the load generator {parent} in {timeout_s} s")


def record(spy: str, pid: int, duration_s: float, rate_hz: int, stacks: Path) -> None:
    """py-spy samples of process ``pid`` for ``duration_s`` seconds into ``stacks``."""
    spy_cmd = [
        spy, "record", "--pid", str(pid), "--duration", str(int(duration_s)),
        "--rate", str(rate_hz), "--nonblocking", "--full-filenames", "--format", "raw",
        "-o", str(stacks),
    ]  # fmt: skip
    subprocess.run(spy_cmd, timeout=duration_s + 60, check=True, capture_output=True)


def stop(proc: subprocess.Popen[bytes], timeout_s: float, *, terminate: bool = True) -> None:
    """Wait up to ``timeout_s`` seconds for ``proc`` (terminated first if asked), then
    kill it."""
    if terminate:
        proc.terminate()
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--era", choices=["handshake", "modern"], default="handshake")
    ap.add_argument("-d", "--duration", type=float, default=10.0)
    ap.add_argument("--rate", type=int, default=500, help="py-spy samples per second")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    out: Path = (
        args.out or HERE / "results" / f"profile-{args.era}-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    out.mkdir(parents=True, exist_ok=True)
    stacks = out / "stacks.txt"
    server = f"taskset -c {args.server_cpu} {sys.executable} {HERE / 'servers' / 'mcpkit_echo.py'}"
    warmup = 2.0
    load = [
        "taskset", "-c", str(args.client_cpu), sys.executable, str(HERE / "load.py"),
        "--stdio", server, "--era", args.era, "-c", "32", "--payload-bytes", "100",
        "-d", str(args.duration + 1), "-w", str(warmup), "--json", str(out / "load.json"),
    ]  # fmt: skip
    generator = subprocess.Popen(load)
    try:
        pid = server_pid(generator.pid, timeout_s=30.0)
        time.sleep(warmup)  # start-up and warm-up stay out of the samples
        record(spy, pid, args.duration, args.rate, stacks)
    finally:
        stop(generator, args.duration + 120, terminate=False)
    total, md = summarise(stacks, args.top)
    head = [
        f"# mcpkit stdio profile ({args.era} era, c=32, 100 B, {args.duration} s, py-spy "
        f"{args.rate} Hz)",
        "",
        f"{total} samples of the server running Python code (idle time is not sampled).",
        "Start-up and warm-up are not sampled. Load generator result: `load.json`"
        " (its req/s include py-spy's overhead).",
    ]
    (out / "profile.md").write_text("\n".join(head + md) + "\n")
    print("\n".join(head + md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
