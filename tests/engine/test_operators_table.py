"""The operator table covers the closed vocabulary exactly."""

from preflight.engine import operators


def test_every_operator_has_one_builder_and_no_builder_is_unreachable() -> None:
    assert set(operators._BUILDERS) == set(operators.OPERATORS)
