"""The SEP map (``conformance/seps.toml``) against the pinned suites' listing snapshots,
the README's generated SEP TABLE, and the "not run" guard of ``conformance/harness.py``
(issue 29, section 3). Standard library and pytest only: runs in ``lint``."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "conformance"))

import harness  # noqa: E402  (conformance/harness.py)
import sep_map  # noqa: E402  (conformance/sep_map.py)

TABLE = sep_map.load()
SNAPS = {version: sep_map.snapshot(version) for version in TABLE.pinned}


def test_the_table_is_true_against_every_pinned_listing() -> None:
    assert sep_map.problems(TABLE, SNAPS) == []


def test_the_pinned_versions_are_the_toolchains() -> None:
    import toolchain

    assert TABLE.pinned == toolchain.PINNED["conformance"]


def test_the_sessions_the_issue_names_exist() -> None:
    named = {"2663", "2640", "2322", "2549", "2243", "2164", "1034", "1330", "2106"}
    named |= {"1932", "1933", "1046", "990", "991"}
    assert named <= {key.sep for key in TABLE.sep_keys()}


def test_each_sep_scenario_is_run_by_a_default_session_which_the_map_names() -> None:
    cells = sep_map.default_cells(TABLE, SNAPS)
    by_key = {key.name: sep_map.sep_cells(TABLE, cells, key.name) for key in TABLE.sep_keys()}
    assert {c.session for c in by_key["sep-2663"]} == {"conformance-tasks"}
    assert {c.session for c in by_key["sep-2640"]} == {"conformance-skills"}
    assert {c.session for c in by_key["sep-2549"]} == {"conformance-server"}
    assert {(c.version, c.revision) for c in by_key["sep-2549"]} == {
        ("0.2.0-alpha.12", "2026-07-28")
    }
    assert {c.session for c in by_key["sep-1932"]} == {"conformance-client"}
    # Elicitation defaults: both sides, both suites, only in the era that has them.
    sides = {(c.side, c.version, c.revision) for c in by_key["sep-1034"]}
    assert ("server", "0.2.0-alpha.12", "2025-11-25") in sides
    assert ("client", "0.1.16", "") in sides
    assert not any(r == "2026-07-28" for _, _, r in sides)


def test_the_readme_table_is_current() -> None:
    assert sep_map.readme_block_problem(ROOT / "README.md", TABLE) == ""


def test_a_stale_readme_table_is_named(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"x\n{sep_map.README_BEGIN}\n| old |\n{sep_map.README_END}\n")
    assert "stale" in sep_map.readme_block_problem(readme, TABLE)
    sep_map.write_readme(readme, TABLE)
    assert sep_map.readme_block_problem(readme, TABLE) == ""


# -- the check fails when the TABLE or the sessions drift ----------------------------------


def edited(tmp_path: Path, old: str, new: str) -> sep_map.Table:
    text = sep_map.TABLE.read_text()
    assert old in text
    path = tmp_path / "seps.toml"
    path.write_text(text.replace(old, new, 1))
    return sep_map.load(path)


def problems_after(tmp_path: Path, old: str, new: str) -> list[str]:
    """The table's problems once ``old`` is replaced by ``new`` in a copy of it."""
    return sep_map.problems(edited(tmp_path, old, new), SNAPS)


def test_a_listed_scenario_mapped_to_nothing_fails(tmp_path: Path) -> None:
    found = problems_after(tmp_path, '["caching"]', '["sep-2164-resource-not-found"]')
    assert "0.2.0-alpha.12 lists caching, which no key maps" in found


def test_a_mapped_scenario_the_suite_no_longer_lists_fails(tmp_path: Path) -> None:
    found = problems_after(tmp_path, 'scenarios = ["caching"]', 'scenarios = ["caching", "v2"]')
    assert "v2 (sep-2549) is listed by no pinned version" in found


def test_a_sep_without_scenarios_or_a_named_sep_without_key_fails(tmp_path: Path) -> None:
    migration = 'scenarios = ["auth/authorization-server-migration"]'
    found = problems_after(tmp_path, migration, "scenarios = []")
    assert "sep-2352 has no scenario" in found
    assert "0.2.0-alpha.12 lists auth/authorization-server-migration, which no key maps" in found
    named = '[key.sep-2352]\ntitle = "Authorization server migration"'
    found = problems_after(tmp_path, named, '[key."core:x"]\ntitle = "x"')
    assert "the suite names SEP-2352: map it to scenarios or give a reason" in found


def test_a_stale_reason_for_an_unmapped_sep_fails(tmp_path: Path) -> None:
    reasons = '[unmapped]\n"2549" = "no longer true"\n"9999" = "gone"\n'
    found = problems_after(tmp_path, "[unmapped]\n", reasons)
    assert "SEP-2549 has a key and a reason in [unmapped]: drop the reason" in found
    assert "[unmapped] SEP-9999 is named by no pinned version: drop it" in found


def test_a_sep_scenario_no_default_session_runs_fails(tmp_path: Path) -> None:
    (tmp_path / "noxsessions").mkdir()
    shutil.copy(ROOT / "noxsessions" / "skills.py", tmp_path / "noxsessions" / "skills.py")
    noxfile = (ROOT / "noxfile.py").read_text()
    assert '    "tasks-wire-fields",\n' in noxfile
    (tmp_path / "noxfile.py").write_text(noxfile.replace('    "tasks-wire-fields",\n', "", 1))
    found = sep_map.problems(TABLE, SNAPS, tmp_path)
    assert "sep-2663: tasks-wire-fields is run by no default session" in found


def test_a_stale_snapshot_is_seen_in_the_listing(tmp_path: Path) -> None:
    for path in sep_map.LISTINGS.iterdir():
        shutil.copy(path, tmp_path / path.name)
    listing = tmp_path / "0.2.0-alpha.12.list.txt"
    listing.write_text(listing.read_text().replace("  - caching [2026-07-28]\n", ""))
    snaps = {v: sep_map.snapshot(v, tmp_path) for v in TABLE.pinned}
    assert "caching (sep-2549) is listed by no pinned version" in sep_map.problems(TABLE, snaps)


def test_listings_parse_with_sides_and_eras() -> None:
    alpha = SNAPS["0.2.0-alpha.12"]
    assert alpha.listed["caching"] == sep_map.Listed("server", ("2026-07-28",))
    assert alpha.listed["auth/dpop"] == sep_map.Listed("client", ("extension",))
    assert alpha.listed["authorization-code-grant"].side == "authorization"
    assert ("client", "auth/dpop") in alpha.requirements["2025-11-25"]
    assert ("server", "caching") not in alpha.requirements["2025-11-25"]
    assert not SNAPS["0.1.16"].requirements


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
        "SKIPPED x/sep-2640-a (): no extension",
    ]
    assert harness.unrun_checks(checks(tmp_path / "none"), "x") == ["not run: no x check succeeded"]


def test_a_skipped_check_listed_with_a_reason_is_allowed(tmp_path: Path) -> None:
    out = checks(tmp_path, ("a", "SUCCESS"), ("b", "SKIPPED"))
    assert harness.unrun_checks(out, "x") == ["SKIPPED x/b (): no extension"]
    assert harness.unrun_checks(out, "x", {"x/b": "not applicable"}) == []


# -- docs/releasing.md's commands are the ones that exist ----------------------------------


def test_the_releasing_page_names_real_sessions_and_commands() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    from docs_blocks import block

    page = ROOT / "docs" / "releasing.md"
    sessions = re.findall(r"conformance\(sep='(\d+)'\)", block(page, "releasing-sep-session"))
    assert sessions == ["2663"]
    assert set(sessions) <= {key.sep for key in TABLE.sep_keys()}
    commands = re.findall(r"conformance/sep_map\.py (\w+)", block(page, "releasing-sep-refresh"))
    assert commands == ["refresh", "check", "readme"]
    assert set(commands) <= set(sep_map.COMMANDS)


def test_an_allowed_skip_that_ran_is_stale(tmp_path: Path) -> None:
    out = checks(tmp_path, ("a", "SUCCESS"), ("b", "SUCCESS"))
    assert harness.unrun_checks(out, "x", {"x/b": "not applicable", "y/b": "other"}) == [
        "x/b is allowed to skip but was SUCCESS"
    ]


def test_an_allowed_skip_of_an_unmapped_scenario_and_a_misspelt_row_fail(tmp_path: Path) -> None:
    allowed = '[allowed_skips]\n"nope/check" = "why not"\n'
    found = problems_after(tmp_path, "[allowed_skips]\n", allowed)
    assert "[allowed_skips] nope/check: names no mapped scenario" in found
    said = ""
    try:
        edited(tmp_path, 'scenarios = ["caching"]', 'scenario = ["caching"]')
    except ValueError as exc:
        said = str(exc)
    assert "sep-2549 needs exactly title, distribution, scenarios" in said
    try:
        edited(tmp_path, '"tasks-" = "tasks-demo"', '"tasks-" = "task-demo"')
    except ValueError as exc:
        said = str(exc)
    assert "unknown peers ['task-demo']" in said


def test_an_allowed_skip_can_name_one_of_the_checks_sharing_an_id(tmp_path: Path) -> None:
    out = tmp_path / "out" / "client-x"
    out.mkdir(parents=True)
    body = [
        {"id": "h", "name": "Method_tools_list", "status": "SUCCESS"},
        {"id": "h", "name": "Method_initialize", "status": "SKIPPED", "errorMessage": "none"},
        {"id": "h", "name": "Method_prompts_get", "status": "SKIPPED", "errorMessage": "none"},
    ]
    (out / "checks.json").write_text(json.dumps(body))
    allowed = {"x/h/Method_initialize": "no initialize at this wire"}
    assert harness.unrun_checks(out.parent, "x", allowed) == [
        "SKIPPED x/h (Method_prompts_get): none"
    ]


def test_a_whole_run_names_each_scenario_that_did_not_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for rel, status in (
        ("server-a-2026-12-07T22-08-24-117Z", "SKIPPED"),
        ("server-tasks-b-2026-12-07T22-08-24-117Z", "SKIPPED"),
        ("auth/c-2026-12-07T22-08-24-117Z", "SUCCESS"),
    ):
        (run / rel).mkdir(parents=True)
        (run / rel / "checks.json").write_text(json.dumps([{"id": "k", "status": status}]))
    assert harness.unrun_scenarios(run, skip=("tasks-",)) == [
        "a: not run: no a check succeeded",
        "a: SKIPPED a/k (): ",
    ]
