"""``mcpkit protogen FILE.proto... -o DIR``: run grpcio-tools' bundled protoc with the
``_pb2`` generator, its ``.pyi`` stubs and ``protoc-gen-mcpkit``.

Rules:
1. The include path is: each ``-I`` given (default: the directory of each file), this
   package's ``proto/`` (``mcp/v1/annotations.proto``), then grpcio-tools' well-known
   types; nothing else has to be set up.
2. ``--grpc`` also writes the ``_pb2_grpc.py`` servicer and stub modules.
3. After protoc succeeds every ``_pb2`` file written is rewritten to import the shipped
   annotations module (:mod:`.imports`).
4. Without grpcio-tools (the ``[codegen]`` extra) the command stops with status 2 saying
   how to install it; a protoc failure (an annotation problem included: ``file:line:
   what; fix``) is status 1 with protoc's message on stderr.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from mcpkit.cli.plugins import CliError

__all__ = ["PROTO_DIR", "add_arguments", "generate", "protoc_argv", "run"]

PROTO_DIR = Path(__file__).resolve().parent / "proto"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE.proto", help=".proto files")
    parser.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory")
    parser.add_argument(
        "-I",
        "--include",
        action="append",
        default=[],
        metavar="PATH",
        help="protoc include path (default: each file's directory)",
    )
    parser.add_argument("--grpc", action="store_true", help="also write _pb2_grpc.py")


def _plugin_path(tmp: Path) -> str:
    found = Path(sys.executable).parent / "protoc-gen-mcpkit"
    if found.exists():
        return str(found)
    which = shutil.which("protoc-gen-mcpkit")
    if which:
        return which
    script = tmp / "protoc-gen-mcpkit"
    script.write_text(
        f"#!{sys.executable}\nfrom mcpkit.experimental.protogen.plugin import main\nmain()\n"
    )
    script.chmod(0o755)
    return str(script)


def protoc_argv(
    files: list[str], out: Path, includes: list[str], grpc: bool, plugin: str
) -> list[str]:
    """Rules 1 and 2: the argv for ``grpc_tools.protoc.main``."""
    import grpc_tools

    paths = [str(Path(p).resolve()) for p in includes] or sorted(
        {str(Path(f).resolve().parent) for f in files}
    )
    wkt = Path(grpc_tools.__file__).resolve().parent / "_proto"
    argv = ["protoc", *(f"-I{p}" for p in paths), f"-I{PROTO_DIR}", f"-I{wkt}"]
    argv += [f"--python_out={out}", f"--pyi_out={out}", f"--mcpkit_out={out}"]
    argv.append(f"--plugin=protoc-gen-mcpkit={plugin}")
    if grpc:
        argv.append(f"--grpc_python_out={out}")
    return [*argv, *(str(Path(f).resolve()) for f in files)]


def generate(
    files: Sequence[str], out: Path, includes: Sequence[str] = (), grpc: bool = False
) -> int:
    """``mcpkit protogen`` as a function (rules 1-4): protoc's exit status, 0 when every
    file was written. Raises :class:`~mcpkit.cli.plugins.CliError` without grpcio-tools."""
    try:
        from grpc_tools import protoc
    except ImportError:
        raise CliError(
            'mcpkit protogen needs grpcio-tools: pip install "mcpkit-exp-protogen[codegen]"'
        ) from None
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        argv = protoc_argv(list(files), out, list(includes), grpc, _plugin_path(Path(tmp)))
        main: Callable[[list[str]], int] = getattr(protoc, "main")  # noqa: B009 - grpc_tools is untyped
        status = main(argv)
    if status != 0:
        return 1
    from mcpkit.experimental.protogen.imports import rewrite_tree

    rewrite_tree(out)
    return 0


def run(args: argparse.Namespace) -> int:
    return generate(list(args.files), Path(args.out), list(args.include), args.grpc)
