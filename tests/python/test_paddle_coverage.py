"""Coverage of Paddle 2.4's everyday names (crew/_paddle_names.py): the count of supported
names never falls, and a name Paddle has but crew lacks is an AttributeError that says so."""
import pytest

import crew
from crew import _paddle_names

# Raise this when names land; never lower it.
SUPPORTED_AT_LEAST = 562


def test_supported_names_do_not_fall():
    have = sum(len(h) for h, _ in _paddle_names.coverage().values())
    assert have >= SUPPORTED_AT_LEAST, _paddle_names.markdown()


def test_a_missing_paddle_name_says_crew_lacks_it(monkeypatch):
    monkeypatch.setitem(_paddle_names.NAMES, "paddle", _paddle_names.NAMES["paddle"] + ["no_such_op_x"])
    monkeypatch.setattr(crew, "__getattr__", _paddle_names._missing_attribute("crew"))
    with pytest.raises(AttributeError, match="Paddle 2.4 has paddle.no_such_op_x, crew does not"):
        crew.no_such_op_x  # noqa: B018


def test_a_typo_says_paddle_has_it_neither():
    with pytest.raises(AttributeError, match="nor has Paddle 2.4's paddle.nn"):
        crew.nn.Linaer  # noqa: B018


# Namespaces crew has no module for yet.
NOT_YET = set()


def test_every_namespace_imports():
    for ns in _paddle_names.NAMES:
        assert (_paddle_names._target(ns) is None) == (ns in NOT_YET), ns


def test_markdown_table_totals_the_namespaces():
    table = _paddle_names.markdown()
    assert table.splitlines()[0].startswith("| namespace")
    assert "**all**" in table.splitlines()[-1]
