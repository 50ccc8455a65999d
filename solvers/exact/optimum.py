"""The optimum a comparison measures policies against, proven where the solver can.

``vbp compare`` and ``vbp sweep --optimum`` solve each instance once here, so their optimum is the
same quantity for the same instance: the fewest hosts (or the least cost) with
:func:`solvers.solve` (``"auto"``), or for a multi-cluster scenario, where tasks may stay
undeployed, the most tasks deployed (:func:`~solvers.exact.max_deployed.optimum`).
"""

from __future__ import annotations

from packing.errors import InfeasibleError
from packing.model.instance import Instance
from solvers.result import ProgressCallback, SolveResult


def deployed_optimum(inst: Instance, time_limit: float) -> SolveResult:
    """The proven maximum of deployable tasks (:func:`solvers.exact.max_deployed.optimum`), a ``SolveResult``.

    ``objective`` is the tasks deployed by the best placement and ``bound`` the proven maximum's
    upper bound (``objective_kind == "deployed"``, ``bound_kind == "upper"``); ``hosts`` counts
    the hosts that placement uses.
    """
    from solvers.exact.max_deployed import optimum

    opt = optimum(inst, time_limit=time_limit)
    hosts = int(len(set(int(h) for h in opt.placement.host_array(inst) if h >= 0)))
    return SolveResult("optimal" if opt.proven else "feasible", float(opt.deployed), float(opt.bound),
                       opt.placement, hosts, opt.method, opt.seconds, "deployed")


def comparison_optimum(inst: Instance, time_limit: float, seed: int = 0, *, deployed: bool | None = None,
                       callback: ProgressCallback | None = None, name: str | None = None) -> SolveResult:
    """Solve ``inst`` once for a comparison: ``"auto"``, or the most tasks deployed.

    ``vbp compare`` and ``vbp sweep --optimum`` both call this with the default ``deployed``, so a
    multi-cluster scenario has the same optimum (``objective_kind == "deployed"``) in both.

    Args:
        inst: the instance (solved offline: all containers at once).
        time_limit: solver budget in seconds.
        seed: solver seed.
        deployed: maximise tasks deployed (:func:`deployed_optimum`) instead of minimising hosts
            or cost; ``None`` (default): for a multi-cluster scenario
            (:func:`packing.generators.multicluster.is_multicluster`).
        callback: progress of the ``"auto"`` solve.
        name: the instance's name in the error (default: ``inst.name``).

    Raises:
        InfeasibleError: no placement of every container exists (proven; the reason names the
            app and the rule or resource), so there is no optimum to compare with.
    """
    from solvers import solve

    if deployed is None:
        from packing.generators.multicluster import is_multicluster

        deployed = is_multicluster(inst)
    if deployed:
        res = deployed_optimum(inst, time_limit)
    else:
        res = solve(inst, "auto", time_limit=time_limit, seed=seed, callback=callback)
    if res.status == "infeasible":
        raise InfeasibleError(inst.name if name is None else name,
                              "no placement of every container exists, so there is no optimum to "
                              f"compare with: {res.reason or 'proven by ' + res.method}")
    return res


__all__ = ["comparison_optimum", "deployed_optimum"]
