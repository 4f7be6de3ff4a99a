"""``protoc-gen-mcpkit``: the protoc plugin (reads a ``CodeGeneratorRequest`` on stdin,
writes a ``CodeGeneratorResponse`` on stdout).

Rules:
1. For each file to generate that has at least one annotated service it writes
   ``<dir>/<name>_mcp.py`` (:mod:`.emit`) next to where ``--python_out`` writes
   ``<name>_pb2.py``; a file without annotations produces nothing.
2. An annotation that cannot work (:mod:`.plan` rule 1) is the response's ``error``:
   protoc prints it (``file:line: what; fix``) and exits non-zero; nothing is written.
3. The extensions are read with this package's ``annotations_pb2`` registered, so the
   ``mcp.v1`` options parse whatever Python module name the user's ``_pb2`` gave them.
4. The plugin advertises proto3 ``optional`` support.
"""

from __future__ import annotations

import sys

from google.protobuf import descriptor_pool
from google.protobuf.compiler import plugin_pb2

from mcpkit.experimental.protogen import annotations_pb2
from mcpkit.experimental.protogen.emit import module_text
from mcpkit.experimental.protogen.plan import Problem, plan_file

__all__ = ["generate", "main"]


EXTENSIONS = annotations_pb2.DESCRIPTOR
"""The annotations' file, registered before any request is parsed (rule 3)."""


def generate(request: plugin_pb2.CodeGeneratorRequest) -> plugin_pb2.CodeGeneratorResponse:
    """Rules 1, 2 and 4."""
    response = plugin_pb2.CodeGeneratorResponse()
    response.supported_features = plugin_pb2.CodeGeneratorResponse.FEATURE_PROTO3_OPTIONAL
    pool = descriptor_pool.DescriptorPool()
    by_name = {f.name: f for f in request.proto_file}
    for fdp in request.proto_file:
        pool.Add(fdp)
    files: list[tuple[str, str]] = []
    try:
        for name in request.file_to_generate:
            plan = plan_file(by_name[name], pool)
            if plan.services:
                files.append((name.removesuffix(".proto") + "_mcp.py", module_text(plan)))
    except Problem as exc:
        response.error = str(exc)
        return response
    for path, text in files:
        response.file.add(name=path, content=text)
    return response


def main() -> None:
    """The console script: stdin to stdout (rule 1)."""
    request = plugin_pb2.CodeGeneratorRequest.FromString(sys.stdin.buffer.read())
    sys.stdout.buffer.write(generate(request).SerializeToString())
