"""``tools/workspace.py``, ``tools/lowest.py`` and ``tools/index_install.py`` (issue 29 §2):
the pure parts, on the real workspace or on small files made here. The sessions
themselves (``build``, ``lowest``) run them end to end."""

from __future__ import annotations

import csv
import hashlib
import io
import re
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import index_install
import lowest
from docs_blocks import block
from workspace import ROOT, Distribution, distributions, parse_requirement, version_key

FENCE = "```"


# -- tools/workspace.py ------------------------------------------------------------------


def test_every_workspace_member_is_found_with_its_requirements() -> None:
    found = {d.name: d for d in distributions()}
    on_disk = {
        p.parent.name
        for pattern in ("packages/*/pyproject.toml", "experimental/*/pyproject.toml")
        for p in ROOT.glob(pattern)
    }
    assert set(found) == on_disk
    core = found["mcpkit-core"]
    assert any(r.name == "pydantic" and r.lower for r in core.dependencies)
    assert all(any(r.name == "pytest" for r in d.test_group) for d in found.values())


def test_requirements_are_parsed_and_a_url_one_is_refused() -> None:
    req = parse_requirement("PyJWT[crypto] >= 2.10, <3 ; python_version >= '3.11'")
    assert req.name == "pyjwt"
    assert req.extras == ("crypto",)
    assert req.specifiers == (">=2.10", "<3")
    assert req.marker == 'python_version >= "3.11"'  # packaging's normal form
    assert req.lower == "2.10"
    assert parse_requirement("orjson").lower is None
    with pytest.raises(ValueError, match="unsupported"):
        parse_requirement("pkg @ https://example.com/pkg.whl")


def test_versions_compare_as_releases() -> None:
    assert version_key("2.11") == version_key("2.11.0")
    assert version_key("4.10.0") > version_key("4.5")
    with pytest.raises(ValueError, match="not a plain release"):
        version_key("1.0rc1")


# -- tools/lowest.py ---------------------------------------------------------------------


def _dist(deps: list[str], extras: dict[str, list[str]] | None = None) -> Distribution:
    return Distribution(
        "mcpkit-x",
        Path("/nowhere"),
        tuple(map(parse_requirement, deps)),
        {k: tuple(map(parse_requirement, v)) for k, v in (extras or {}).items()},
        (),
    )


def test_a_bound_that_resolves_higher_is_untrue_and_an_exact_one_is_not() -> None:
    dist = _dist(
        ["anyio>=4.5", "pydantic>=2.11,<3", "mcpkit-core>=0.1,<0.2"], {"r": ["redis>=5.2"]}
    )
    resolved = {"anyio": "4.10.0", "pydantic": "2.11.0", "redis": "5.2.0", "mcpkit-core": "0.1.0"}
    assert lowest.untrue_bounds(dist, resolved) == [
        "mcpkit-x: anyio>=4.5 resolves to 4.10.0 at lowest-direct: raise the bound to 4.10.0"
    ]
    resolved["anyio"] = "4.5.0"
    assert lowest.untrue_bounds(dist, resolved) == []


def test_a_dependency_without_a_lower_bound_is_flagged() -> None:
    assert lowest.untrue_bounds(_dist(["orjson"]), {"orjson": "3.11.0"}) == [
        "mcpkit-x: orjson declares no lower bound"
    ]


def test_pins_are_read_from_uv_output() -> None:
    text = "anyio==4.10.0\n    # via mcpkit-core\nPyYAML==6.0.1 ; python_version >= '3'\n"
    text += "mcpkit-core @ file:///w/packages/mcpkit-core\n"
    assert lowest.parse_pins(text) == {"anyio": "4.10.0", "pyyaml": "6.0.1"}


def test_the_workspace_closure_follows_members_through_members() -> None:
    members = {d.name: d for d in distributions()}
    otel = members["mcpkit-ext-otel"]
    closure = lowest.workspace_closure([*otel.dependencies, *otel.test_group], members)
    assert str(members["mcpkit-core"].path) in closure
    assert str(members["mcpkit-ext-tasks"].path) in closure
    assert not any("mcpkit-ext-auth" in c for c in closure)


def test_test_tools_are_pinned_from_the_lock() -> None:
    locked = lowest.locked_versions(ROOT / "uv.lock")
    tools = {n for n in locked if lowest.TOOLS.match(n)}
    assert {"pytest", "pytest-xdist", "hypothesis"} <= tools
    assert "pydantic" not in tools
    assert "anyio" not in tools


def test_every_distribution_registers_and_uses_the_lowest_marker() -> None:
    for dist in distributions():
        conftest = (dist.path / "tests" / "conftest.py").read_text()
        assert '"lowest:' in conftest, dist.name
        marked = [
            p
            for p in (dist.path / "tests").rglob("test_*.py")
            if re.search(r"pytest\.mark\.lowest\b", p.read_text())
        ]
        assert any("docs" in p.name or "docs" in p.parts for p in marked), dist.name


# -- tools/index_install.py --------------------------------------------------------------


def _record_hash(data: bytes) -> str:
    import base64

    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _wheel(folder: Path, name: str, version: str, files: dict[str, bytes]) -> Path:
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    rows = io.StringIO()
    writer = csv.writer(rows, lineterminator="\n")
    for path, data in files.items():
        writer.writerow([path, _record_hash(data), len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    wheel = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.4\nName: {name}\nVersion: {version}\n"
        )
        archive.writestr(f"{info}/RECORD", rows.getvalue())
    return wheel


def _built(tmp_path: Path) -> dict[str, index_install.Built]:
    core = _wheel(tmp_path, "mcpkit-core", "0.1.0", {
        "mcpkit/core/__init__.py": b"", "mcpkit/server/__init__.py": b"",
        "mcpkit/server/app.py": b"x = 1\n",
    })  # fmt: skip
    ext = _wheel(tmp_path, "mcpkit-ext-ui", "0.1.0", {
        "mcpkit/ext/ui/__init__.py": b"", "mcpkit/ext/ui/host/__init__.py": b"",
    })  # fmt: skip
    return {b.name: b for b in map(index_install.read_built, (core, ext))}


def test_a_wheels_import_packages_are_its_topmost_regular_packages(tmp_path: Path) -> None:
    built = _built(tmp_path)
    assert index_install.packages_of(built["mcpkit-core"]) == ["mcpkit.core", "mcpkit.server"]
    assert index_install.packages_of(built["mcpkit-ext-ui"]) == ["mcpkit.ext.ui"]


def test_provenance_accepts_our_wheels_and_names_every_other_kind(tmp_path: Path) -> None:
    built = _built(tmp_path)
    ours = {n: (b.version, {**b.record, "mcpkit/x.pyc": ""}) for n, b in built.items()}
    assert index_install.provenance_problems("mcpkit-ext-ui", ours, built) == []
    # A same-named distribution from elsewhere: another version, other bytes.
    other = dict(ours)
    other["mcpkit-core"] = (
        "0.1.0",
        {**built["mcpkit-core"].record, "mcpkit/server/app.py": "sha256=x"},
    )
    assert index_install.provenance_problems("mcpkit-ext-ui", other, built) == [
        "mcpkit-core: 1 files differ from our wheel: ['mcpkit/server/app.py']"
    ]
    other["mcpkit-core"] = ("9.9.9", ours["mcpkit-core"][1])
    assert index_install.provenance_problems("mcpkit-ext-ui", other, built) == [
        "mcpkit-core 9.9.9 installed, 0.1.0 built"
    ]
    # Another mcpkit distribution pulled in; the asked one missing.
    more = {**ours, "mcpkit-ext-auth": ("0.1.0", {})}
    assert index_install.provenance_problems("mcpkit-ext-ui", more, built) == [
        "installing mcpkit-ext-ui also installed mcpkit-ext-auth"
    ]
    assert "mcpkit-ext-ui is not installed" in index_install.provenance_problems(
        "mcpkit-ext-ui", {"mcpkit-core": ours["mcpkit-core"]}, built
    )


def test_pips_report_must_name_our_index_and_our_wheels_hash(tmp_path: Path) -> None:
    built = _built(tmp_path)
    present = {n: (b.version, b.record) for n, b in built.items()}
    index = "http://127.0.0.1:4321/simple/"

    def report(url: str, sha: str) -> dict[str, object]:
        info = {"url": url, "archive_info": {"hashes": {"sha256": sha}}}
        return {"install": [{"metadata": {"name": "mcpkit-ext-ui"}, "download_info": info}]}

    good = report("http://127.0.0.1:4321/packages/x.whl", built["mcpkit-ext-ui"].sha256)
    assert index_install.provenance_problems("mcpkit-ext-ui", present, built, good, index) == []
    bad = report("https://files.pythonhosted.org/x.whl", "0" * 64)
    found = index_install.provenance_problems("mcpkit-ext-ui", present, built, bad, index)
    assert len(found) == 2
    assert "not our index" in found[0]
    assert "ours is" in found[1]


def test_each_distribution_has_a_docs_page_with_a_first_example() -> None:
    for dist in distributions():
        page = index_install.docs_page(dist.name)
        assert index_install.first_example(page).startswith("# docs-example:"), dist.name
        assert re.search(r"^server = ", index_install.first_example(page), re.M), dist.name


def test_a_pages_install_block_names_its_third_party_packages(tmp_path: Path) -> None:
    page = tmp_path / "x.md"
    page.write_text(
        f"{FENCE}sh\npip install mcpkit-ext-otel   # core\n"
        f'pip install "mcpkit-x[redis]" opentelemetry-sdk -U  # yours\n{FENCE}\n'
        f"{FENCE}sh\npip install later\n{FENCE}\n"
    )
    assert index_install.third_party_installs(page) == ["opentelemetry-sdk"]
    # a distribution's own extras are named (they bring third-party packages)
    assert index_install.third_party_installs(page, "mcpkit-x") == [
        "mcpkit-x[redis]",
        "opentelemetry-sdk",
    ]
    page.write_text("no blocks\n")
    assert index_install.third_party_installs(page) == []


def test_a_scratch_copys_pyproject_is_bumped_with_extras_kept() -> None:
    text = '[project]\nname = "e"\nversion = "0.1.0"\ndependencies = [\n'
    text += '    "mcpkit-core>=0.1,<0.2",\n]\nredis = ["mcpkit-core[redis]>=0.1,<0.2"]\n'
    out = index_install.edited_pyproject(text, "0.2.0", ">=0.2,<0.3")
    assert 'version = "0.2.0"' in out
    assert '"mcpkit-core>=0.2,<0.3"' in out
    assert '"mcpkit-core[redis]>=0.2,<0.3"' in out
    assert index_install.bump_minor("0.1.3") == "0.2.0"
    with pytest.raises(ValueError, match="one version line"):
        index_install.edited_pyproject("[project]\n", "0.2.0", None)


def test_pip_sees_no_index_but_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "https://elsewhere.example/simple")
    monkeypatch.setenv("PIP_FIND_LINKS", "/opt/wheels")
    env = index_install.clean_env()
    assert "PIP_EXTRA_INDEX_URL" not in env
    assert "PIP_FIND_LINKS" not in env
    assert env["PIP_CONFIG_FILE"] == index_install.os.devnull
    uv = index_install.installer("uv", Path("/v/bin/python"), "http://127.0.0.1:1/simple/")("x")
    assert uv[uv.index("--index-strategy") + 1] == "first-index"
    assert uv.index("--index") < uv.index("--default-index")
    pip = index_install.installer("pip", Path("/v/bin/python"), "http://127.0.0.1:1/simple/")("x")
    assert pip[pip.index("--index-url") + 1] == "http://127.0.0.1:1/simple/"
    assert "--extra-index-url" not in pip


def test_the_releasing_page_names_sessions_that_exist() -> None:
    text = block("docs/releasing.md", "index-install-sessions")
    sessions = re.findall(r"nox -s ([\w-]+)", text)
    registered = "".join(p.read_text() for p in (ROOT / "noxsessions").glob("*.py"))
    registered += (ROOT / "noxfile.py").read_text()
    assert sessions
    for name in sessions:
        assert re.search(rf'(name="{name}"|def {name}\()', registered), name


def test_a_workspace_member_without_a_wheel_fails_before_anything_is_served(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "dist" / "mcpkit-core").mkdir(parents=True)
    assert index_install.main([str(tmp_path / "dist"), str(tmp_path / "work")]) == 1
    assert "no wheel in" in capsys.readouterr().err
