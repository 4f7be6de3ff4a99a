"""bench/compare.py and bench/paired_commits.py: the pure parts of the regression guard
(issue 31, target 0): option handling, the ratio summary and the exit status. No run is
timed here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import compare
import paired_commits


def test_summary_is_the_median_of_per_pair_ratios_with_failed_pairs_left_out() -> None:
    head = [110.0, 100.0, None, 300.0, 105.0]
    base = [100.0, 100.0, 100.0, 100.0, None]
    summary = paired_commits.summarise(head, base)
    assert summary is not None
    assert summary["pairs"] == 3
    assert summary["median"] == 1.1  # ratios 1.1, 1.0, 3.0: not the ratio of the medians
    assert (summary["min"], summary["max"]) == (1.0, 3.0)
    assert summary["head_us"] == 110.0
    assert summary["base_us"] == 100.0
    assert summary["iqr"] > 0


def test_summary_of_one_pair_and_of_none() -> None:
    one = paired_commits.summarise([2.0], [1.0])
    assert one is not None
    assert one["median"] == 2.0
    assert one["iqr"] == 0.0
    assert paired_commits.summarise([None, 1.0], [1.0, None]) is None


def test_iqr_is_the_spread_of_the_middle_half() -> None:
    head = [100.0 + i for i in range(8)]
    summary = paired_commits.summarise(list(head), [100.0] * 8)
    assert summary is not None
    assert 0.03 < summary["iqr"] < 0.06


def test_compare_defaults_to_fifteen_five_second_pairs_and_the_async_handler() -> None:
    args = compare.parse(["7fb3f91"])
    assert args.base == "7fb3f91"
    assert (args.reps, args.duration, args.warmup) == (15, 5.0, 1.0)
    assert args.head_args == ""
    assert args.base_args == ""
    assert args.limit == 1.03


def test_compare_handler_form_goes_to_both_sides() -> None:
    args = compare.parse(["main", "--handler", "sync"])
    assert args.head_args == "--handler sync"
    assert args.base_args == "--handler sync"


@pytest.mark.parametrize(
    "argv",
    [
        ["main", "--reps", "5"],
        ["main", "--transport", "websocket"],
        ["main", "--era", "2025"],
        ["main", "--era", "handshake,modern", "--base-era", "handshake"],
        ["main", "--duration", "0"],
        ["main", "--limit", "0"],
    ],
)
def test_compare_refuses_options_that_measure_nothing(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        compare.parse(argv)
    assert exc.value.code == 2


def test_few_pairs_only_when_asked() -> None:
    assert compare.parse(["main", "--reps", "3", "--allow-few"]).reps == 3


def test_verdict_fails_a_row_over_the_limit_and_an_empty_run() -> None:
    assert compare.verdict([{"median": 1.01}, {"median": 1.02}], 1.03) == 0
    assert compare.verdict([{"median": 1.01}, {"median": 1.05}], 1.03) == 1
    assert compare.verdict([], 1.03) == 2


def test_base_tree_refuses_an_unknown_commit(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    bad = "no-such-commit-" + tmp_path.name
    with pytest.raises(SystemExit, match="rev-parse"), compare.base_tree(repo, bad):
        pass
