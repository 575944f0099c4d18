"""The README's usage example runs as written, and the shipped tuning logs are valid records."""

import json
import re
from pathlib import Path

from sparsegen import tuning_records
from sparsegen.choice import choose
from sparsegen.target import host_cpu

ROOT = Path(__file__).parents[1]


def test_readme_usage_runs():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "README has no python example"
    namespace: dict = {}
    for block in blocks:
        exec(block, namespace)  # noqa: S102 - the README's own example
    assert namespace["weight"].asnumpy()[1].tolist() == [0.9900000095367432, 0.9800000190734863]
    assert namespace["out"].tolist() == [[1.0, 2.0], [0.0, 0.0]]
    assert namespace["kept"].indices.asnumpy().tolist() == [0, 4]


def test_shipped_tuning_logs_are_tuner_records():
    logs = sorted(tuning_records.SHIPPED_LOGS.glob("*.jsonl"))
    assert logs, "tuning_logs/ is empty"
    for log in logs:
        lines = log.read_text().splitlines()
        parsed = [tuning_records.parse(line, str(log)) for line in lines]
        assert all(r is not None for r in parsed)
        for line in lines:
            raw = json.loads(line)
            assert {"versions", "date", "workload"} <= set(raw) and raw["versions"]["tvm"]
    cpu_logs = [log for log in logs if log.name.startswith("llvm-")]
    shipped = tuning_records.read(cpu_logs[0])[0]
    if shipped.target_matches(host_cpu()):  # this machine class: the shipped configs apply
        choice = choose(shipped.kernel, shipped.dtypes, None, None, shipped.bucket)
        assert choice.source == "shipped"  # the test run's cache has no user log
        assert choice.measured_on == host_cpu().label
