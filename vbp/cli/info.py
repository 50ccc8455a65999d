"""``vbp info``: describe an instance file, Kubernetes manifests, a ``.vbp`` file or a data-set folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from packing.model.describe import describe
from vbp.cli.common import data_options, load_any
from vbp.cli.formats import tagged

SHOWN_RESOURCES = 6
"""How many resource names the human output lists before "...". """


def _counts(m: dict[str, int]) -> str:
    return ", ".join(f"{n:,} {k}" for k, n in m.items()) or "none"


def render_k8s(d: dict[str, Any]) -> tuple[list[tuple[str, str]], list[str]]:
    """Rows and the ignored-term lines for an instance read from Kubernetes manifests."""
    k = d["k8s"]
    res = d["resource_names"]
    rows = [("objects", _counts(k["objects"])), ("skipped", _counts(k["skipped"]))]
    if k["daemonsets"]:
        rows.append(("daemonsets", f"{len(k['daemonsets']):,} ({', '.join(k['daemonsets'])})"))
        def vec(v: list[float]) -> str:
            return ", ".join(f"{x:g} {r}" for x, r in zip(v, res, strict=False))

        if k["overhead"]:
            per = "; ".join(f"{t}: {vec(v)}" for t, v in k["overhead"].items())
            rows.append(("per host", f"{per} (DaemonSets; taken off each host's capacity)"))
        else:
            rows.append(("per host", f"{vec(k['reserve'])} reserved on a host without labels "
                                     "or taints (DaemonSets)"))
    if not d["host_types"]:
        rows.append(("hosts", "none: manifests carry no hosts; give them with --hosts, e.g. "
                              "--hosts 16c64g:10 (cores, GiB, optional <n>gpu, count)"))
    if k.get("best_effort"):
        rows.append(("BestEffort", f"{len(k['best_effort']):,} apps request nothing, a pod slot "
                                   f"each ({', '.join(k['best_effort'])})"))
    rows.append(("ignored", f"{len(k['ignored']):,} soft or unmodelled terms"
                 + (" (listed below)" if k["ignored"] else "")))
    return rows, [f"  {x}" for x in k["ignored"]]


def render(d: dict[str, Any]) -> list[str]:
    """Aligned ``label  value`` lines for people."""
    names = d["resource_names"]
    shown = ", ".join(names[:SHOWN_RESOURCES]) + (", ..." if len(names) > SHOWN_RESOURCES else "")
    rows: list[tuple[str, str]] = [
        ("name", str(d["name"])),
        ("source", str(d["source"] or "instance file")),
        ("apps", f"{d['apps']:,}"),
        ("containers", f"{d['containers']:,}"),
        ("hosts", f"{d['hosts']:,} in {d['host_types']:,} host type"
                  f"{'' if d['host_types'] == 1 else 's'}"),
        ("resources", f"{d['resources']:,} ({shown})"),
        ("rules", f"{d['rules']:,} ({d['cross_rules']:,} between different apps)"),
        ("exclusions", f"{d['exclusions']:,}"),
    ]
    if d["gpus"] or d["gpu_resources"]:
        rows.append(("GPUs", f"{d['gpus']:,} cards ({', '.join(d['gpu_resources'])} per card)"))
    else:
        rows.append(("GPUs", "none"))
    if d["restricted_apps"] or d["labelled_host_types"]:
        rows.append(("selection", f"{d['restricted_apps']:,} apps restricted to some host types; "
                                  f"{d['labelled_host_types']:,} host types with labels or "
                                  "taints"))
    if d.get("domain_capped_apps") or d.get("spread_apps"):
        rows.append(("topology", f"{d['domain_capped_apps']:,} apps with domain caps; "
                                 f"{d['spread_apps']:,} apps with spread rules"))
    if d["initially_placed"]:
        rows.append(("initial", f"{d['initially_placed']:,} of {d['containers']:,} containers "
                                "placed"))
    else:
        rows.append(("initial", "none"))
    if d["requests"]:
        rows.append(("requests", f"{d['requests']:,} arrivals, {d['requests_with_end']:,} with "
                                 "a departure"))
    else:
        rows.append(("requests", "none"))
    extra: list[str] = []
    if "k8s" in d:
        more, extra = render_k8s(d)
        if not d["host_types"]:
            rows = [r for r in rows if r[0] != "hosts"]
        rows += more
    width = max(len(k) for k, _ in rows)
    return [f"{k.ljust(width)}  {v}" for k, v in rows] + extra


@click.command()
@click.argument("path", type=click.Path())
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (format vbp-info/1) instead of text.")
@data_options
def info(path: str, as_json: bool) -> None:
    """Describe PATH: an instance file, a .vbp file or a data-set folder."""
    inst = load_any(path, hosts_needed=False)
    d = describe(inst, str(Path(path)))
    if as_json:
        click.echo(json.dumps(tagged("info", d), indent=1))
    else:
        for line in render(d):
            click.echo(line)
