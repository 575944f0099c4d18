"""``mx.lr_scheduler``: Factor, MultiFactor, Poly and Cosine schedules with warmup, against the
closed forms of MXNet 1.9.1's documentation, and their argument checks."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.lr_scheduler import (CosineScheduler, FactorScheduler, MultiFactorScheduler,
                                    PolyScheduler)


def test_mxnets_own_schedule_checks():
    # the values MXNet's test_optimizer.py asserts, as numbers worked out by hand
    sched = FactorScheduler(100, 0.1, stop_factor_lr=1e-4, base_lr=1, warmup_steps=20,
                            warmup_begin_lr=0.1, warmup_mode="constant")
    assert sched(0) == sched(10) == 0.1 and sched(21) == 1
    assert sched(101) == pytest.approx(0.1) and sched(201) == pytest.approx(0.01)
    assert sched(1000) == pytest.approx(1e-4)  # stops at stop_factor_lr
    sched = MultiFactorScheduler([15, 25], 0.1, base_lr=0.1, warmup_steps=10,
                                 warmup_begin_lr=0.05)
    assert sched(0) == 0.05 and sched(5) == pytest.approx(0.075) and sched(15) == 0.1
    assert sched(16) == sched(20) == pytest.approx(0.01)
    assert sched(26) == sched(100) == pytest.approx(0.001)
    poly = PolyScheduler(1000, base_lr=3, pwr=2, final_lr=0, warmup_steps=100)
    assert poly(0) == 0 and poly(50) == pytest.approx(1.5) and poly(100) == pytest.approx(3)
    assert poly(101) < poly(100) and poly(500) < 1.6 and poly(1000) == pytest.approx(0)
    cosine = CosineScheduler(1000, base_lr=3, final_lr=0.1)
    assert cosine(0) == pytest.approx(3) and cosine(1000) == pytest.approx(0.1)
    assert cosine(500) == pytest.approx(1.55)


@settings(max_examples=40, deadline=None)
@given(max_update=st.integers(2, 300), warmup=st.integers(0, 50), base=st.floats(0.01, 5),
       final=st.floats(0, 0.01), pwr=st.integers(1, 3), at=st.integers(0, 400))
def test_decays_follow_their_closed_forms(max_update, warmup, base, final, pwr, at):
    if warmup >= max_update:
        with pytest.raises(ValueError, match="must exceed warmup_steps"):
            PolyScheduler(max_update, warmup_steps=warmup)
        return
    poly = PolyScheduler(max_update, base_lr=base, pwr=pwr, final_lr=final, warmup_steps=warmup)
    cosine = CosineScheduler(max_update, base_lr=base, final_lr=final, warmup_steps=warmup)
    if at < warmup:
        want = base * at / warmup  # linear warmup from 0
        assert poly(at) == pytest.approx(want) and cosine(at) == pytest.approx(want)
        return
    progress = min(at, max_update) - warmup
    span = max_update - warmup
    assert poly(at) == pytest.approx(final + (base - final) * (1 - progress / span) ** pwr)
    assert cosine(at) == pytest.approx(
        final + (base - final) * (1 + math.cos(math.pi * progress / span)) / 2)


@settings(max_examples=40, deadline=None)
@given(step=st.integers(1, 20), factor=st.floats(0.1, 1.0), counts=st.lists(
    st.integers(0, 200), min_size=1, max_size=6))
def test_factor_schedule_is_base_times_factor_per_whole_step(step, factor, counts):
    sched = FactorScheduler(step, factor, stop_factor_lr=0.0, base_lr=2.0)
    for count in sorted(counts):  # optimizers call with a non-decreasing num_update
        k = max(0, math.ceil(count / step) - 1)
        assert sched(count) == pytest.approx(2.0 * factor**k, rel=1e-9)


def test_setting_base_lr_moves_the_whole_schedule():
    # MXNet keeps a poly or cosine decay's start at the constructor's base_lr even when the
    # optimizer's learning_rate overrides it (a documented difference)
    poly = PolyScheduler(100, base_lr=0.01, pwr=1, warmup_steps=10)
    opt = mx.optimizer.SGD(learning_rate=0.1, lr_scheduler=poly)
    assert poly(5) == pytest.approx(0.05) and poly(55) == pytest.approx(0.05)
    assert opt.learning_rate == pytest.approx(0.0)  # num_update 0: the warmup's start


@pytest.mark.parametrize("make, error, message", [
    (lambda: FactorScheduler(0), ValueError, "step must be at least 1"),
    (lambda: FactorScheduler(2, factor=1.5), ValueError, "factor must be no more than 1"),
    (lambda: FactorScheduler(2.5), TypeError, "step must be an int"),
    (lambda: MultiFactorScheduler([5, 5]), ValueError, "increasing"),
    (lambda: MultiFactorScheduler(5), TypeError, "non-empty list"),
    (lambda: PolyScheduler(0), ValueError, "max_update must be at least 1"),
    (lambda: CosineScheduler(10, warmup_steps=-1), ValueError, "warmup_steps"),
    (lambda: CosineScheduler(10, warmup_mode="cubic"), ValueError, "warmup_mode"),
    (lambda: PolyScheduler(10, base_lr=0.1, warmup_begin_lr=0.5), ValueError,
     "at least warmup_begin_lr"),
])
def test_bad_arguments_raise_mxnets_classes(make, error, message):
    with pytest.raises(error, match=message) as caught:
        make()
    assert isinstance(caught.value, mx.MXNetError)
