from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from vbp.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


def test_human_output_tianchi(capsys):
    code, out, err = run(capsys, "info", str(DATA / "tianchi_small"))
    assert code == 0 and err == ""
    lines = out.splitlines()
    rows = dict(line.split(None, 1) for line in lines)
    assert rows["apps"] == "26"
    assert rows["containers"] == "84"
    assert rows["hosts"] == "20 in 2 host types"
    assert rows["resources"] == "6 (cpu, mem, disk, P, M, PM)"
    assert rows["rules"] == "34 (8 between different apps)"
    assert rows["initial"] == "39 of 84 containers placed"
    # values start in one aligned column
    assert len({line.index(v) for line, v in zip(lines, rows.values(), strict=True)}) == 1


def test_human_output_openb_and_full_view(capsys):
    code, out, _ = run(capsys, "info", str(DATA / "openb_small"), "--nodes", "gpu")
    assert code == 0
    assert "GPUs        60 cards (gpu_milli per card)" in out
    assert "requests    51 arrivals, 51 with a departure" in out
    code, out, _ = run(capsys, "info", str(DATA / "tianchi_small"), "--view", "full")
    assert "resources   200 (cpu_t00, cpu_t01, cpu_t02, cpu_t03, cpu_t04, cpu_t05, ...)" in out


@pytest.mark.parametrize("rel, opts, expect", [
    ("tianchi_small", [], {"apps": 26, "containers": 84, "hosts": 20, "rules": 34,
                           "resources": 6}),
    ("tianchi_small", ["--view", "full"], {"resources": 200}),
    ("openb_small", [], {"apps": 33, "containers": 51, "hosts": 20, "gpus": 60, "requests": 51}),
    ("openb_small", ["--pods", "multigpu20"], {"containers": 10, "requests": 10}),
    ("caprara_toth_small/instances/CL_6_25_1.vbp", [], {"apps": 25, "containers": 25,
                                                        "hosts": 25, "rules": 0}),
    ("alibaba_v2018_small/machine_meta.csv", [], {"hosts": 6, "apps": 0}),
    ("alibaba_gpu_v2020_small", [], {"hosts": 14, "gpus": 72}),
])
def test_json(capsys, rel, opts, expect):
    code, out, _ = run(capsys, "info", str(DATA / rel), "--json", *opts)
    assert code == 0
    d = json.loads(out)
    assert {"apps", "containers", "hosts", "rules", "resources"} <= d.keys()
    assert {k: d[k] for k in expect} == expect


def test_missing_column_exits_2(capsys, tmp_path):
    src = DATA / "openb_small" / "csv" / "openb_node_list_all_node.csv"
    lines = src.read_text().splitlines()
    (tmp_path / "openb_node_list_all_node.csv").write_text(
        "\n".join(",".join(x.split(",")[:2] + x.split(",")[3:]) for x in lines) + "\n")
    code, out, err = run(capsys, "info", str(tmp_path / "openb_node_list_all_node.csv"))
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"error: {tmp_path / 'openb_node_list_all_node.csv'}: line 1, column memory_mib: "
        "missing column (the header has sn, cpu_milli, gpu, model)"]


def test_non_number_exits_2_without_traceback(tmp_path):
    p = tmp_path / "pai_machine_spec.csv"
    p.write_text("a,T4,96,512,2\nb,T4,many,512,2\n")
    r = subprocess.run([sys.executable, "-c", "from vbp.cli import main; main()", "info",
                        str(p)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr == (f"error: {p}: line 2, column cap_cpu: expected a number, got 'many'\n")
    assert "Traceback" not in r.stderr


def test_bad_option_for_kind_and_unknown_path(capsys, tmp_path):
    code, _, err = run(capsys, "info", str(DATA / "alibaba_v2018_small"), "--pods", "x")
    assert code == 2 and "pods: option does not apply" in err
    code, _, err = run(capsys, "info", str(tmp_path / "nothing"))
    assert code == 2 and "no such file or folder" in err


def test_info_imports_neither_solvers_nor_torch():
    code = ("import sys; from vbp.cli import main\n"
            "try:\n    main(['info', sys.argv[1], '--json'])\nexcept SystemExit:\n    pass\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('torch', 'solvers', 'ortools')]\n"
            "print(bad, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code, str(DATA / "openb_small")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "[]"


@pytest.mark.shared_data
def test_tianchi_full_json(capsys, shared_data):
    code, out, _ = run(capsys, "info", str(shared_data / "alibaba-tianchi-2018"), "--json")
    d = json.loads(out)
    assert (d["apps"], d["containers"], d["hosts"], d["rules"]) == (9338, 68224, 6000, 33416)


def test_data_set_options_reach_the_loader_in_every_command(capsys):
    code, out, _ = run(capsys, "info", str(DATA / "tianchi_small"), "--json", "--hosts", "64c128g:9",
                       "--rules", "cross")
    d = json.loads(out)
    assert code == 0 and d["hosts"] == 9 and d["resources"] == 2
    code, out, _ = run(capsys, "solve", str(DATA / "tianchi_small"), "--json", "--hosts", "64c128g",
                       "--rules", "none", "--time-limit", "5", "-q")
    assert code == 0 and json.loads(out)["status"] in ("optimal", "feasible")
    code, _, err = run(capsys, "simulate", "sigma", "--hosts", "64c128g")
    assert code == 2 and "--hosts" in err and "built-in" in err
    code, _, err = run(capsys, "compare", str(DATA / "openb_small"), "--rules", "cross")
    assert code == 2 and "rules" in err and "openb" in err
