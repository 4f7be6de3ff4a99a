"""The SEP map (``conformance/seps.toml``) against the pinned suites' listing snapshots,
the README's generated SEP table, and the "not run" guard of ``conformance/harness.py``
(issue 29, section 3). Standard library and pytest only: runs in ``lint``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "conformance"))

import harness
import seps


@pytest.fixture(scope="module")
def table() -> seps.Table:
    return seps.load()


@pytest.fixture(scope="module")
def snaps(table: seps.Table) -> dict[str, seps.Snapshot]:
    return {version: seps.snapshot(version) for version in table.pinned}


def test_the_table_is_true_against_every_pinned_listing(
    table: seps.Table, snaps: dict[str, seps.Snapshot]
) -> None:
    assert seps.problems(table, snaps) == []


def test_the_pinned_versions_are_the_toolchains(table: seps.Table) -> None:
    import toolchain

    assert table.pinned == toolchain.PINNED["conformance"]


def test_the_sessions_the_issue_names_exist(table: seps.Table) -> None:
    named = {"2663", "2640", "2322", "2549", "2243", "2164", "1034", "1330", "2106"}
    named |= {"1932", "1933", "1046", "990", "991"}
    assert named <= {key.sep for key in table.sep_keys()}


def test_each_sep_scenario_is_run_by_a_default_session_which_the_map_names(
    table: seps.Table, snaps: dict[str, seps.Snapshot]
) -> None:
    cells = seps.default_cells(table, snaps)
    by_key = {key.name: seps.sep_cells(table, cells, key.name) for key in table.sep_keys()}
    assert {c.session for c in by_key["sep-2663"]} == {"conformance-tasks"}
    assert {c.session for c in by_key["sep-2640"]} == {"conformance-skills"}
    assert {c.session for c in by_key["sep-2549"]} == {"conformance-server"}
    assert {(c.version, c.revision) for c in by_key["sep-2549"]} == {("0.2.0-alpha.12", "2026-07-28")}
    assert {c.session for c in by_key["sep-1932"]} == {"conformance-client"}
    # Elicitation defaults: both sides, both suites, only in the era that has them.
    sides = {(c.side, c.version, c.revision) for c in by_key["sep-1034"]}
    assert ("server", "0.2.0-alpha.12", "2025-11-25") in sides
    assert ("client", "0.1.16", "") in sides
    assert not any(r == "2026-07-28" for _, _, r in sides)


def test_the_readme_table_is_current(table: seps.Table) -> None:
    assert seps.readme_block_problem(ROOT / "README.md", table) == ""


def test_a_stale_readme_table_is_named(tmp_path: Path, table: seps.Table) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"x\n{seps.README_BEGIN}\n| old |\n{seps.README_END}\n")
    assert "stale" in seps.readme_block_problem(readme, table)
    seps.write_readme(readme, table)
    assert seps.readme_block_problem(readme, table) == ""


# -- the check fails when the table or the sessions drift ----------------------------------


def edited(tmp_path: Path, old: str, new: str) -> seps.Table:
    text = seps.TABLE.read_text()
    assert old in text
    path = tmp_path / "seps.toml"
    path.write_text(text.replace(old, new, 1))
    return seps.load(path)


def test_a_listed_scenario_mapped_to_nothing_fails(
    tmp_path: Path, snaps: dict[str, seps.Snapshot]
) -> None:
    table = edited(tmp_path, 'scenarios = ["caching"]', 'scenarios = ["sep-2164-resource-not-found"]')
    found = seps.problems(table, snaps)
    assert "0.2.0-alpha.12 lists caching, which no key maps" in found


def test_a_mapped_scenario_the_suite_no_longer_lists_fails(
    tmp_path: Path, snaps: dict[str, seps.Snapshot]
) -> None:
    table = edited(tmp_path, 'scenarios = ["caching"]', 'scenarios = ["caching", "caching-v2"]')
    assert "caching-v2 (sep-2549) is listed by no pinned version" in seps.problems(table, snaps)


def test_a_sep_without_scenarios_or_a_named_sep_without_key_fails(
    tmp_path: Path, snaps: dict[str, seps.Snapshot]
) -> None:
    table = edited(tmp_path, 'scenarios = ["auth/authorization-server-migration"]', "scenarios = []")
    found = seps.problems(table, snaps)
    assert "sep-2352 has no scenario" in found
    assert "0.2.0-alpha.12 lists auth/authorization-server-migration, which no key maps" in found
    table = edited(tmp_path, '[key.sep-2352]\ntitle = "Authorization server migration"', '[key."core:x"]\ntitle = "x"')
    assert "the suite names SEP-2352: map it to scenarios or give a reason" in seps.problems(table, snaps)


def test_a_stale_reason_for_an_unmapped_sep_fails(
    tmp_path: Path, snaps: dict[str, seps.Snapshot]
) -> None:
    table = edited(tmp_path, "[unmapped]\n", '[unmapped]\n"2549" = "no longer true"\n"9999" = "gone"\n')
    found = seps.problems(table, snaps)
    assert "SEP-2549 has a key and a reason in [unmapped]: drop the reason" in found
    assert "[unmapped] SEP-9999 is named by no pinned version: drop it" in found


def test_a_sep_scenario_no_default_session_runs_fails(
    tmp_path: Path, table: seps.Table, snaps: dict[str, seps.Snapshot]
) -> None:
    (tmp_path / "noxsessions").mkdir()
    shutil.copy(ROOT / "noxsessions" / "skills.py", tmp_path / "noxsessions" / "skills.py")
    noxfile = (ROOT / "noxfile.py").read_text()
    assert '    "tasks-wire-fields",\n' in noxfile
    (tmp_path / "noxfile.py").write_text(noxfile.replace('    "tasks-wire-fields",\n', "", 1))
    found = seps.problems(table, snaps, tmp_path)
    assert "sep-2663: tasks-wire-fields is run by no default session" in found


def test_a_stale_snapshot_is_seen_in_the_listing(tmp_path: Path, table: seps.Table) -> None:
    for path in seps.LISTINGS.iterdir():
        shutil.copy(path, tmp_path / path.name)
    listing = tmp_path / "0.2.0-alpha.12.list.txt"
    listing.write_text(listing.read_text().replace("  - caching [2026-07-28]\n", ""))
    snaps = {v: seps.snapshot(v, tmp_path) for v in table.pinned}
    assert "caching (sep-2549) is listed by no pinned version" in seps.problems(table, snaps)


def test_listings_parse_with_sides_and_eras(snaps: dict[str, seps.Snapshot]) -> None:
    alpha = snaps["0.2.0-alpha.12"]
    assert alpha.listed["caching"] == seps.Listed("server", ("2026-07-28",))
    assert alpha.listed["auth/dpop"] == seps.Listed("client", ("extension",))
    assert alpha.listed["authorization-code-grant"].side == "authorization"
    assert ("client", "auth/dpop") in alpha.requirements["2025-11-25"]
    assert ("server", "caching") not in alpha.requirements["2025-11-25"]
    assert not snaps["0.1.16"].requirements


# -- harness rule 4: a scenario whose checks were all skipped did not run -----------------


def checks(tmp_path: Path, *statuses: tuple[str, str]) -> Path:
    out = tmp_path / "out" / "server-x-2026-01-01T00-00-00Z"
    out.mkdir(parents=True)
    body = [{"id": i, "status": s, "errorMessage": "no extension"} for i, s in statuses]
    (out / "checks.json").write_text(json.dumps(body))
    return tmp_path / "out"


def test_a_scenario_whose_every_check_was_skipped_did_not_run(tmp_path: Path) -> None:
    out = checks(tmp_path, ("sep-2640-a", "SKIPPED"), ("wire-schema-valid", "SUCCESS"))
    assert harness.unrun_checks(out, "x", own="sep-2640-") == [
        "not run: no sep-2640- check succeeded",
        "SKIPPED x/sep-2640-a: no extension",
    ]
    assert harness.unrun_checks(checks(tmp_path / "none"), "x") == [
        "not run: no x check succeeded"
    ]


def test_a_skipped_check_listed_with_a_reason_is_allowed(tmp_path: Path) -> None:
    out = checks(tmp_path, ("a", "SUCCESS"), ("b", "SKIPPED"))
    assert harness.unrun_checks(out, "x") == ["SKIPPED x/b: no extension"]
    assert harness.unrun_checks(out, "x", {"x/b": "not applicable"}) == []
