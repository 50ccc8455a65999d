"""policies.dag.parse_dag_policies: labels, defaults and one-line refusals."""

from __future__ import annotations

import pytest

from packing.errors import InputError
from policies.dag import DEFAULT_DAG_POLICIES, parse_dag_policies


def test_default_list_and_labels() -> None:
    labels, pols = parse_dag_policies(None)
    assert labels == list(DEFAULT_DAG_POLICIES) and [p.name for p in pols] == labels
    labels, pols = parse_dag_policies(" a=fifo , sjf,b=sjf")
    assert labels == ["a", "sjf", "b"] and [p.name for p in pols] == ["fifo", "sjf", "sjf"]


@pytest.mark.parametrize(("text", "reason"), [
    (",", "no policy named"),
    ("fifo,foo", "foo: unknown DAG policy; known: fifo"),
    ("fifo,fifo", "two policies are both named 'fifo'"),
    ("missing.pt", "missing.pt: no such model file"),
])
def test_bad_lists_are_refused(text: str, reason: str) -> None:
    with pytest.raises(InputError, match=reason):
        parse_dag_policies(text)
