"""Run every conformance case (tests/conformance/cases.py) against the engine's `execute()`."""

from __future__ import annotations

import json

import pytest

from cosmoscore.sql import SqlError, execute, parse_query
from tests.conformance.cases import CASES, Case
from tests.conformance.compare import canonical
from tests.conformance.dataset import DATASETS


def expected_rows(case: Case) -> list:
    docs = DATASETS[case.dataset]
    return case.expected(docs) if callable(case.expected) else case.expected


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 150
    assert len({c.name for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case) -> None:
    docs = DATASETS[case.dataset]
    if case.error is not None:
        code, fragment = case.error
        with pytest.raises(SqlError) as info:
            execute(parse_query(case.sql), docs, case.params)
        assert info.value.code == code
        assert fragment in info.value.message
        return
    result = execute(parse_query(case.sql), docs, case.params)
    actual, expected = canonical(result.rows), canonical(expected_rows(case))
    if case.ordered:
        assert actual == expected
    else:
        key = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
        assert sorted(actual, key=key) == sorted(expected, key=key)
