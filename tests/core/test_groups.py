"""Exception groups read in one place (referee.core.groups)."""

from __future__ import annotations

from referee.core.groups import first_leaf, leaves, only, sole_cause


def nested() -> BaseExceptionGroup[BaseException]:
    inner = ExceptionGroup("inner", [ValueError("v"), KeyError("k")])
    return BaseExceptionGroup("outer", [inner, RuntimeError("r")])


def test_leaves_open_groups_at_every_depth() -> None:
    found = leaves(nested())
    assert [type(e) for e in found] == [ValueError, KeyError, RuntimeError]
    assert [type(e) for e in leaves(nested(), (LookupError,))] == [KeyError]
    plain = OSError("plain")
    assert leaves(plain) == [plain]
    assert leaves(plain, (ValueError,)) == []


def test_sole_cause_prefers_an_interrupt_then_a_single_leaf() -> None:
    interrupt = KeyboardInterrupt()
    group = BaseExceptionGroup("g", [ValueError(), ExceptionGroup("i", [OSError()]),
                                     BaseExceptionGroup("k", [interrupt])])
    assert sole_cause(group) is interrupt
    single = ValueError("one")
    assert sole_cause(ExceptionGroup("g", [ExceptionGroup("h", [single])])) is single
    several = nested()
    assert sole_cause(several) is several
    assert sole_cause(single) is single


def test_only_and_first_leaf() -> None:
    assert only(BaseExceptionGroup("g", [KeyboardInterrupt(), KeyboardInterrupt()]),
                KeyboardInterrupt)
    assert not only(BaseExceptionGroup("g", [KeyboardInterrupt(), ValueError()]),
                    KeyboardInterrupt)
    assert only(KeyboardInterrupt(), KeyboardInterrupt)
    assert isinstance(first_leaf(nested()), ValueError)
