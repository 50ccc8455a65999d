"""``auto``: presolve, first fit and cheap bounds, then CP-SAT, column generation and LNS.

0. Presolve (:func:`solvers.exact.reduce.reduce_instance`): resources that can never bind are dropped
   and interchangeable apps merged; everything below runs on the reduced instance and the
   placement is lifted back at the end (same hosts, same objective).
0b. Large instances (at least ``spread_min_work`` containers x hosts, no GPU cards: Tianchi
   2018 and alike) skip everything below: shaped host-by-host filling
   (:func:`solvers.search.spread.fill`) with several shape scales while time allows, the best kept
   (on fleets of several host types the *urgent* fillings first, which spread the apps whose
   per-host cap needs many of the hosts left; on one host type one filling, then the tabu
   search of stage 1b on sparse tables), then on one host type CP-SAT repacks of
   rule-tied neighbourhoods (:func:`solvers.exact.rule_lns.improve`, at most half the time left) and
   ejection-chain repacking (:func:`solvers.search.repack.repack`) for the rest of the budget;
   the bound is the cheap one. Every rule is kept by construction (the compiled predicates of
   :mod:`packing.feasibility.predicates`) and the result passes the checker.
1. First-fit decreasing (:func:`solvers.search.greedy.ffd`) and the cheap bounds
   (:func:`packing.feasibility.bounds.lower_bounds` / :func:`packing.feasibility.bounds.cost_lower_bound`).
   If they meet,
   the result is proven optimal at once (``proofs = {"solution": "ffd", "bound": "volume"}``, or
   whichever cheap bound met it). A cheap bound above the hosts proves infeasibility.
1b. On one host type without GPU cards (:func:`solvers.search.tabu.applicable`), with at least
   ``search_min_left`` seconds to go or the compiled parts cached: the exact cover by
   tight patterns at the cheap bound (:func:`solvers.exact.cover.solve_cover`, up to ``cover_share``
   of the budget); when no cover exists the bound rises by one host and the cover is tried again
   (this proves Caprara–Toth class 9 optima above the Gilmore–Gomory bound). Then tabu search
   from first fit towards that bound (:func:`solvers.search.tabu.tabu_pack`, up to ``tabu_share``).
   On small instances, before numba is in the process, the tabu search first runs as Python
   for a fraction of a second (``python_tabu``), before the cover: where it meets the bound,
   nothing compiled loads (a short ``vbp solve`` would otherwise spend a second loading numba).
1g. Before 1b, on instances of two resources or more whose containers are so
   large that few share a host (at most ``colgen_early_items`` per host of the cheap bound:
   Caprara–Toth classes 2, 3, 6, 7 and 8, where the cheap bounds are weak): a short tabu search
   towards the cheap bound (``colgen_early_tabu`` seconds, when first fit is within
   ``colgen_early_tabu_gap`` of it), then column generation (stage 3)
   with its budget, for the Gilmore–Gomory bound and a solution; 1b then aims at that bound.
2. When the aggregated CP-SAT model is small (at most ``cpsat_small`` count variables, see
   :func:`solvers.exact.cpsat.model_size`): a first, short CP-SAT run (``cpsat_first`` of the budget,
   at most ``cpsat_first_max`` s); the cheap bound is often tight and CP-SAT then proves it
   quickly, so column generation is skipped.
3. Column generation (:func:`solvers.exact.colgen.solve_colgen`, when importable and the objective is
   the instance's natural one, hosts or cost) for up to ``colgen_share`` of the remaining
   budget (``colgen_share_large`` on large models, where it comes first): its Gilmore–Gomory LP
   bound is far stronger than CP-SAT's own when several resources bind, and its rounding /
   restricted-master solution is a good start.
3b. Arc flow, where :func:`solvers.exact.arcflow.not_applicable` allows it (one resource, identical
   hosts, no rules, data that scale exactly to a capacity grid of at most
   :data:`solvers.exact.arcflow.MAX_GRID` units), on models of at most ``cpsat_large`` count variables
   (larger ones keep the tabu/LNS path) and with at least ``arcflow_min_left`` seconds to go.
   Its LP bound alone (at most ``arcflow_lp_max`` seconds) runs before 1b, after at most
   ``tabu_first`` seconds of tabu search (stage 1a, with at least ``arcflow_lp_min_left`` seconds
   to go): it is the Gilmore-Gomory bound in a
   second or two, often closes the gap at once, and gives 1b the bound to aim at. Then the whole
   model (:func:`solvers.exact.arcflow.solve_arcflow`) runs *beside* every later stage for the time
   left (stage 1e, ``arcflow_beside``: its CBC is a child process, so it takes the second core
   while the cover, tabu search, CP-SAT and column generation go on); whichever settles the
   instance first stops the others. Stage 1f follows at once, before 1b: the LP's item duals
   give every pattern a reduced cost, and a packing on ``U`` hosts (``U`` the bound) uses only
   patterns of reduced cost at most ``U`` minus the LP bound; these are enumerated and CBC (in a
   child process) looks for a set partition of the containers into at most ``U`` of them
   (:mod:`solvers.exact.arcflow_patterns`): a packing at the bound, or, when the enumeration was
   complete and no partition exists, the bound plus one host. It gets ``patterns_share`` of the
   time left when the enumeration is complete, ``patterns_incomplete_share`` (at most
   ``patterns_incomplete_max`` seconds, enumeration included) when there are too
   many such patterns (then only the smallest reduced costs are kept, and it can only find a
   packing). With ``arcflow_beside=False`` it runs in turn: right after 1b
   (stage 1d) for ``arcflow_early_share`` of the time left when the LP bound is above the cheap
   bound, else after column generation for up to ``arcflow_share`` of the time left. It is told
   the best bound and the best placement when it starts (its MIP looks only below it, so "no
   solution" proves the incumbent optimal), and the graph and its LP bound are built once per
   instance (:func:`solvers.exact.arcflow.solve_arcflow` keeps the last ones).
4. The rest of the budget improves the best solution with the best bound as a constraint: CP-SAT
   on the whole model (hinted with the best solution) when it has at most ``cpsat_large`` count
   variables, else large-neighbourhood search (:func:`solvers.exact.lns.improve`), which repacks a few
   hosts at a time with CP-SAT; where tabu search applies (and at least ``search_min_left``
   seconds are left), it gets the first half of that time.

The knobs named above are the fields of :class:`AutoSettings`, passed as ``settings=`` (the
defaults: :data:`DEFAULT_SETTINGS`). Every part's bound is valid on any data
(:mod:`solvers.exact.scaling`); when the reduction dropped a resource, the lifted placement is checked
on the original instance (first fit is returned otherwise, with the bound). A part's
"infeasible" is taken only while no checked placement is in hand (with one, it could only be a
solver fault, and it is ignored).

``proofs`` names which method found the returned solution and which proved the bound.

A stop request (``stop=``, :class:`solvers.base.StopFlag`) ends the running part as soon as it
can (CP-SAT within about 50 ms, the other parts at their next check) and skips every part still
to come: the result is the best solution and the best proven bound so far (never the bound of
an unfinished proof), ``"optimal"`` only if they meet, with ``interrupted=True``.
``"deployed"`` skips column generation and LNS (they do not support it).

The time limit binds every part: each gets what is left of the budget, none starts once it is
spent, and the arc-flow MIP beside the others is stopped at its end (``docs/solvers.md``, "The
time limit").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from packing.feasibility.checker import check
from packing.model.instance import Instance, Placement
from solvers.base import (
    DEFAULT_OPTIONS,
    EPS,
    Clock,
    SolveOptions,
    Stop,
    StopFlag,
    bound_infeasible,
    cheap_lower_bound,
    infeasible_result,
    notify,
    resolve_objective,
)
from solvers.exact.reduce import reduce_instance
from solvers.result import Objective, Progress, ProgressCallback, SolveResult
from solvers.search.greedy import ffd


@dataclass(frozen=True)
class AutoSettings:
    """The knobs of :func:`solve_auto` (pass one as ``settings=``; the defaults are measured).

    Attributes:
        cpsat_first: share of the budget for the first, short CP-SAT run.
        cpsat_first_max: at most this many seconds for the first CP-SAT run.
        colgen_share: share of the remaining budget column generation may use before CP-SAT
            takes over again.
        colgen_share_large: share of the budget column generation may use on large models (it
            runs first there).
        cpsat_small: models with at most this many count variables get the first, short CP-SAT
            run.
        cpsat_large: models with more count variables are improved by LNS instead of one CP-SAT
            model.
        tabu_share: share of the budget for the tabu search from first fit (stage 1b).
        cover_share: share of the budget for the exact cover by tight patterns (stage 1b).
        search_min_left: tabu search and the cover run only with this many seconds left, unless
            they run without compiling (compiled in this process, or in numba's disk cache for
            this source and CPU, :func:`solvers.search.jit.ready`): the compiled search costs about
            15 s to compile the first time it runs on a machine and about 0.5 s to load from
            numba's cache in a new process.
        margin: seconds kept back at the end for lifting and checking the result.
        arcflow: run the arc-flow stage (3b) where it applies; ``False`` gives the behaviour
            before it existed.
        arcflow_share: share of the time left the arc-flow stage may use.
        arcflow_min_left: the arc-flow stages run only with this many seconds left (the MIP
            runs in a child process and needs seconds to prove anything).
        arcflow_lp_max: at most this many seconds for the arc-flow LP bound (stages 1a, 1c).
        arcflow_lp_min_left: the arc-flow LP bound runs first (stage 1a) with this many seconds
            left (it runs in-process and keeps its time limit).
        tabu_first: where the arc-flow stages apply, seconds of tabu search towards the cheap
            bound before the LP bound of stage 1a (0: none).
        arcflow_early_share: share of the time left the arc-flow MIP gets right after stage 1b
            when the LP bound is above the cheap bound (stage 1d).
        arcflow_early_min_left: the early MIP (stages 1d and 1e), and the later one after 1d,
            run with this many seconds left.
        arcflow_beside: when stage 1d does not apply, run the arc-flow MIP beside the stages
            after 1b (stage 1e: CBC in its child process takes the second core) instead of after
            column generation.
        patterns: run stage 1f (the partition over the patterns of small reduced cost,
            :mod:`solvers.exact.arcflow_patterns`) after the LP bound of stage 1a.
        patterns_share: share of the time left stage 1f may use when it enumerated every
            pattern its proof needs.
        patterns_incomplete_share: share of the time left stage 1f may use when there were too
            many patterns (it may then find a packing but proves nothing); the enumerations
            that find the list incomplete count against it.
        patterns_incomplete_max: at most this many seconds for stage 1f when its list is
            incomplete.
        patterns_min_left: stage 1f runs only with this many seconds left (and with
            ``search_min_left`` when its enumeration would have to be compiled first).
        spread_margin: seconds kept back at the end of the large-scale path (stage 0b) for
            checking and lifting the placement (three checks of about 0.5 s each on Tianchi's
            68,224 containers on a loaded machine); ``margin`` when larger.
        spread_first_fit_share: the first filling hands the containers it has not placed to
            first fit this share of its time before the deadline, or
            ``spread_first_fit_per_container`` seconds per container when more (Tianchi's
            68,224 containers: that first fit takes 4 s, 11 s on a loaded machine), but at
            most ``spread_first_fit_max`` seconds and a quarter of its time (handed over
            early, first fit may leave containers of rule-bound apps unplaced), so that the
            first fit ends by the deadline. When the first filling leaves containers unplaced
            and less than twice ``spread_first_fit_per_container`` seconds per container are
            left (first fit of everything), the result is ``"unknown"`` with the cheap bound.
        spread_first_fit_per_container: see ``spread_first_fit_share``.
        spread_first_fit_max: see ``spread_first_fit_share``.
        spread_min_work: instances with at least this many containers x hosts (and within
            :func:`solvers.search.spread.applicable`) take the large-scale path (stage 0b) instead of
            the exact models: shaped host-by-host filling, then repacking.
        spread_tabu: where the tabu search applies (one host type, no GPU cards,
            :func:`solvers.search.tabu.applicable`), one filling only, then the tabu search from it
            towards the bound (Tianchi uniform fleet, cross rules: 5,106 -> 5,087, the memory
            volume bound, in about 70 s), then what follows with the time left.
        spread_rule_lns: on one host type, after the filling and before the ejection chains,
            free hosts by CP-SAT repacks of neighbourhoods with room for a host's load and the
            hosts its rules tie to it (:func:`solvers.exact.rule_lns.improve`), for
            ``min(spread_rule_lns_share * time left, spread_rule_lns_seconds)`` (Tianchi uniform
            fleet: 5,107 -> 5,101 hosts in 60 s; on the contest's two host types it freed none).
        spread_repack: after the filling, free hosts by ejection chains
            (:func:`solvers.search.repack.repack`) for the rest of the budget.
        spread_shapes: the shape scales the filling tries, in order, while time is left
            (:func:`solvers.search.spread.fill`); the best packing is kept.
        spread_share: a further filling starts only if it should end within this share of the
            budget (its predicted time: 1.2 times the longest so far).
        spread_urgent_shapes: on fleets of several host types these shape scales are tried
            first, with the *urgency* of :func:`solvers.search.spread.fill` (apps whose per-host cap
            needs a large share of the hosts left go first on every host); then
            ``spread_shapes`` without it.
        spread_urgency_threshold: the share of the hosts left from which an app is urgent.
        spread_blocks: on instances with time curves (the full Tianchi view) the fillings after
            the first run on a surrogate with this many runs of time points per curve
            (:func:`solvers.search.spread.surrogate`): tighter than the peaks, slower (Tianchi full view,
            one filling: 14 blocks 2,567 hosts in 54 s, 28 blocks 2,521 in 68 s, 49 blocks 2,491
            in 149 s).
        spread_balance: on instances with time curves where the tabu search does not apply
            (the full Tianchi view on the contest machines), with at least
            ``spread_balance_min_left`` seconds to go, first balance the containers over
            ``bound * (1 + s)`` open hosts for ``s`` in ``spread_balance_slack``
            (:func:`solvers.search.curves.balance_search`: each host's load curve follows the total
            demand's; what the open hosts do not take is settled on them by the tabu search,
            on the contest machines 2,319 hosts against 2,491 for one shaped filling) and keep
            the fewest hosts; the shaped fillings are then skipped and the tabu search runs on
            the host type the packing uses.
        colgen_early_items: on instances of two resources or more (one resource: the arc-flow
            LP bound of stage 1a is this bound) and the objective hosts, with at most this many
            containers per host of the cheap bound (large containers,
            few per host: the cheap bounds are weak and the Gilmore-Gomory bound strong),
            column generation runs before the cover and the tabu search of stage 1b (stage
            1g), with the budget it would get in stage 2, and stage 2 is skipped. Chosen on
            Caprara-Toth instances 1 and 2: classes 2, 3, 6, 7 and 8 (1.8-2.5 containers per
            host) prove there in a fraction of a second to a few seconds; on classes 1, 9 and
            10 (3-4 per host) column generation is slow and the cover or the tabu search fast.
        colgen_early_min: stage 1g needs at least this many containers (on fewer, the cover
            enumerates every pattern at once and settles the instance first).
        colgen_early_tabu: seconds of tabu search towards the cheap bound before stage 1g,
            when first fit is within ``colgen_early_tabu_gap`` (relative) of that bound (the
            bound may be reachable: Caprara-Toth classes 6 and 7; classes 2, 3 and 8, 10-25 %
            above it, go to column generation at once, without loading the compiled search).
        colgen_early_min_left: stage 1g runs with at least this many seconds left.
        python_tabu: before numba is in the process, on at most ``python_tabu_max``
            containers, every tabu search first runs as Python (the same moves, slower) for up
            to this many seconds, and in stage 1b before the cover; the compiled search (and
            the cover) only when it does not meet the bound. Importing numba and loading the
            compiled search cost about a second of CPU in a new process (every ``vbp solve``),
            while the Python search meets the bound in 0.03-0.35 s where it can on Caprara-Toth
            classes 1, 4, 6 and 7 at 50 and 100 containers (instances 1 and 2; CL_6_100_2: 0.75
            s) (0: always compiled).
        python_tabu_max: see ``python_tabu``.
    """

    cpsat_first: float = 0.3
    cpsat_first_max: float = 5.0
    colgen_share: float = 0.4
    colgen_share_large: float = 0.6
    cpsat_small: int = 30_000
    cpsat_large: int = 60_000
    tabu_share: float = 0.15
    cover_share: float = 0.15
    search_min_left: float = 20.0
    margin: float = 0.3
    arcflow: bool = True
    arcflow_share: float = 0.85
    arcflow_min_left: float = 20.0
    arcflow_lp_max: float = 10.0
    arcflow_lp_min_left: float = 3.0
    tabu_first: float = 2.0
    arcflow_early_share: float = 0.6
    arcflow_early_min_left: float = 3.0
    arcflow_beside: bool = True
    patterns: bool = True
    patterns_share: float = 0.6
    patterns_incomplete_share: float = 0.15
    patterns_incomplete_max: float = 20.0
    patterns_min_left: float = 3.0
    spread_min_work: int = 100_000_000
    spread_margin: float = 2.0
    spread_first_fit_share: float = 0.1
    spread_first_fit_per_container: float = 1e-4
    spread_first_fit_max: float = 15.0
    spread_repack: bool = True
    spread_tabu: bool = True
    spread_rule_lns: bool = True
    spread_rule_lns_share: float = 0.5
    spread_rule_lns_seconds: float = 120.0
    spread_shapes: tuple[float, ...] = (0.9, 0.85, 0.95, 0.8, 1.0, 0.875, 0.925, 0.825, 0.975,
                                        0.775, 0.75)
    spread_share: float = 0.85
    spread_blocks: int = 49
    spread_urgent_shapes: tuple[float, ...] = (0.85, 0.8, 0.875, 0.825, 0.9)
    spread_urgency_threshold: float = 0.1
    spread_balance: bool = True
    spread_balance_slack: tuple[float, ...] = (0.04, 0.05, 0.03)
    spread_balance_min_left: float = 240.0
    colgen_early_items: float = 2.75
    colgen_early_min: int = 20
    colgen_early_tabu: float = 0.5
    colgen_early_tabu_gap: float = 0.1
    colgen_early_min_left: float = 1.0
    python_tabu: float = 0.4
    python_tabu_max: int = 400


DEFAULT_SETTINGS = AutoSettings()
"""The settings :func:`solve_auto` uses when none are given."""


def solve_auto(
    instance: Instance,
    options: SolveOptions = DEFAULT_OPTIONS,
    *,
    settings: AutoSettings | None = None,
) -> SolveResult:
    """Solve with the best combination of methods (see the module docstring).

    Args:
        instance: the instance (solved offline: ``initial`` and request times are ignored).
        options: the common options (:class:`~solvers.base.SolveOptions`):

            - ``time_limit``: wall-time budget in seconds for everything.
            - ``workers``: worker threads for CP-SAT.
            - ``seed``: random seed passed to every method.
            - ``objective``: ``"hosts"``, ``"cost"``, ``"deployed"`` or ``None`` (auto).
            - ``callback``: receives :class:`Progress` events from every stage.
            - ``hint``: a placement to start from.

        settings: the knobs (:class:`AutoSettings`; ``None``: :data:`DEFAULT_SETTINGS`).
            - ``stop``: a stop request (:class:`solvers.base.StopFlag`): once set, the running part
                stops and no other part runs (see the module docstring).

    Returns:
        The result, with ``method == "auto"`` and ``proofs`` naming the parts.
    """
    time_limit, objective, hint, stop = (options.time_limit, options.objective, options.hint,
                                         options.stop)
    cfg = DEFAULT_SETTINGS if settings is None else settings
    clock = Clock(time_limit, stop)
    kind = resolve_objective(instance, objective)
    natural = kind == resolve_objective(instance, None)
    red = reduce_instance(instance)
    res = _solve(red.reduced, kind, natural, clock, options, red.project(hint),
                 cfg)
    if clock.stopped:
        res = dataclasses.replace(res, interrupted=True)
    if red.trivial or res.placement is None:
        return res
    lifted = red.lift(res.placement)
    assert lifted is not None
    if check(instance, lifted, require_all=kind != "deployed"):
        # a load within the float allowance of solvers.exact.scaling on a dropped resource: keep
        # first fit on the original instance, with the (valid) bound
        g = ffd(instance, kind)
        if not (g.complete or kind == "deployed"):
            return dataclasses.replace(res, status="unknown", objective=None, placement=None,
                                       hosts=None, seconds=clock.elapsed,
                                       proofs={"bound": res.proofs.get("bound", "auto")})
        ok = _closed(g.objective, res.bound, kind)
        return dataclasses.replace(res, status="optimal" if ok else "feasible",
                                   objective=g.objective, placement=g.placement(instance),
                                   hosts=_n_hosts(g.host_of), seconds=clock.elapsed,
                                   proofs={"solution": "ffd",
                                           "bound": res.proofs.get("bound", "auto")})
    return dataclasses.replace(res, placement=lifted, seconds=clock.elapsed)


def _solve(inst: Instance, kind: Objective, natural: bool, clock: Clock, opts: SolveOptions,
           hint: Placement | None, cfg: AutoSettings) -> SolveResult:
    """:func:`solve_auto` on the (reduced) instance; ``natural``: the objective is the default.

    ``opts`` are the caller's options (``workers``, ``seed`` and ``callback`` are used; the time
    is ``clock``'s, the placement to start from ``hint``, on the reduced instance).
    """
    workers, seed, callback = opts.workers, opts.seed, opts.callback
    time_limit = clock.time_limit
    history: list[Progress] = []

    def relay(p: Progress) -> None:
        notify(callback, history, clock, p.objective, p.bound, p.method, p.message)

    if _large(inst, kind, cfg):
        large = _solve_large(inst, kind, clock, opts, history, cfg)
        if large is not None:
            return large
        # first fit at this size takes about twice the large path's first-fit reserve (Tianchi:
        # 12 s on a loaded machine): without that time left, no placement within the limit
        left_large = clock.time_limit - clock.elapsed - cfg.margin
        if left_large < 2 * cfg.spread_first_fit_per_container * inst.n_containers:
            lb0, lb0_name = cheap_lower_bound(inst, kind)
            return SolveResult("unknown", None, lb0, None, None, "auto", clock.elapsed, kind,
                               {"bound": lb0_name}, "no placement within the time limit",
                               tuple(history))
    greedy = ffd(inst, kind)
    lb, lb_name = cheap_lower_bound(inst, kind)
    if bound_infeasible(inst, kind, lb):
        return infeasible_result(inst, kind, "auto", clock, lb_name, history)
    done = greedy.complete or kind == "deployed"
    notify(callback, history, clock, greedy.objective if done else None, lb, "ffd", "first fit")
    if done and _closed(greedy.objective, lb, kind):
        return SolveResult("optimal", greedy.objective, greedy.objective, greedy.placement(inst),
                           _n_hosts(greedy.host_of), "auto", clock.elapsed, kind,
                           {"solution": "ffd", "bound": lb_name}, None, tuple(history))

    from solvers.exact.model_size import model_size

    best: SolveResult | None = None  # best solution so far (any stage)
    run_stop: Stop | None = clock.stop  # the main stages' stop; also set when stage 1e proves
    background: _Background | None = None  # stage 1e, the arc-flow MIP beside the others
    bound_by = lb_name
    # the best known placement, handed to every later stage (so none recomputes first fit)
    hint_pl = hint if hint is not None else (greedy.placement(inst) if greedy.complete else None)
    upper = greedy.objective if greedy.complete and kind != "deployed" else None
    size = model_size(inst, kind, upper)
    use_colgen = kind != "deployed" and natural and _colgen_available()

    def placed() -> bool:
        # a checked placement is in hand: an "infeasible" from a part would be a solver fault
        return best is not None or greedy.complete or kind == "deployed"

    def take(r: SolveResult) -> None:
        nonlocal best, lb, bound_by, hint_pl
        if r.status == "infeasible":  # never a bound while a placement is in hand
            return
        if kind == "deployed":
            if r.bound < lb - EPS:
                lb, bound_by = r.bound, r.proofs.get("bound", r.method)
        elif r.bound > lb + EPS:
            lb, bound_by = r.bound, r.proofs.get("bound", r.method)
        if r.placement is not None and r.objective is not None and (
                best is None or _better(r.objective, best.objective, kind)):
            if r.proofs.get("solution") == "hint" and hint is None:
                # the placement handed to the stage came back: first fit's (nothing better yet)
                r = dataclasses.replace(r, proofs={**r.proofs, "solution": "ffd"})
            best = r
            hint_pl = r.placement

    def closed() -> bool:
        return best is not None and best.objective is not None and _closed(
            best.objective, lb, kind)

    def finish() -> SolveResult:
        collect(wait=True)
        if best is None or best.objective is None:
            if greedy.complete or kind == "deployed":
                return SolveResult("optimal" if _closed(greedy.objective, lb, kind) else
                                   "feasible", greedy.objective, lb, greedy.placement(inst),
                                   _n_hosts(greedy.host_of), "auto", clock.elapsed, kind,
                                   {"solution": "ffd", "bound": bound_by}, None,
                                   tuple(history))
            return SolveResult("unknown", None, lb, None, None, "auto", clock.elapsed, kind,
                               {"bound": bound_by}, None, tuple(history))
        value = best.objective
        ok = _closed(value, lb, kind)
        return SolveResult("optimal" if ok else "feasible", value, value if ok else lb,
                           best.placement, best.hosts, "auto", clock.elapsed, kind,
                           {"solution": best.proofs.get("solution", best.method),
                            "bound": bound_by}, None, tuple(history))

    def infeasible(r: SolveResult) -> SolveResult:
        if background is not None:
            background.result(stop=True)
        return SolveResult("infeasible", None, r.bound, None, None, "auto", clock.elapsed,
                           kind, {"bound": r.proofs.get("bound", r.method)}, r.reason,
                           tuple(history))

    def left() -> float:
        if clock.stopped:
            return 0.0
        return clock.time_limit - clock.elapsed - cfg.margin

    def threads() -> int:
        # the cores the main stages may use: ``workers`` less the one the arc-flow MIP beside
        # them takes (its CBC child process) while it runs
        return max(1, workers - (1 if background is not None else 0))

    def collect(wait: bool = False) -> None:
        # the arc-flow MIP running beside the other stages (stage 1e): its result once it has
        # ended; with ``wait`` now (stopped at once when the gap is closed, else at its end)
        nonlocal background
        if background is None or not (wait or background.done()):
            return
        # never past the budget: at its end the MIP is stopped (its bound so far stands)
        r = background.result(stop=closed(), until=clock.deadline - cfg.margin)
        background = None
        if r is not None:
            take(r)
            relay(Progress(clock.elapsed, r.objective, r.bound, "arcflow",
                           "arc-flow MIP (beside the other stages)"))

    def cpsat(budget: float) -> SolveResult:
        # only solutions better than the best so far are of use: ``below`` cuts the rest, and
        # proves the best optimal when nothing is below it (CP-SAT, and the pandas OR-Tools
        # imports with it, load only when a stage needs them)
        from solvers.exact.cpsat import solve_cpsat

        below = best.objective if best is not None and kind != "deployed" else None
        return solve_cpsat(inst, SolveOptions(time_limit=budget, workers=threads(), seed=seed,
                                              objective=kind, callback=relay, hint=hint_pl,
                                              stop=run_stop),
                           lower_bound=lb if kind != "deployed" else None, start=greedy,
                           below=below)

    def colgen() -> SolveResult | None:
        # column generation (stage 1g or 2) for its share of the time left; the result to return
        # when it proves the instance infeasible (no placement in hand), else None
        from solvers.exact.colgen import solve_colgen

        share = cfg.colgen_share if size <= cfg.cpsat_small else cfg.colgen_share_large
        cg = solve_colgen(inst, SolveOptions(time_limit=share * left(), workers=threads(),
                                             seed=seed, objective=kind, callback=relay,
                                             hint=hint_pl, stop=run_stop))
        if cg.status == "infeasible" and not placed():
            return infeasible(cg)
        take(cg)
        return None

    # stage 1a: the arc-flow LP bound first (the Gilmore-Gomory bound in a second or two): the
    # cover and the tabu search then aim at it, and an instance whose LP bound is above the cheap
    # bound goes to the arc-flow MIP right after them
    use_arcflow = (cfg.arcflow and natural and kind != "deployed" and size <= cfg.cpsat_large
                   and _arcflow_applies(inst, kind))
    cheap_lb = lb
    lp_done = False
    if use_arcflow and cfg.tabu_first > 0 and greedy.complete and hint_pl is not None:
        from solvers.search.tabu_scope import applicable

        # a short tabu search first: where the cheap bound is reachable it gets there in well
        # under a second, before the LP bound's second or two
        if applicable(inst) and left() > 0 and _tabu_may_run(inst, left(), cfg):
            r = _tabu(inst, kind, clock, opts.replace(time_limit=min(cfg.tabu_first, left())),
                      lb, hint_pl, relay, cfg)
            if r is not None:
                take(r)
                if closed():
                    return finish()
    if use_arcflow and left() >= cfg.arcflow_lp_min_left:
        from solvers.exact.arcflow import solve_arcflow

        take(solve_arcflow(inst, SolveOptions(time_limit=min(cfg.arcflow_lp_max, left()),
                                              workers=threads(), seed=seed, objective=kind,
                                              callback=relay, hint=hint_pl, stop=clock.stop),
                           lower_bound=lb, mip=False))
        lp_done = True
        if closed():
            return finish()
    # stage 1e: the arc-flow MIP runs beside every stage below (its CBC is a child process, so it
    # takes the second core): whichever settles the instance first ends the others
    beside = False
    if (use_arcflow and cfg.arcflow_beside and workers >= 2 and greedy.complete and not closed()
            and left() >= cfg.arcflow_early_min_left and not clock.stopped):
        from solvers.exact.arcflow import solve_arcflow

        proved = StopFlag()
        arc_stop = _EitherStop(clock.stop, None)
        bg_budget, bg_hint, bg_lb = left(), hint_pl, lb

        def arc() -> SolveResult:
            r = solve_arcflow(inst, SolveOptions(time_limit=bg_budget, workers=1, seed=seed,
                                                 objective=kind, hint=bg_hint, stop=arc_stop),
                              lower_bound=bg_lb)
            if r.status in ("optimal", "infeasible"):
                proved.set()
            return r

        background = _Background(arc, arc_stop)
        run_stop = _EitherStop(clock.stop, proved)
        beside = True  # no second MIP after 1b or after column generation
    # stage 1f: the partition over the patterns of small reduced cost at the best bound (the
    # LP's duals): it finds the packing or raises the bound where the gap to the LP is small
    if (use_arcflow and lp_done and cfg.patterns and greedy.complete and not closed()
            and left() >= cfg.patterns_min_left and not clock.stopped and _patterns_warm(left(), cfg)):
        r = _patterns(inst, kind, clock, lb, cfg.patterns_share * left(),
                      min(cfg.patterns_incomplete_share * left(), cfg.patterns_incomplete_max),
                      run_stop, relay)
        if r is not None:
            take(r)
            if closed() or (best is None and _closed(greedy.objective, lb, kind)):
                return finish()
        collect()
        if closed():
            return finish()
    # stage 1g: containers so large that few share a host (the cheap bounds are weak there):
    # column generation's LP bound (and its solution) first, after a short tabu search towards
    # the cheap bound; the cover and the tabu search of 1b then aim at the stronger bound
    colgen_early = False
    if (use_colgen and inst.n_resources >= 2 and kind == "hosts" and greedy.complete and not closed()
            and cfg.colgen_early_min <= inst.n_containers <= cfg.colgen_early_items * max(1.0, lb)
            and left() >= cfg.colgen_early_min_left and not clock.stopped):
        from solvers.search.tabu_scope import applicable

        if (cfg.colgen_early_tabu > 0 and hint_pl is not None and applicable(inst)
                and greedy.objective <= (1 + cfg.colgen_early_tabu_gap) * lb
                and _tabu_may_run(inst, left(), cfg)):
            # in a new process the Python search alone: column generation comes next anyway
            r = _tabu(inst, kind, clock, opts.replace(time_limit=min(cfg.colgen_early_tabu, left())),
                      lb, hint_pl, relay, cfg, compiled=not _python_first(inst, cfg))
            if r is not None:
                take(r)
                if closed():
                    return finish()
        proof = colgen()
        if proof is not None:
            return proof
        colgen_early = True
        if closed() or (best is None and _closed(greedy.objective, lb, kind)):
            return finish()
    # stage 1b: tabu search and the exact cover by tight patterns, towards the best bound
    if kind != "deployed" and greedy.complete:
        from solvers.search.tabu_scope import applicable

        if applicable(inst) and left() > 0 and (_python_first(inst, cfg)
                                                or left() >= cfg.search_min_left or _search_warm()):
            r = _search_to_bound(inst, kind, clock, lb, opts.replace(workers=threads()), hint_pl,
                                 relay, cfg)
            if r is not None:
                take(r)
                if closed() or (best is None and _closed(greedy.objective, lb, kind)):
                    return finish()
    collect()
    if closed():
        return finish()
    # stage 1c: the arc-flow LP bound, when stage 1a had no time for it
    if use_arcflow and not lp_done and left() >= cfg.arcflow_min_left:
        from solvers.exact.arcflow import solve_arcflow

        take(solve_arcflow(inst, SolveOptions(time_limit=min(cfg.arcflow_lp_max, left()),
                                              workers=threads(), seed=seed, objective=kind,
                                              callback=relay, hint=hint_pl, stop=clock.stop),
                           lower_bound=lb, mip=False))
        if closed():
            return finish()
    # stage 1d: the LP bound is above the cheap bound (the cheap bound was not the optimum's
    # witness): the arc-flow MIP is the exact stage that settles these fastest, so it comes next
    arcflow_early = False
    if (use_arcflow and not beside and lb > cheap_lb + EPS and left() >= cfg.arcflow_early_min_left
            and not clock.stopped):
        from solvers.exact.arcflow import solve_arcflow

        arcflow_early = True
        take(solve_arcflow(inst, SolveOptions(time_limit=cfg.arcflow_early_share * left(),
                                              workers=threads(), seed=seed, objective=kind,
                                              callback=relay, hint=hint_pl, stop=clock.stop),
                           lower_bound=lb))
        if closed():
            return finish()
    # stage 1: on small models a short CP-SAT run settles the easy cases (tight cheap bound)
    if ((size <= cfg.cpsat_small or not use_colgen) and not clock.stopped
            and clock.elapsed < clock.time_limit):
        budget = left()
        if use_colgen:
            budget = min(max(cfg.cpsat_first * time_limit, min(0.6 * time_limit, 2.0)),
                         cfg.cpsat_first_max, budget)
        r = cpsat(max(0.05, budget))
        if r.status == "infeasible" and not placed():
            return infeasible(r)
        take(r)
        if r.status == "optimal" and best is r:
            bound_by = "cpsat" if r.proofs.get("bound") == "cpsat" else bound_by
            return finish()
        collect()
        if closed():
            return finish()
    # stage 2: column generation for the strong LP bound and a solution from its columns
    if use_colgen and not colgen_early and left() > 0.2:
        proof = colgen()
        if proof is not None:
            return proof
        collect()
        if closed():
            return finish()
    # stage 2b (3b above): one resource on a small integer grid: the arc-flow model proves the hard cases
    collect()
    if closed():
        return finish()
    if (use_arcflow and not beside
            and left() >= (cfg.arcflow_early_min_left if arcflow_early else cfg.arcflow_min_left)):
        from solvers.exact.arcflow import solve_arcflow

        r = solve_arcflow(inst, SolveOptions(time_limit=cfg.arcflow_share * left(),
                                             workers=threads(), seed=seed, objective=kind,
                                             callback=relay, hint=hint_pl, stop=clock.stop),
                          lower_bound=lb)
        take(r)
        if closed():
            return finish()
    # stage 3: the rest of the budget improves the best solution against the best bound
    collect()
    if closed():
        return finish()
    if left() > 0.2 and (size <= cfg.cpsat_large or kind == "deployed"):
        r = cpsat(left())
        if r.status == "infeasible" and not placed():
            return infeasible(r)
        take(r)
        if r.status == "optimal" and best is not None and best.objective is not None:
            if not _closed(best.objective, lb, kind):
                lb, bound_by = best.objective, "cpsat"
    elif left() > 0.5:
        from solvers.search.tabu_scope import applicable

        if (applicable(inst) and best is not None and best.placement is not None
                and _tabu_may_run(inst, left(), cfg)):
            r = _tabu(inst, kind, clock, opts.replace(time_limit=0.5 * left(), workers=threads()), lb,
                      best.placement, relay, cfg)
            if r is not None:
                take(r)
                if closed():
                    return finish()
        _improve_lns(inst, kind, clock, opts.replace(time_limit=left(), workers=threads()), lb, best,
                     greedy, take, relay)
    return finish()


class _EitherStop:
    """A stop request set when ``a`` or ``b`` is, or by :meth:`set` (the :class:`Stop` protocol)."""

    def __init__(self, a: Stop | None, b: Stop | None) -> None:
        self.a, self.b = a, b
        self.own = StopFlag()

    def set(self) -> None:
        """Request the stop."""
        self.own.set()

    def is_set(self) -> bool:
        """Whether any of the three is set."""
        return (self.own.is_set() or (self.a is not None and self.a.is_set())
                or (self.b is not None and self.b.is_set()))

    def wait(self, timeout: float | None = None) -> bool:
        """Poll every 50 ms until set or ``timeout`` seconds pass; whether it was set."""
        import time

        end = None if timeout is None else time.perf_counter() + timeout
        while not self.is_set():
            if end is not None and time.perf_counter() >= end:
                return False
            time.sleep(0.05)
        return True


class _Background:
    """``run()`` in a daemon thread; :meth:`result` stops it (through ``stop``) if asked and joins."""

    def __init__(self, run: Callable[[], SolveResult], stop: _EitherStop) -> None:
        import threading

        self.stop = stop
        self.out: list[SolveResult] = []
        self.thread = threading.Thread(target=lambda: self.out.append(run()), name="vbp-auto-arcflow",
                                       daemon=True)
        self.thread.start()

    def done(self) -> bool:
        """Whether ``run()`` has returned (or raised)."""
        return not self.thread.is_alive()

    def result(self, stop: bool, until: float | None = None) -> SolveResult | None:
        """Its result (None if it raised); with ``stop`` it is asked to stop first.

        With ``until`` (on :func:`time.perf_counter`'s scale) it runs at most until then and is
        asked to stop if it has not ended (its result is then what it had at the stop).
        """
        import time

        if not stop and until is not None:
            self.thread.join(max(0.0, until - time.perf_counter()))
            stop = self.thread.is_alive()
        if stop:
            self.stop.set()
        self.thread.join()
        return self.out[0] if self.out else None


def _large(inst: Instance, kind: Objective, cfg: AutoSettings) -> bool:
    """Whether the instance takes the large-scale path (stage 0b)."""
    if kind == "deployed" or inst.n_containers * inst.n_hosts < cfg.spread_min_work:
        return False
    from solvers.search.spread import applicable

    return applicable(inst)


def _solve_large(inst: Instance, kind: Objective, clock: Clock, opts: SolveOptions,
                 history: list[Progress], cfg: AutoSettings) -> SolveResult | None:
    """Stage 0b: the cheap bound, shaped filling (:func:`solvers.search.spread.fill`), then repacking.

    The first filling (peak surrogate) places what it has not placed by the deadline by first
    fit; a stop request ends it (the result is then ``"unknown"`` with the cheap bound). Later
    fillings (other shape scales and, on time curves, the finer surrogate of ``spread_blocks``,
    while the predicted time fits in ``spread_share`` of the budget) and the repacking stop at
    the time limit.
    Returns ``None`` when the first filling leaves containers unplaced (the fleet is too small
    for it; the usual path, first fit included, takes over then).
    """
    from solvers.base import objective_value
    from solvers.search.repack import repack
    from solvers.search.spread import URGENCY, fill, surrogate, work_arrays

    seed, callback = opts.seed, opts.callback

    lb, lb_name = cheap_lower_bound(inst, kind)
    if bound_infeasible(inst, kind, lb):
        return infeasible_result(inst, kind, "auto", clock, lb_name, history)
    margin = max(cfg.margin, cfg.spread_margin)  # the checks take seconds at this size
    deadline = clock.start + clock.time_limit - margin
    best: np.ndarray | None = None
    value = 0.0
    took = 0.0
    timed = surrogate(inst) is not None
    urgent = len(inst.host_types) > 1 and len(cfg.spread_urgent_shapes) > 0
    plain = [(1, s, 0.0) for s in cfg.spread_shapes]
    if urgent:  # several host types: spread the capped apps while hosts are left
        u = URGENCY
        variants = [(1, s, u) for s in cfg.spread_urgent_shapes[:1]]
        if timed:
            variants += [(cfg.spread_blocks, s, u) for s in cfg.spread_urgent_shapes]
        variants += [(1, s, u) for s in cfg.spread_urgent_shapes[1:]] + plain
    else:
        variants = plain[:1]
        if timed:  # time curves: finer surrogates see more of them (slower, tighter)
            variants += [(cfg.spread_blocks, s, 0.0) for s in cfg.spread_shapes]
        variants += plain[1:]
    from solvers.search.tabu_scope import applicable as tabu_applicable

    # (compiling the tabu search the first time on a machine takes about 15 s)
    tabu = (cfg.spread_tabu and tabu_applicable(inst)
            and (clock.time_limit - clock.elapsed >= cfg.search_min_left or _search_warm(cover=False)))
    if tabu:  # one filling: the tabu search makes far more of the time than further fillings
        variants = variants[:1]
    dims = {b: work_arrays(inst, True, b)[0].shape[1] for b in {v[0] for v in variants}}
    took_by: dict[int, float] = {}
    if (timed and not tabu and cfg.spread_balance and cfg.spread_balance_slack
            and clock.time_limit - clock.elapsed >= cfg.spread_balance_min_left):
        from solvers.search.curves import balance_search

        def balanced(h: np.ndarray, n: int) -> None:
            notify(callback, history, clock, objective_value(inst, h, kind), lb, "balance",
                   f"balanced load curves ({n} hosts)")

        best = balance_search(inst, lb, deadline=clock.start + clock.time_limit * cfg.spread_share,
                              kind=kind, slack=cfg.spread_balance_slack, stop=clock.stop,
                              on_found=balanced, seed=seed)
        if best is not None:
            value = objective_value(inst, best, kind)
            variants = []  # the shaped fillings need far more hosts on time curves
    for blocks, scale, urgency in variants:
        if best is not None:
            guess = took_by.get(blocks, took * (dims[blocks] / dims[1]) ** 0.7)
            if (clock.elapsed + 1.2 * guess > clock.time_limit * cfg.spread_share
                    or _closed(value, lb, kind)):
                continue
        t0 = clock.elapsed
        # the first filling finishes by first fit rather than giving up at the deadline; that
        # first fit takes seconds at this size (Tianchi: 4 s, 11 s on a loaded machine), so it
        # starts that much before the deadline
        window = deadline - (clock.start + t0)
        reserve = min(max(cfg.spread_first_fit_share * window,
                          cfg.spread_first_fit_per_container * inst.n_containers),
                      cfg.spread_first_fit_max, 0.25 * window)
        h = fill(inst, kind=kind, deadline=deadline - reserve if best is None else deadline,
                 stop=clock.stop, shape_scale=scale, blocks=blocks, finish_late=best is None,
                 urgency=urgency, urgency_threshold=cfg.spread_urgency_threshold)
        took_by[blocks] = max(took_by.get(blocks, 0.0), clock.elapsed - t0)
        took = took_by.get(1, took)
        if h is None and best is None and clock.stopped:
            return SolveResult("unknown", None, lb, None, None, "auto", clock.elapsed, kind,
                               {"bound": lb_name}, None, tuple(history))
        if h is None or (h == -1).any():
            if best is None:
                break
            continue
        v = objective_value(inst, h, kind)
        if best is None or _better(v, value, kind):
            best, value = h, v
            notify(callback, history, clock, value, lb, "spread",
                   f"shaped host-by-host filling (shape x{scale:g}, {blocks} block(s)"
                   f"{', urgency' if urgency else ''})")
    if best is None:
        return None
    host_of = best
    pl = Placement.from_arrays(inst, host_of, None)
    if check(inst, pl, require_all=True):  # pragma: no cover - built by the feasibility code
        return None
    method = "spread" if variants else "balance"

    def progress(stage: str) -> Callable[[float], None]:
        def on(hosts: float) -> None:
            notify(callback, history, clock, None, lb, stage, f"{hosts:g} hosts")
        return on

    def run_tabu(start: np.ndarray, left: float) -> np.ndarray | None:
        from solvers.search.tabu import tabu_pack

        # its last step, the checker, takes about half a second at Tianchi's size
        return tabu_pack(inst, start, target=_hosts_for(inst, kind, lb), on_improve=progress("tabu"),
                         options=opts.replace(time_limit=left - 1.0, stop=clock.stop))

    def run_rule_lns(start: np.ndarray, left: float) -> np.ndarray | None:
        from solvers.exact.rule_lns import improve

        return improve(inst, start, time_limit=min(cfg.spread_rule_lns_share * left,
                                                   cfg.spread_rule_lns_seconds),
                       kind=kind, seed=seed, lower_bound=lb, callback=progress("rule-lns"),
                       stop=clock.stop)

    def run_repack(start: np.ndarray, left: float) -> np.ndarray | None:
        target = _hosts_for(inst, kind, lb) if len(inst.host_types) == 1 else 0
        return repack(inst, start, time_limit=left, target=target, seed=seed,
                      on_improve=progress("repack"), stop=clock.stop)

    def run_tabu_type(start: np.ndarray, left: float) -> np.ndarray | None:
        from solvers.search.curves import improve as improve_on_type
        from solvers.search.tabu import PATIENCE

        # its chunks and checks run late on a loaded machine: 3% of the time left in reserve;
        # ten times the usual patience (Tianchi full view: 2,359 -> 2,336 hosts in 300 s, 2,338
        # with the usual patience and restarts)
        return improve_on_type(inst, start, target=_hosts_for(inst, kind, lb),
                               time_limit=0.97 * left - 1.0, seed=seed,
                               on_improve=progress("tabu"), stop=clock.stop,
                               patience=10 * PATIENCE)

    stages: list[tuple[str, float, Callable[[np.ndarray, float], np.ndarray | None]]] = []
    if tabu:
        stages.append(("tabu", 1.0, run_tabu))
    elif method == "balance" and cfg.spread_tabu and kind == "hosts":
        stages.append(("tabu", 1.0, run_tabu_type))  # on the one host type the packing uses
    if cfg.spread_rule_lns and len(inst.host_types) == 1:
        stages.append(("rule-lns", 2.0, run_rule_lns))
    if cfg.spread_repack:
        stages.append(("repack", 0.5, run_repack))
    for stage, least, run in stages:  # each from the best so far, with the time left
        left = clock.time_limit - clock.elapsed - margin
        if left <= least or _closed(value, lb, kind):
            continue
        if stage == "tabu" and left < cfg.search_min_left and not _search_warm(cover=False):
            continue  # it would spend the time compiling
        found = run(host_of, left)
        if found is None:
            continue
        v2 = objective_value(inst, found, kind)
        if _better(v2, value, kind):
            host_of, value, method = found, v2, stage
            pl = Placement.from_arrays(inst, host_of, None)
            notify(callback, history, clock, value, lb, stage, "freed hosts")
    ok = _closed(value, lb, kind)
    return SolveResult("optimal" if ok else "feasible", value, value if ok else lb, pl,
                       _n_hosts(host_of), "auto", clock.elapsed, kind,
                       {"solution": method, "bound": lb_name}, None, tuple(history))


def _improve_lns(inst: Instance, kind: Objective, clock: Clock, opts: SolveOptions, lb: float,
                 best: SolveResult | None, greedy: object, take: object,
                 relay: ProgressCallback) -> None:
    """Stage 3 on large models: LNS from the best solution; ``take`` receives the result.

    ``opts.time_limit`` is LNS's budget; its ``seed`` and ``workers`` go to LNS.
    """
    from solvers.base import objective_value
    from solvers.exact.lns import improve

    if best is not None and best.placement is not None:
        start = best.placement
    elif getattr(greedy, "complete", False):
        start = greedy.placement(inst)  # type: ignore[attr-defined]
    else:
        return
    t0 = clock.elapsed

    def on_improve(value: float) -> None:
        relay(Progress(clock.elapsed, value, lb, "lns", "repacked a neighbourhood"))

    pl = improve(inst, start, kind=kind, lower_bound=lb, on_improve=on_improve,
                 options=opts.replace(stop=clock.stop))
    host_of = pl.host_array(inst)
    value = objective_value(inst, host_of, kind)
    if callable(take):
        take(SolveResult("feasible", value, lb, pl, _n_hosts(host_of), "lns",
                         clock.elapsed - t0, kind, {"solution": "lns"}, None, ()))


def _search_warm(cover: bool = True) -> bool:
    """Whether the tabu search (and the cover's enumeration) run without compiling first."""
    from solvers.exact import cover as cov
    from solvers.search import tabu

    return tabu.warm() and (not cover or cov.warm())


def _hosts_for(inst: Instance, kind: Objective, value: float) -> int:
    """Hosts a bound ``value`` of the objective allows (one host type with one cost)."""
    unit = inst.host_types[0].cost if kind == "cost" else 1.0
    return int(np.ceil(value / unit - EPS))


def _python_first(inst: Instance, cfg: AutoSettings) -> bool:
    """Whether the tabu search first runs as Python (its twin, :func:`_tabu`).

    Only before numba is in the process (then the compiled search costs about a second of
    loading) and on at most ``cfg.python_tabu_max`` containers.
    """
    from solvers.search.jit import numba_loaded

    return cfg.python_tabu > 0 and inst.n_containers <= cfg.python_tabu_max and not numba_loaded()


def _tabu_may_run(inst: Instance, left: float, cfg: AutoSettings) -> bool:
    """Whether :func:`_tabu` may start with ``left`` seconds to go (nothing to compile first)."""
    return _python_first(inst, cfg) or left >= cfg.search_min_left or _search_warm(cover=False)


def _tabu(inst: Instance, kind: Objective, clock: Clock, opts: SolveOptions, lb: float,
          start: Placement, relay: ProgressCallback, cfg: AutoSettings = DEFAULT_SETTINGS,
          compiled: bool = True, python: bool | None = None) -> SolveResult | None:
    """Tabu search from ``start`` towards the bound ``lb`` for ``opts.time_limit`` seconds.

    Where :func:`_python_first` holds, the search first runs as Python (the twin of
    :mod:`solvers.search.tabu`, :func:`solvers.search.jit.python_twin`: the same moves without
    numba's second of loading) for up to ``cfg.python_tabu`` seconds; when that does not reach
    the bound, the compiled search goes on from the best packing found, with the time left (if
    ``compiled``, and when it needs no compiling or has ``cfg.search_min_left`` seconds) for the
    rest of ``opts.time_limit``, not counting the loading of its code.
    ``python=False`` skips the Python run (the caller checked that the compiled search may run);
    ``None``: :func:`_python_first`.
    """
    from solvers.base import objective_value

    t0 = clock.elapsed
    target = _hosts_for(inst, kind, lb)

    def on_improve(hosts: int) -> None:
        unit = inst.host_types[0].cost if kind == "cost" else 1.0
        relay(Progress(clock.elapsed, hosts * unit, lb, "tabu", "emptied a host"))

    host_of: np.ndarray | None = None
    python = _python_first(inst, cfg) if python is None else python
    if python:
        from solvers.search.jit import python_twin

        twin = python_twin("solvers.search.tabu")
        with np.errstate(over="ignore"):  # its xorshift64* wraps around, as the compiled one does
            host_of = twin.tabu_pack(inst, start.host_array(inst), target=target,
                                     on_improve=on_improve, options=opts.replace(
                                         time_limit=min(cfg.python_tabu, opts.time_limit),
                                         stop=clock.stop))
    left = opts.time_limit - (clock.elapsed - t0)
    if compiled and (host_of is None or _n_hosts(host_of) > target) and not clock.stopped:
        if python:  # the compiled search, if it needs no compiling (or has the time for it)
            compiled = (clock.time_limit - clock.elapsed - cfg.margin >= cfg.search_min_left
                        or _search_warm(cover=False))
            if compiled:  # loading its code (a second in a new process) does not count
                from solvers.search.tabu import load

                loading = clock.elapsed
                load()
                left = min(left, clock.time_limit - clock.elapsed - cfg.margin)
                t0 += clock.elapsed - loading
    else:
        compiled = False
    if compiled and left > 0.05:
        from solvers.search.tabu import tabu_pack

        found = tabu_pack(inst, start.host_array(inst) if host_of is None else host_of,
                          target=target, on_improve=on_improve,
                          options=opts.replace(time_limit=left, stop=clock.stop))
        host_of = found if found is not None else host_of
    if host_of is None:
        return None
    value = objective_value(inst, host_of, kind)
    return SolveResult("feasible", value, lb, Placement.from_arrays(inst, host_of, None),
                       _n_hosts(host_of), "tabu", clock.elapsed - t0, kind,
                       {"solution": "tabu"}, None, ())


def _search_to_bound(inst: Instance, kind: Objective, clock: Clock, lb: float, opts: SolveOptions,
                     start: Placement | None, relay: ProgressCallback,
                     cfg: AutoSettings = DEFAULT_SETTINGS) -> SolveResult | None:
    """Stage 1b: the exact cover at the bound, then tabu search from ``start`` towards it.

    The cover runs first because it is quick either way on the instances it suits (it finds the
    packing or proves the bound infeasible in about a second on Caprara–Toth classes 9 and 10),
    and the tabu search then knows the raised bound, so it stops as soon as it meets it. Where
    :func:`_python_first` holds, the tabu search first runs as Python for up to
    ``cfg.python_tabu`` seconds (:func:`_tabu`): when it meets the bound, neither the cover nor
    the compiled search loads (the cover's enumeration is compiled, and its CBC runs in a child
    process). The cover and the compiled search run only when they need no compiling or have
    ``cfg.search_min_left`` seconds.

    Returns the best solution found (``None`` if nothing improved on ``start``) with the bound:
    raised by one host each time the cover proves that no packing on the bound's number of hosts
    exists (then the cover is tried again one host higher, within its share).
    """
    from solvers.base import objective_value

    if start is None:
        return None
    budget = cfg.tabu_share * clock.time_limit
    best = None
    unit = inst.host_types[0].cost if kind == "cost" else 1.0
    target = _hosts_for(inst, kind, lb)
    start_hosts = _n_hosts(start.host_array(inst))
    bound = lb
    t0 = clock.elapsed
    end = t0 + cfg.cover_share * clock.time_limit
    python = _python_first(inst, cfg)
    if python and target < start_hosts and not clock.stopped:
        best = _tabu(inst, kind, clock, opts.replace(time_limit=min(budget, clock.left())), bound,
                     start, relay, cfg, compiled=False)
        if best is not None and best.hosts is not None and best.hosts <= target:
            return best
    if python and not (clock.time_limit - clock.elapsed - cfg.margin >= cfg.search_min_left
                       or _search_warm()):
        return best  # the compiled parts would spend the time compiling
    from solvers.exact.cover import load, solve_cover

    if python:
        load()  # loading its code (a second in a new process) does not count against its share
    end = clock.elapsed + cfg.cover_share * clock.time_limit  # the cover's share from now

    while True:
        have = best.hosts if best is not None and best.hosts is not None else start_hosts
        if have <= target:
            break  # the bound (possibly raised by the cover) meets the best solution
        if clock.elapsed >= end - 0.05 or clock.stopped:
            break
        cov = solve_cover(inst, target, time_limit=min(end - clock.elapsed, clock.left()),
                          workers=opts.workers, seed=opts.seed, stop=clock.stop)
        if cov.host_of is not None:
            value = objective_value(inst, cov.host_of, kind)
            relay(Progress(clock.elapsed, value, bound, "cover", "exact cover by tight patterns"))
            return SolveResult("optimal", value, bound,
                               Placement.from_arrays(inst, cov.host_of, None),
                               _n_hosts(cov.host_of), "cover", clock.elapsed - t0, kind,
                               {"solution": "cover", "bound": "cover"}, None, ())
        if not cov.infeasible:
            break
        target += 1  # no packing on ``target`` hosts: the bound rises by one host
        bound = max(bound, target * unit)
        relay(Progress(clock.elapsed, None, bound, "cover", "no exact cover: bound + 1"))
    have = best.hosts if best is not None and best.hosts is not None else start_hosts
    if target < have and not clock.stopped:
        more = _tabu(inst, kind, clock, opts.replace(time_limit=min(budget, clock.left())), bound,
                     start if best is None or best.placement is None else best.placement, relay,
                     cfg, python=False)
        best = more if more is not None else best
    if bound <= lb:
        return best
    if best is not None:
        return dataclasses.replace(best, bound=bound, proofs={"solution": "tabu",
                                                                    "bound": "cover"})
    return SolveResult("unknown", None, bound, None, None, "cover", clock.elapsed - t0,
                       kind, {"bound": "cover"}, None, ())


def _patterns_warm(left: float, cfg: AutoSettings) -> bool:
    """Whether stage 1f may run: its enumeration is compiled, or there is time to compile it.

    Compiling it the first time on a machine takes a few seconds (8 s measured on a busy
    machine); numba's cache makes later processes load it in well under a second.
    """
    from solvers.exact.arcflow_patterns import warm

    return warm() or left >= cfg.search_min_left


def _patterns(inst: Instance, kind: Objective, clock: Clock, lb: float, budget: float,
              incomplete_budget: float, stop: Stop | None,
              relay: ProgressCallback) -> SolveResult | None:
    """Stage 1f: :func:`solvers.exact.arcflow_patterns.solve_patterns` on the bound's hosts.

    Returns the packing it found (with the bound ``lb``), or the bound raised by one host when
    it proves that the bound's hosts hold no packing, or ``None``.
    """
    from solvers.base import objective_value
    from solvers.exact.arcflow import MAX_ARCS, cached_graph, cached_lp_solution, checked_placement
    from solvers.exact.arcflow_patterns import solve_patterns

    t0 = clock.elapsed
    g = cached_graph(inst)
    if g.n_arcs == 0 or g.n_arcs > MAX_ARCS:  # stage 1a had no LP either
        return None
    sol = cached_lp_solution(g, max(0.1, budget))
    if sol is None or budget <= 0.1:
        return None
    unit = inst.host_types[0].cost if kind == "cost" else 1.0
    hosts = _hosts_for(inst, kind, lb)
    res = solve_patterns(g, sol[1], hosts, time_limit=budget, incomplete_limit=incomplete_budget,
                         stop=stop)
    if res.counts is not None:
        pl = checked_placement(inst, res.counts)
        if pl is not None:
            host_of = pl.host_array(inst)
            value = objective_value(inst, host_of, kind)
            relay(Progress(clock.elapsed, value, lb, "patterns",
                           f"partition over {res.patterns} small-reduced-cost patterns"))
            return SolveResult("feasible", value, lb, pl, _n_hosts(host_of), "patterns",
                               clock.elapsed - t0, kind, {"solution": "patterns"}, None, ())
    if res.infeasible:
        bound = (hosts + 1) * unit
        relay(Progress(clock.elapsed, None, bound, "patterns",
                       f"no partition over {res.patterns} patterns: bound + 1"))
        return SolveResult("unknown", None, bound, None, None, "patterns", clock.elapsed - t0,
                           kind, {"bound": "patterns"}, None, ())
    return None


def _arcflow_applies(inst: Instance, kind: Objective) -> bool:
    """Whether the arc-flow model applies (:func:`solvers.exact.arcflow.not_applicable`)."""
    try:
        from solvers.exact.arcflow import not_applicable
    except ImportError:  # pragma: no cover - OR-Tools ships CBC
        return False
    return not_applicable(inst, kind) is None


def _colgen_available() -> bool:
    """Whether column generation's libraries (OR-Tools, numba) are installed; nothing is imported."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("ortools", "numba"))


def _better(value: float, other: float | None, kind: str) -> bool:
    if other is None:
        return True
    return value > other + EPS if kind == "deployed" else value < other - EPS


def _closed(value: float, bound: float, kind: str) -> bool:
    if kind == "deployed":
        return value >= bound - EPS
    return value <= bound + EPS * max(1.0, abs(bound))


def _n_hosts(host_of: np.ndarray) -> int:
    """Hosts a placement uses (``host_of``: host per container, negative when unplaced)."""
    # bincount, not np.unique: the first np.unique in a process imports numpy.ma (20 ms)
    return int(np.count_nonzero(np.bincount(host_of[host_of >= 0])))
