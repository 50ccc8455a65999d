"""The agent of docs/jobfusion-gcn.md's command against SJF and SJF-CP on fixed validation samples.

The documented command ``vbp train gcn DATA --out jf.pt --imitate sjf-cp --imitate-epochs 20 --episodes 0``
(every other setting its default: 8 samples of 10 jobs, 4 x 32c64g + 2 x 92c288g, Q = 4, nested carving
with large share 0.6, training seed 0) trains on a synthetic folder of DAG jobs that contend for the
containers (:func:`write_jobs`, about 30 decisions per sample). The agent, SJF and SJF-CP then run 12
validation samples of 10 of those jobs (seeds 7000-7011, drawn as ``vbp jobs compare`` draws them), each
on its own carving with the engine's seeded overheads.

What it pins: the docs' claim that the agent reproduces its teacher at the size it is trained on (mean
JCT within 0.5 % of SJF-CP's and no worse than SJF's over the samples, SJF-CP's result on all but one
sample), and every mean JCT to 0.01 s. A change of the engine, the overheads, the carving, the policies,
the features or the training moves these numbers: re-measure the docs' tables, then update the pins.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

from click.testing import CliRunner  # noqa: E402

from packing.dag.carving import parse_hosts, sample_jobs  # noqa: E402
from packing.dag.engine import DagEngine, Overheads  # noqa: E402
from packing.dag.generator import generate_dag_workload  # noqa: E402
from packing.dag.loader import MEM_GB_PER_UNIT, load_dag_folder  # noqa: E402
from packing.dag.model import Workload  # noqa: E402
from packing.dag.policy import run_dag  # noqa: E402
from policies.dag import make_dag_policy, resolve_dag_policy  # noqa: E402
from vbp.cli.train_jobfusion import DEFAULT_HOSTS, train_jobfusion  # noqa: E402
from vbp.jobfusion import carve_sample  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny networks: one torch thread

DOCUMENTED = ["--imitate", "sjf-cp", "--imitate-epochs", "20", "--episodes", "0"]
"""The options of the documented command (docs/jobfusion-gcn.md, SJF-CP)."""
VALIDATION_SEEDS = range(7000, 7012)
"""The validation samples (seeds 7000+, as ``bench_jobfusion_agent.py --validation`` numbers them)."""
DEMAND_SCALE = 12
"""Task demands of the synthetic jobs times this: few containers, so 10 jobs queue for them."""

SJF = [975.17, 912.47, 1040.36, 1109.05, 869.87, 1848.89, 1267.9, 1164.12, 1622.0, 1275.49, 988.86, 1250.79]
SJF_CP = [975.17, 912.47, 1040.36, 1071.82, 869.87, 1848.89, 1267.9, 1164.12, 1623.47, 1275.49, 959.42,
          1233.18]
AGENT = [975.17, 912.47, 1040.36, 1071.82, 879.72, 1848.89, 1267.9, 1164.12, 1623.47, 1275.49, 959.42,
         1233.18]
"""Mean JCT (s) of each validation sample: SJF, SJF-CP and the documented command's agent."""


def write_jobs(workload: Workload, path: Path, scale: float) -> None:
    """Write ``workload`` as a ``batch_task`` file the loader reads back (demands times ``scale``).

    Each stage is one row: the stage's DAG name, its task count, the job's arrival (rounded to a
    second) as start time and start + duration as end time, CPU in hundredths of a core and memory
    in trace units (:data:`packing.dag.loader.MEM_GB_PER_UNIT` GB).
    """
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["task_name", "instance_num", "job_name", "task_type", "status", "start_time", "end_time",
                    "plan_cpu", "plan_mem"])
        for job in workload.jobs:
            t0 = round(job.arrival)
            for s in job.stages:
                cpu, mem = s.demand[0] * scale * 100, s.demand[1] * scale / MEM_GB_PER_UNIT
                w.writerow([s.name, s.n_tasks, job.name, "", "Terminated", t0, t0 + round(s.duration),
                            f"{cpu:g}", f"{mem:.10g}"])


def mean_jcts(data: Path, model: Path, seeds: range) -> dict[str, list[float]]:
    """Mean JCT of SJF, SJF-CP and the agent in ``model`` on each seeded 10-job sample of ``data``."""
    w = load_dag_folder(str(data))
    pols = {"sjf": make_dag_policy("sjf"), "sjf-cp": make_dag_policy("sjf-cp"),
            "agent": resolve_dag_policy(str(model))}
    out: dict[str, list[float]] = {name: [] for name in pols}
    for s in seeds:
        sample = sample_jobs(w, 10, s, 10.0)
        cluster = carve_sample(sample, "constrained", q=4, hosts=parse_hosts(DEFAULT_HOSTS), seed=s,
                               carving="nested", large_share=0.6).cluster
        for name, pol in pols.items():
            assert pol.partition == "constrained"  # all three run on JobFusion's partition
            res, _ = run_dag(DagEngine(sample, cluster, overheads=Overheads(), seed=s), pol)
            out[name].append(round(res.mean_jct, 2))
    return out


def test_documented_agent_reproduces_sjf_cp_on_validation_samples(tmp_path: Path) -> None:
    data = tmp_path / "jobs"
    data.mkdir()
    jobs = generate_dag_workload(120, seed=1, max_stages=2, max_tasks=6, median_duration=300.0)
    write_jobs(jobs, data / "batch_task_synthetic.csv", DEMAND_SCALE)
    model = tmp_path / "jf.pt"
    r = CliRunner().invoke(train_jobfusion, [str(data), "--out", str(model), *DOCUMENTED, "--quiet"])
    assert r.exit_code == 0, r.output
    jct = mean_jcts(data, model, VALIDATION_SEEDS)
    sjf, cp, agent = jct["sjf"], jct["sjf-cp"], jct["agent"]
    # the docs' claim at the training size: the agent is its teacher, so it beats SJF where SJF-CP does
    assert sum(agent) <= 1.005 * sum(cp), (agent, cp)
    assert sum(agent) <= sum(sjf), (agent, sjf)
    assert sum(a == c for a, c in zip(agent, cp, strict=True)) >= len(cp) - 1, (agent, cp)
    # the numbers themselves: any change of engine, overheads, carving, policies or training shows here
    assert sjf == pytest.approx(SJF, abs=0.01)
    assert cp == pytest.approx(SJF_CP, abs=0.01)
    assert agent == pytest.approx(AGENT, abs=0.01)
