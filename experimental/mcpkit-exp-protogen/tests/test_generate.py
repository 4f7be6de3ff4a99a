"""Generation: the golden text, ruff and pyright on it, the Go generator's proto, the
``mcp.v1`` import with the official ``mcp`` installed, and every refusal with file:line."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BOOKS_PROTO, GO_FIXTURES, HERE, LIBRARY_PROTO, ROOT, protogen

from mcpkit.experimental.protogen.imports import rewrite_pb2

GOLDEN = HERE / "golden"
WKT = Path(__import__("grpc_tools").__file__).resolve().parent / "_proto"


@pytest.mark.parametrize(
    ("generated_name", "golden_name"),
    [
        ("library/v1/library_mcp.py", "library_mcp.py.txt"),
        ("bookservice/v1/service_mcp.py", "bookservice_mcp.py.txt"),
        ("edge/v1/edge_mcp.py", "edge_mcp.py.txt"),
    ],
)
def test_the_generated_text_is_the_golden_text(
    generated: Path, generated_name: str, golden_name: str
) -> None:
    text = (generated / generated_name).read_text("utf-8")
    golden = GOLDEN / golden_name
    if os.environ.get("MCPKIT_UPDATE_GOLDEN"):
        golden.write_text(text, "utf-8")
    assert text == golden.read_text("utf-8"), f"regenerate with MCPKIT_UPDATE_GOLDEN=1: {golden}"


def test_generated_modules_are_ruff_and_pyright_clean(generated: Path, tmp_path: Path) -> None:
    """A user's project: line length 100, the repo's lint rules, pyright strict."""
    for name in ("library", "bookservice", "edge"):
        shutil.copytree(generated / name, tmp_path / name)
    (tmp_path / "ruff.toml").write_text(
        'line-length = 100\n[lint]\nselect = ["E", "F", "W", "I", "B", "UP", "SIM", "RUF", '
        '"PT", "C4", "PIE", "RET", "TID"]\n'
    )
    files = ["library/v1/library_mcp.py", "bookservice/v1/service_mcp.py", "edge/v1/edge_mcp.py"]
    bin_dir = Path(sys.executable).parent
    for argv in (
        [str(bin_dir / "ruff"), "check", *files],
        [str(bin_dir / "ruff"), "format", "--check", *files],
    ):
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    (tmp_path / "pyrightconfig.json").write_text(
        '{"typeCheckingMode": "strict", "pythonVersion": "3.11", "reportMissingTypeStubs": false,'
        f' "include": {files!r}}}'.replace("'", '"')
    )
    done = subprocess.run(
        [str(bin_dir / "pyright"), "--pythonpath", sys.executable],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 errors" in done.stdout


def test_the_go_generators_proto_generates_and_agrees_with_its_tables(generated: Path) -> None:
    from bookservice.v1 import service_mcp, service_pb2

    from mcpkit.experimental.protogen.schema import message_schema

    spec = service_mcp.BOOK_SERVICE_SPEC
    assert [t.name for t in spec.tools] == ["books_search", "books_review"]
    assert [r.uri for r in spec.resources] == ["book://{book_id}", "author://{author_id}/books"]
    assert [p.name for p in spec.prompts] == ["books_summarize", "books_recommend_books"]
    assert message_schema(service_pb2.SummarizeBookRequest.DESCRIPTOR) == {
        "type": "object",
        "properties": {"book_id": {"type": "string"}, "style": {"type": "string"}},
        "required": ["book_id"],
    }
    book = message_schema(service_pb2.Book.DESCRIPTOR)["properties"]
    assert book["rating"] == {"type": "number"}
    assert book["year"] == {"type": "integer"}


def test_mcp_v1_never_resolves_inside_the_official_mcp_package(generated: Path) -> None:
    """The interop group's ``mcp`` is installed here; the user's ``_pb2`` imports ours."""
    assert importlib.metadata.version("mcp")  # the official SDK is present
    import mcp

    text = (generated / "library" / "v1" / "library_pb2.py").read_text("utf-8")
    assert "from mcp.v1" not in text
    assert "from mcpkit.experimental.protogen import annotations_pb2 as" in text
    from library.v1 import library_pb2  # imports cleanly beside the official package

    assert library_pb2.DESCRIPTOR.dependencies[-1].name == "mcp/v1/annotations.proto"
    assert not hasattr(mcp, "v1")
    assert "mcp.v1" not in sys.modules


def test_rewrite_touches_only_the_annotations_import() -> None:
    text = (
        "from google.protobuf import descriptor_pb2 as d\n"
        "from mcp.v1 import annotations_pb2 as mcp_dot_v1_dot_annotations__pb2\n"
        "# from mcp.v1 import annotations_pb2 as x  (a comment stays)\n"
        "from mcp.v10 import annotations_pb2 as other\n"
    )
    assert rewrite_pb2(text).splitlines() == [
        "from google.protobuf import descriptor_pb2 as d",
        "from mcpkit.experimental.protogen import annotations_pb2 as "
        "mcp_dot_v1_dot_annotations__pb2",
        "# from mcp.v1 import annotations_pb2 as x  (a comment stays)",
        "from mcp.v10 import annotations_pb2 as other",
    ]


def test_the_shipped_annotations_module_is_protocs_output(tmp_path: Path) -> None:
    """The checked-in ``annotations_pb2.py`` is what the bundled protoc makes of the
    shipped ``annotations.proto`` (regenerate it when either changes)."""
    from grpc_tools import protoc

    from mcpkit.experimental.protogen import annotations_pb2
    from mcpkit.experimental.protogen.command import PROTO_DIR

    proto = PROTO_DIR / "mcp" / "v1" / "annotations.proto"
    argv = ["protoc", f"-I{PROTO_DIR}", f"-I{WKT}", f"--python_out={tmp_path}", str(proto)]
    assert protoc.main(argv) == 0
    made = (tmp_path / "mcp" / "v1" / "annotations_pb2.py").read_text("utf-8")
    assert Path(annotations_pb2.__file__).read_text("utf-8") == made
    ext = annotations_pb2.DESCRIPTOR.extensions_by_name
    numbers = {name: ext[name].number for name in ext}
    assert numbers == {
        "mcp_tool": 51001,
        "mcp_resource": 51002,
        "mcp_prompt": 51003,
        "mcp_elicit": 51004,
        "mcp_sampling": 51005,
        "mcp_service": 51010,
    }
    assert ext["mcp_service"].containing_type.full_name == "google.protobuf.ServiceOptions"
    assert ext["mcp_tool"].containing_type.full_name == "google.protobuf.MethodOptions"


BAD_HEADER = 'syntax = "proto3";\npackage bad.v1;\nimport "mcp/v1/annotations.proto";\n'
BAD_MESSAGES = (
    "message Req { string id = 1; }\nmessage Resp { int32 total = 1; }\n"
    "message Form { string note = 1; Resp nested = 2; }\n"
)
# (the method's options, the line protoc must name, words of the error)
BAD = [
    ('option (mcp.v1.mcp_tool) = {name: "Bad-Name"};', 6, ["tool name 'Bad-Name'", "[a-z]"]),
    (f'option (mcp.v1.mcp_tool) = {{name: "{"a" * 65}"}};', 6, ["more than 64"]),
    ('option (mcp.v1.mcp_tool) = {timeout: "30 seconds"};', 6, ["timeout", "Go duration"]),
    ('option (mcp.v1.mcp_tool) = {timeout: "5x"};', 6, ["unknown unit 'x'"]),
    ('option (mcp.v1.mcp_tool) = {result_summary: "{count}"};', 6, ["{count}", "total"]),
    (
        'option (mcp.v1.mcp_resource) = {uri_template: "x://{nope}"};',
        6,
        ["variable {nope}", "use one of: id"],
    ),
    ('option (mcp.v1.mcp_resource) = {name: "x"};', 6, ["no uri_template"]),
    (
        'option (mcp.v1.mcp_tool) = {}; option (mcp.v1.mcp_elicit) = {schema_message: "Nope"};',
        6,
        ["schema_message 'Nope'", "Req, Resp, Form"],
    ),
    (
        'option (mcp.v1.mcp_tool) = {}; option (mcp.v1.mcp_elicit) = {schema_message: "Form"};',
        6,
        ["'nested'", "scalar"],
    ),
    ('option (mcp.v1.mcp_elicit) = {schema_message: "Form"};', 6, ["no mcp_tool"]),
    ('option (mcp.v1.mcp_prompt) = {completable_fields: "x"};', 6, ["'x'", "request fields"]),
]
WKT_CASES = [
    (
        "rpc M(google.protobuf.Timestamp) returns (Resp) { option (mcp.v1.mcp_tool) = {}; }",
        "takes google.protobuf.Timestamp",
    ),
    (
        "rpc M(Req) returns (google.protobuf.Duration) {\n"
        "    option (mcp.v1.mcp_tool) = {structured_output: true}; }",
        "returns google.protobuf.Duration",
    ),
]


@pytest.mark.parametrize(("options", "line", "words"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_an_annotation_that_cannot_work_fails_protoc_with_file_line_and_fix(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], options: str, line: int, words: list[str]
) -> None:
    proto = tmp_path / "bad.proto"
    proto.write_text(
        BAD_HEADER
        + "service S {\n  rpc M(Req) returns (Resp) {\n    "
        + options
        + "\n  }\n}\n"
        + BAD_MESSAGES
    )
    if options == BAD[0][0]:  # once end to end: protoc fails and prints the plugin's error
        assert protogen(tmp_path / "out", proto, tmp_path) == 1
        err = capfd.readouterr().err
        assert not list((tmp_path / "out").rglob("*_mcp.py"))
    else:  # the rest through the plugin's own function (no process per case)
        err = plugin_error(proto, tmp_path)
    assert f"bad.proto:{line}: " in err, err
    for word in words:
        assert word in err, err


def plugin_error(proto: Path, tmp_path: Path) -> str:
    """protoc (in process) parses ``proto``; :func:`plugin.generate` answers the request."""
    from google.protobuf import descriptor_pb2
    from google.protobuf.compiler import plugin_pb2
    from grpc_tools import protoc

    from mcpkit.experimental.protogen.command import PROTO_DIR
    from mcpkit.experimental.protogen.plugin import generate

    out = tmp_path / "set.pb"
    argv = [
        "protoc",
        f"-I{tmp_path}",
        f"-I{PROTO_DIR}",
        f"-I{WKT}",
        "--include_imports",
        "--include_source_info",
        f"--descriptor_set_out={out}",
        str(proto),
    ]
    assert protoc.main(argv) == 0
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    request = plugin_pb2.CodeGeneratorRequest(file_to_generate=[proto.name], proto_file=files)
    response = generate(request)
    assert not response.file
    return response.error


@pytest.mark.parametrize(("rpc", "words"), WKT_CASES)
def test_a_well_known_type_where_an_object_is_needed_is_refused(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], rpc: str, words: str
) -> None:
    proto = tmp_path / "bad.proto"
    header = BAD_HEADER + 'import "google/protobuf/timestamp.proto";\n'
    header += 'import "google/protobuf/duration.proto";\n'
    proto.write_text(header + "service S {\n  " + rpc + "\n}\n" + BAD_MESSAGES)
    assert protogen(tmp_path / "out", proto, tmp_path) == 1
    err = capfd.readouterr().err
    assert "bad.proto:" in err
    assert words in err
    assert "wrap it in" in err


@pytest.mark.parametrize("kind", ["stream Req", "stream Req) returns (stream Resp"])
def test_client_and_bidirectional_streaming_are_refused(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], kind: str
) -> None:
    signature = f"({kind})" if kind.endswith("Resp") else f"({kind}) returns (Resp)"
    signature = signature.replace(") returns (stream Resp)", ") returns (stream Resp)")
    rpc = f"rpc M{signature} {{ option (mcp.v1.mcp_tool) = {{}}; }}"
    if kind.endswith("Resp"):
        rpc = "rpc M(stream Req) returns (stream Resp) { option (mcp.v1.mcp_tool) = {}; }"
    proto = tmp_path / "bad.proto"
    proto.write_text(BAD_HEADER + "service S {\n  " + rpc + "\n}\n" + BAD_MESSAGES)
    assert protogen(tmp_path / "out", proto, tmp_path) == 1
    err = capfd.readouterr().err
    expected = "bidirectional" if kind.endswith("Resp") else "client-streaming"
    assert f"bad.proto:5: M is a {expected} RPC" in err, err


def test_the_plugin_runs_under_plain_protoc_as_a_console_script(tmp_path: Path) -> None:
    """``protoc --mcpkit_out`` with the installed ``protoc-gen-mcpkit``."""
    from grpc_tools import protoc

    from mcpkit.experimental.protogen.command import PROTO_DIR

    plugin = Path(sys.executable).parent / "protoc-gen-mcpkit"
    argv = [
        "protoc",
        f"-I{GO_FIXTURES}",
        f"-I{PROTO_DIR}",
        f"-I{WKT}",
        f"--mcpkit_out={tmp_path}",
        f"--plugin=protoc-gen-mcpkit={plugin}",
        str(BOOKS_PROTO),
    ]
    assert protoc.main(argv) == 0
    assert (tmp_path / "bookservice" / "v1" / "service_mcp.py").is_file()
    assert LIBRARY_PROTO.is_file()
    assert ROOT.is_dir()
