"""``mx.profiler``: op and kernel events while it runs (counted against the calls made), the
Chrome trace ``dump`` writes, ``dumps``' statistics in MXNet's JSON layout and sort orders,
pause / resume, the user's domains, tasks, frames, events, counters and markers, bad input."""

from __future__ import annotations

import json
from collections import OrderedDict

import numpy as np
import pytest

import sparsegen as mx
from sparsegen import profiler
from sparsegen.trace import RECORDER


@pytest.fixture
def trace_file(tmp_path):
    """A profiler writing to a fresh file, stopped and emptied afterwards."""
    path = tmp_path / "profile.json"
    profiler.set_config(profile_all=True, filename=str(path), aggregate_stats=True)
    yield path
    profiler.set_state("stop")
    profiler.dumps(reset=True)
    RECORDER.events.clear()


def _ops(stats):
    return stats["Time"].get("operator", {})


def test_ops_and_their_kernels_are_counted_once_per_call(trace_file):
    x = mx.nd.zeros((100, 100))
    profiler.set_state("run")
    mx.nd.sqrt(x)
    x = x + 1
    x = x + 1
    csr = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3))
    mx.nd.sparse.dot(csr, mx.nd.ones((3, 4)))
    profiler.set_state("stop")
    mx.nd.sqrt(x)  # stopped: not counted
    stats = json.loads(profiler.dumps(format="json"))
    assert _ops(stats)["sqrt"]["Count"] == 1
    assert _ops(stats)["_plus_scalar"]["Count"] == 2  # MXNet's name for x + 1
    assert _ops(stats)["dot"]["Count"] == 1
    kernels = stats["Time"]["kernel"]
    assert kernels["ew_unary.sqrt"]["Count"] == 1 and kernels["dot_csr_dense.matmul"]["Count"] == 1
    for item in (*_ops(stats).values(), *kernels.values()):
        assert 0 <= item["Min"] <= item["Avg"] <= item["Max"] <= item["Total"] + 1e-9
        assert item["Total"] == pytest.approx(item["Avg"] * item["Count"])
    assert set(stats) == {"Time", "Memory", "Unit"}


def test_dump_writes_a_chrome_trace_with_kernels_inside_their_ops(trace_file):
    profiler.set_state("run")
    mx.nd.sqrt(mx.nd.ones((10, 10)))
    profiler.dump(finished=False)
    events = json.loads(trace_file.read_text())["traceEvents"]
    op = next(e for e in events if e["cat"] == "operator" and e["name"] == "sqrt")
    kernel = next(e for e in events if e["cat"] == "kernel" and e["name"] == "ew_unary.sqrt")
    assert op["ph"] == kernel["ph"] == "X" and op["pid"] == kernel["pid"]
    assert op["ts"] <= kernel["ts"] and kernel["ts"] + kernel["dur"] <= op["ts"] + op["dur"]
    assert RECORDER.on  # not finished: still running
    profiler.dump()  # finished: stops and forgets
    assert not RECORDER.on and not RECORDER.events
    assert any(e["name"] == "sqrt" for e in json.loads(trace_file.read_text())["traceEvents"])


def test_pause_resume_and_reset(trace_file):
    profiler.set_state("run")
    mx.nd.sqrt(mx.nd.ones(3))
    profiler.pause()
    mx.nd.sqrt(mx.nd.ones(3))
    profiler.resume()
    mx.nd.sqrt(mx.nd.ones(3))
    assert _ops(json.loads(profiler.dumps(format="json", reset=True)))["sqrt"]["Count"] == 2
    assert "sqrt" not in _ops(json.loads(profiler.dumps(format="json")))
    mx.nd.exp(mx.nd.ones(3))
    table = profiler.dumps()
    assert "operator" in table and "exp" in table and "sqrt" not in table


@pytest.mark.parametrize("sort_by, key", [("total", "Total"), ("avg", "Avg"), ("min", "Min"),
                                          ("max", "Max"), ("count", "Count")])
@pytest.mark.parametrize("ascending", [False, True])
def test_dumps_sorts_each_category(trace_file, sort_by, key, ascending):
    profiler.set_state("run")
    for n in (1, 2, 3):
        for _ in range(n):
            mx.nd.sqrt(mx.nd.ones(50 * n))
        mx.nd.exp(mx.nd.ones(3))
    stats = json.loads(profiler.dumps(format="json", sort_by=sort_by, ascending=ascending),
                       object_pairs_hook=OrderedDict)
    for items in stats["Time"].values():
        values = [item[key] for item in items.values()]
        assert values == sorted(values, reverse=not ascending)


def test_user_events_of_domains(trace_file):
    profiler.set_state("run")
    domain = profiler.Domain("training")
    task, frame, event = domain.new_task("batch"), domain.new_frame("f"), profiler.Event("e")
    for span in (task, frame, event):
        span.start()
        span.stop()
    counter = domain.new_counter("items", 5)
    counter += 3
    counter -= 1
    counter.increment(2)
    domain.new_marker("here").mark("global")
    profiler.dump(finished=False)
    events = json.loads(trace_file.read_text())["traceEvents"]
    spans = {(e["cat"], e["name"]) for e in events if e["ph"] == "X"}
    assert {("training", "batch"), ("training", "f"), ("Event", "e")} <= spans
    values = [e["args"]["items"] for e in events if e["ph"] == "C"]
    assert values == [5, 8, 7, 9]
    assert [e["s"] for e in events if e["ph"] == "i"] == ["g"]
    with pytest.raises(mx.MXNetError, match="stop\\(\\) before start\\(\\)"):
        task.stop()


def test_a_dump_that_cannot_be_written_names_the_file(tmp_path):
    profiler.set_config(filename=str(tmp_path / "missing" / "p.json"))
    try:
        with pytest.raises(mx.MXNetError, match="profiler.dump: cannot write .*p.json"):
            profiler.dump()
    finally:
        profiler.set_config(filename="profile.json")


def test_bad_arguments_are_refused_naming_them():
    for call, match in ((lambda: profiler.set_config(profile_everything=True),
                         "profile_everything"),
                        (lambda: profiler.set_state("go"), "'go'"),
                        (lambda: profiler.dumps(format="xml"), "'xml'"),
                        (lambda: profiler.dumps(sort_by="median"), "'median'"),
                        (lambda: profiler.pause("scheduler"), "'scheduler'"),
                        (lambda: profiler.Domain(""), "Domain"),
                        (lambda: profiler.Domain("d").new_marker("m").mark("galaxy"), "galaxy")):
        with pytest.raises(mx.MXNetError, match=match):
            call()
    assert not RECORDER.on


def test_recording_off_leaves_no_events_and_results_unchanged():
    RECORDER.events.clear()
    x = mx.nd.array(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(mx.nd.sqrt(x).asnumpy(), np.sqrt(np.arange(6.0).reshape(2, 3)),
                               rtol=1e-6)
    assert not RECORDER.on and RECORDER.events == []
