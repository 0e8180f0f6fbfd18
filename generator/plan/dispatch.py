"""MultiKueue replayed offline: the manager's Kueue and each worker's Kueue are
simulate.Simulators, joined by what Kueue's MultiKueue controllers do. The steps
of the model (ours, research note §5.6), each with the Kueue v0.17.4 source it
follows (pkg/controller/admissionchecks/multikueue/workload.go unless named):

1. The manager admits with its own queues: quota, priority, preemption (its
   scheduler, simulate.py). The MultiKueue check stays Pending, so a Workload
   with quota is `reserved` there.
2. Each reserved Workload is copied to the nominated workers
   (nominateAndSynchronizeWorkers :712): every reachable worker of the
   MultiKueueConfig (all at once, remoteClientsForAC :253; v0.12.3 always), or
   the incremental dispatcher's rounds (workloaddispatcher/incrementaldispatcher.go:
   3 at a time :180, in sorted name order :173, a new round after 5 minutes
   without admission :44; v0.19.2: incrementalDispatcherConfig.stepSize :51 and
   the MultiKueueConfig's order :179).
3. Each worker admits its copy as a standalone Kueue would, in the LocalQueue of
   the same name and namespace (docs tasks/manage/setup_multikueue), against its
   own queues, preemption included; every worker that can preempt for it does
   (KEP 8303), orchestrated preemption is not modelled.
4. The winner is the copy admitted first (bestMatchByCondition :115 on Admitted
   :462; v0.12.3 FirstReserving on QuotaReserved); the other copies are deleted
   and the manager's check turns Ready, 'The workload got reservation on "<worker>"'
   (:1009). Copies admitted in the same round are a tie, which Kueue breaks by
   map order; the plan prefers a copy admitted without preemption, then the
   MultiKueueConfig's order, and says so (a modelling choice).
5. The winner's copy evicted sends the Workload back to the manager's queue
   (check Retry, :395, MultiKueueRedoAdmissionOnEvictionInWorker) and it is
   dispatched again; on v0.12.3 only when the worker does not admit it again at
   once, after workerLostTimeout (inferred from K12 reconcileGroup). A manager
   Workload without quota loses every copy (:346).
6. A lost worker gets no copies; what runs there goes back to the manager's
   queue after workerLostTimeout, "Reserving remote lost" (:517); reconnected,
   its copies stay where the manager still wants them and are deleted elsewhere.
7. A Workload no reachable worker can ever admit keeps its manager quota and is
   reported `never` with each worker's reason (e2e T16's end state, KEP 9988's
   wl3).

Rounds (manager cycles, copies, worker cycles, winners) repeat until nothing
changes. Not modelled: requeue backoff after a Retry, orchestrated preemption,
external dispatchers, the time a preemption takes beyond the tie rule."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace

from . import results, simulate
from .group import Group
from .simulate import ADMITTED, FINISHED, NEVER, RESERVED, Simulator, State

MAX_ROUNDS = 500
MANAGER_TAG = "multikueue"


@dataclass
class Remote:
    """What MultiKueue tracks for one manager Workload that holds quota."""
    check: str
    workers: tuple[str, ...]                                   # the MultiKueueConfig's, in order
    nominated: list[str] = field(default_factory=list)
    rounds: int = 0                                            # incremental rounds so far
    copies: set[str] = field(default_factory=set)
    admitted: dict[str, tuple[int, bool]] = field(default_factory=dict)  # worker -> (round, by preemption)
    winner: str | None = None


class GroupSim:
    def __init__(self, group: Group):
        self.group = group
        v = group.kueue_version
        self.manager = Simulator(group.manager.cluster, kueue_version=v)
        self.workers = {w.name: Simulator(w.cluster, kueue_version=v) for w in group.workers}
        for check in group.dispatches:
            self.manager.workloads.check_defaults[check] = "Pending"
        self.remotes: dict[str, Remote] = {}
        self.copies: dict[str, set[str]] = {w: set() for w in self.workers}
        self.lost: set[str] = set()
        self.round = 0
        self.events: list[str] = []
        self.notes: list[str] = list(group.notes)
        self._preempting: dict[str, set[str]] = {}
        self._ties: set[str] = set()

    # ------------------------------------------------------------ the clusters
    def sim(self, cluster: str | None) -> Simulator:
        return self.manager if cluster in (None, self.group.manager.name) else self.workers[cluster]

    def begin_step(self) -> None:
        self.events = []
        for s in self._sims():
            s.begin_step()

    def _sims(self):
        yield self.manager
        yield from self.workers.values()

    def _drain(self) -> None:
        """Move each simulator's new events into the group's, tagged with its cluster."""
        for name, s in [(self.group.manager.name, self.manager), *self.workers.items()]:
            self.events += [f"[{name}] {e}" for e in s.store.events]
            s.store.events = []

    def _say(self, text: str) -> None:
        self._drain()
        self.events.append(f"[{MANAGER_TAG}] {text}")

    # ------------------------------------------------------------ scenario actions of a group
    def worker_lost(self, name: str) -> None:
        self.lost.add(name)
        self._say(f"worker {name} is unreachable: nothing more is dispatched there; after workerLostTimeout "
                  f"({self.group.settings.worker_lost_timeout}) the Workloads running there go back to the "
                  "manager's queue")
        for key, rem in list(self.remotes.items()):
            if rem.winner == name:
                self._retry(key, rem, "Reserving remote lost", f"runs on {name}, which is unreachable")

    def worker_reconnected(self, name: str) -> None:
        self.lost.discard(name)
        self._say(f"worker {name} is reachable again")
        self._prune()
        for key in sorted(self.copies[name]):
            rem = self.remotes.get(key)
            if rem is not None and rem.winner is None and name in rem.nominated:
                # Reconciled: the copy there takes part again; if it was admitted while the worker was
                # out of reach, it was admitted before any other copy.
                rem.copies.add(name)
                if self.workers[name].states[key].holds_quota:
                    rem.admitted[name] = (0, False)
            elif rem is None or rem.winner != name:
                self._drop_copy(name, key, "not wanted by the manager any more")

    # ------------------------------------------------------------ settling
    def settle(self) -> None:
        for _ in range(MAX_ROUNDS):
            self.round += 1
            self._preempting = {}
            self.manager.settle()
            self._drain()
            changed = self._manager_evictions()
            changed |= self._sync_down()
            for w in self.workers.values():
                w.settle()
                self._drain()
            changed |= self._worker_evictions()
            changed |= self._sync_up()
            self._drain()
            if not changed and not self._next_round():
                return
        self.notes.append(f"the MultiKueue simulation stopped after {MAX_ROUNDS} rounds without settling")

    def _manager_evictions(self) -> bool:
        """A manager Workload that lost its quota loses its copies (reconcileGroup step 1)."""
        changed = False
        for key, _ in self.manager.store.evictions:
            rem = self.remotes.pop(key, None)
            if rem is not None:
                changed |= self._drop_copies(key, rem, "lost its quota on the manager")
        self.manager.store.evictions = []
        return changed

    def _prune(self) -> None:
        """Forget copies a scenario step deleted on a reachable worker: MultiKueue makes them again
        (or, for the winner's, sends the Workload back to the manager's queue)."""
        for name, w in self.workers.items():
            if name in self.lost:
                continue
            for key in [k for k in self.copies[name] if k not in w.states]:
                self.copies[name].discard(key)
                rem = self.remotes.get(key)
                if rem is not None and rem.winner != name:
                    rem.copies.discard(name)
                    rem.admitted.pop(name, None)

    def _sync_down(self) -> bool:
        """Copies to the nominated workers of every manager Workload that holds quota."""
        self._prune()
        changed = False
        for key, rem in list(self.remotes.items()):
            m = self.manager.states.get(key)
            if m is None or not m.holds_quota:
                why = "deleted on the manager" if m is None else \
                    "finished" if m.status == FINISHED else "lost its quota on the manager"
                changed |= self._drop_copies(key, rem, why)
                del self.remotes[key]
        for key, m in list(self.manager.states.items()):
            check = self.group.queues.get(m.cluster_queue or "")
            if check is None or not m.holds_quota:
                continue
            if key not in self.remotes:
                self.remotes[key] = Remote(check, self.group.dispatches[check].clusters)
                self._nominate(key, self.remotes[key])
            rem = self.remotes[key]
            if rem.winner is None:
                changed |= self._copy_out(key, m, rem)
        return changed

    def _copy_out(self, key: str, m: State, rem: Remote) -> bool:
        targets = []
        for w in rem.nominated:
            if w in rem.copies or w in self.lost:
                continue
            if key in self.workers[w].states and key not in self.copies[w]:
                self.notes.append(f"{key}: worker {w} has a Workload of the same name that is not the manager's "
                                  "copy; Kueue cannot create the copy there")
                continue
            targets.append(w)
        if targets:
            self._say(f"{key} copied to {', '.join(targets)}")
        for w in targets:
            self.workers[w].workloads.add_copy(copy.deepcopy(m.wl))
            self.copies[w].add(key)
            rem.copies.add(w)
        return bool(targets)

    def _nominate(self, key: str, rem: Remote) -> bool:
        """The next nomination round: every worker at once, or the incremental dispatcher's next
        batch (nominations are never withdrawn while the Workload keeps its quota)."""
        order = self._order(rem.workers)
        left = [w for w in order if w not in rem.nominated]
        if not left:
            return False
        s = self.group.settings
        batch = left if s.dispatcher == "all-at-once" or self.group.kueue_version == "v0.12.3" else left[:s.step_size]
        rem.nominated += batch
        rem.rounds += 1
        if len(batch) < len(order) or rem.rounds > 1:
            self._say(f"{key}: incremental dispatch round {rem.rounds} nominates {', '.join(batch)}"
                      + (" (no nominated worker admitted it within 5 minutes)" if rem.rounds > 1 else ""))
        return True

    def _order(self, workers: tuple[str, ...]) -> list[str]:
        # v0.17.4 sorts the names (incrementaldispatcher.go slices.Sort); v0.19.2 keeps the
        # MultiKueueConfig's order (MultiKueueIncrementalDispatcherRespectConfigOrder, beta, on).
        if self.group.gate("MultiKueueIncrementalDispatcherRespectConfigOrder"):
            return list(workers)
        return sorted(workers)

    def _next_round(self) -> bool:
        """Nothing moves any more: time passes, and each Workload that no nominated worker admits
        gets the incremental dispatcher's next round."""
        if self.group.settings.dispatcher != "incremental" or self.group.kueue_version == "v0.12.3":
            return False
        moved = False
        for key, rem in self.remotes.items():
            if rem.winner is None and self._nominate(key, rem):
                moved = True
        return moved

    def _worker_evictions(self) -> bool:
        changed = False
        for name, w in self.workers.items():
            for victim, by in w.store.evictions:
                if by is not None:
                    self._preempting.setdefault(name, set()).add(by)
                rem = self.remotes.get(victim)
                if rem is None or rem.winner != name or victim not in self.copies[name] or name in self.lost:
                    continue
                st = w.states.get(victim)
                if self.group.gate("MultiKueueRedoAdmissionOnEvictionInWorker"):
                    self._retry(victim, rem, f"Workload evicted on worker cluster {name!r}, resetting for "
                                             "re-admission", f"evicted on {name}")
                    changed = True
                elif st is None or not st.holds_quota:
                    # v0.12.3 (inferred from reconcileGroup): no copy reserves any more, so the manager
                    # waits workerLostTimeout, then retries.
                    self._retry(victim, rem, "Reserving remote lost", f"evicted on {name} and not re-admitted there")
                    changed = True
            w.store.evictions = []
        return changed

    def _retry(self, key: str, rem: Remote, message: str, why: str) -> None:
        self._say(f"{key} {why}: the manager releases its quota and queues it again ({message})")
        self.remotes.pop(key, None)
        self._drop_copies(key, rem, "sent back to the manager's queue")
        self.manager.workloads.set_workload_check(key, rem.check, "Retry", message)
        self.manager.store.evictions = [e for e in self.manager.store.evictions if e[0] != key]

    def _sync_up(self) -> bool:
        changed = False
        wait_admitted = self.group.gate("MultiKueueWaitForWorkloadAdmitted")
        for key, rem in list(self.remotes.items()):
            if rem.winner is not None:
                changed |= self._follow_winner(key, rem)
                continue
            cands = []
            for w in sorted(rem.copies - self.lost, key=rem.workers.index):
                st = self.workers[w].states.get(key)
                if st is not None and (st.status == ADMITTED if wait_admitted else st.holds_quota):
                    first = rem.admitted.setdefault(w, (self.round, key in self._preempting.get(w, set())))
                    cands.append((first, rem.workers.index(w), w))
            if cands:
                self._choose(key, rem, sorted(cands))
                changed = True
        return changed

    def _choose(self, key: str, rem: Remote, cands: list) -> None:
        (first, _, winner) = cands[0]
        rem.winner = winner
        same = [w for (when, _, w) in cands if when[0] == first[0]]
        why = "admitted there first"
        if len(same) > 1:
            self._ties.add(key)
            why = (f"admitted in the same round by {', '.join(same)}: a tie, which Kueue breaks by map order; "
                   "the plan prefers a worker that did not preempt, then the MultiKueueConfig's order "
                   "(a modelling choice)")
        preempting = [w for (when, _, w) in cands if when[1]]
        if len(preempting) > 1:
            why += f"; {', '.join(preempting)} all preempted for it, as Kueue does without orchestrated preemption " \
                   "(KEP 8303)"
        others = [f"{w}: {self._copy_text(w, key)}" for w in rem.workers if w in rem.copies - {winner} - self.lost]
        self._say(f"{key} runs on {winner} ({why})" + (f"; the other copies are removed ({'; '.join(others)})"
                                                       if others else ""))
        for w in sorted(rem.copies - {winner} - self.lost):
            self._drop_copy(w, key, f"{winner} runs it")
        rem.copies &= {winner} | self.lost
        self.manager.store.events.append(f'{key}: AdmissionCheck {rem.check} Ready: The workload got reservation on "{winner}"')
        self.manager.workloads.set_workload_check(key, rem.check, "Ready")

    def _follow_winner(self, key: str, rem: Remote) -> bool:
        w = rem.winner
        assert w is not None, "called for Workloads with a winner"
        if w in self.lost:
            return False
        st = self.workers[w].states.get(key)
        if st is None:
            self._retry(key, rem, "Reserving remote lost", f"is gone from {w}")
            return True
        if st.status == FINISHED:
            self.workers[w].workloads.drop(key, "finished; removed by MultiKueue")
            self.copies[w].discard(key)
            self.remotes.pop(key)
            self.manager.workloads.complete(key, f"completed on {w}")
            return True
        return False

    def _copy_text(self, worker: str, key: str) -> str:
        st = self.workers[worker].states[key]
        if st.status == NEVER:
            return st.reason if st.reason.startswith("can never") else f"can never be admitted: {st.reason}"
        return f"{st.status}: {st.reason}" if st.reason else st.status

    def _drop_copies(self, key: str, rem: Remote, why: str) -> bool:
        gone = [w for w in sorted(rem.copies) if w not in self.lost and key in self.copies[w]]
        for w in gone:
            self._drop_copy(w, key, why)
        return bool(gone)

    def _drop_copy(self, worker: str, key: str, why: str) -> None:
        self.workers[worker].workloads.drop(key, f"copy removed: {why}")
        self.copies[worker].discard(key)

    # ------------------------------------------------------------ results
    def snapshot(self, index: int, title: str, action: str) -> simulate.StepResult:
        g = self.group
        mres = simulate.snapshot(self.manager, index, title, action)
        wres = {name: simulate.snapshot(w, index, title, action) for name, w in self.workers.items()}
        wrows = {name: {r.workload: r for r in res.rows} for name, res in wres.items()}
        rows = [self._manager_row(r, wrows) for r in mres.rows]
        for name, res in wres.items():
            rows += [replace(r, workload=f"{name}:{r.workload}", cluster=name, home=name)
                     for r in res.rows if r.workload not in self.copies[name]]
        rows.sort(key=lambda r: (simulate.STATES.index(r.state), -r.priority, results._natural(r.workload)))
        usage = [replace(u, cluster=g.manager.name) for u in mres.usage]
        cubes = list(mres.cubes)
        for name, res in wres.items():
            usage += [replace(u, cluster=name) for u in res.usage]
            cubes += [replace(c, flavor=f"{name}/{c.flavor}") for c in res.cubes]
        return simulate.StepResult(index, title, action, tuple(self.events), tuple(rows), tuple(usage), tuple(cubes))

    def _manager_row(self, r: simulate.Row, wrows: dict) -> simulate.Row:
        mname = self.group.manager.name
        m = self.manager.states[r.workload]
        if self.group.queues.get(m.cluster_queue or "") is None:
            return replace(r, cluster=mname if m.holds_quota else None, home=mname)
        rem = self.remotes.get(r.workload)
        if rem is None or not m.holds_quota:
            return replace(r, home=mname)
        held = ", ".join(sorted(set(m.flavors.values())))
        copies = tuple((w, self._copy_state(w, r.workload, wrows)) for w in rem.workers)
        if rem.winner is not None:
            return self._running_row(r, rem.winner, held, copies, wrows)
        reasons = [f"{w}: {self._copy_reason(w, r.workload, rem, wrows)}" for w in rem.workers]
        reachable = [w for w in rem.workers if w not in self.lost]
        if reachable and all(self._copy_state(w, r.workload, wrows) == NEVER for w in reachable):
            who = "no worker" if len(reachable) == len(rem.workers) else "no reachable worker"
            return replace(r, state=NEVER, detail=f"holds manager quota in {held} but {who} can ever admit it: "
                           + "; ".join(reasons), home=mname, copies=copies)
        return replace(r, state=RESERVED, detail=f"quota reserved on the manager in {held}; waiting for a worker "
                       "to admit it: " + "; ".join(reasons), home=mname, copies=copies)

    def _running_row(self, r: simulate.Row, winner: str, held: str, copies: tuple, wrows: dict) -> simulate.Row:
        """A manager Workload whose copy runs on a worker: admitted there."""
        wr = wrows[winner].get(r.workload)
        detail = f"runs on {winner}: {wr.detail if wr else 'unreachable'}; manager quota in {held}"
        if r.workload in self._ties:
            detail += " (tie between workers broken by the plan's rule)"
        return replace(r, state=ADMITTED, detail=detail, flavors=dict(wr.flavors) if wr else {},
                       cluster=winner, home=self.group.manager.name, copies=copies)

    def _copy_state(self, worker: str, key: str, wrows: dict) -> str:
        if worker in self.lost:
            return "unreachable"
        row = wrows[worker].get(key) if key in self.copies[worker] else None
        return row.state if row else "none"

    def _copy_reason(self, worker: str, key: str, rem: Remote, wrows: dict) -> str:
        if worker in self.lost:
            return "unreachable"
        if worker not in rem.nominated:
            return "not nominated yet (incremental dispatch)"
        row = wrows[worker].get(key) if key in self.copies[worker] else None
        if row is None:
            return "no copy"
        if row.state == NEVER:
            return row.detail if row.detail.startswith("can never") else f"can never be admitted: {row.detail}"
        return f"{row.state}: {row.detail}" if row.detail else row.state


def run(group: Group, scenario) -> simulate.Plan:
    """Replay a scenario on the group and return the state after each step."""
    sim = GroupSim(group)
    sim.begin_step()
    for owner, cluster in scenario.placed():
        sim.sim(cluster).submit(copy.deepcopy(owner))
    sim.settle()
    n = len(scenario.initial)
    what = f"apply {n} workload object{'s' if n != 1 else ''} of the overlays"
    steps = [_checked(sim, 0, "apply the overlays", what, scenario.initial_expect)]
    for i, step in enumerate(scenario.steps, start=1):
        sim.begin_step()
        step.apply_group(sim)
        sim.settle()
        steps.append(_checked(sim, i, step.title, step.describe(), step.expect))
    notes = [*_settings_notes(group), *sim.notes]
    for s in sim._sims():
        notes += s.store.notes
    return simulate.Plan(describe(group), scenario.source, scenario.description, tuple(dict.fromkeys(notes)),
                         tuple(steps), group.names, release=group.kueue_version)


def describe(group: Group) -> str:
    return (f"MultiKueue manager {group.manager.name} ({group.manager.source}), workers "
            + ", ".join(f"{w.name} ({w.source})" for w in group.workers))


def _settings_notes(group: Group) -> list[str]:
    s = group.settings
    how = "every worker at once" if s.dispatcher == "all-at-once" or group.kueue_version == "v0.12.3" else \
        f"incremental, {s.step_size} workers a round in " + (
            "the MultiKueueConfig's order" if group.gate("MultiKueueIncrementalDispatcherRespectConfigOrder")
            else "name order")
    cond = "Admitted" if group.gate("MultiKueueWaitForWorkloadAdmitted") else "QuotaReserved"
    checks = "; ".join(f"{d.check} -> MultiKueueConfig {d.config}: {', '.join(d.clusters)}"
                       for d in group.dispatches.values())
    return [(f"MultiKueue (Kueue {group.kueue_version}): {checks}; dispatch {how}; the first worker with "
             f"{cond} runs a Workload; workerLostTimeout {s.worker_lost_timeout}; settings from {s.source}")]


def _checked(sim: GroupSim, index: int, title: str, action: str, expect) -> simulate.StepResult:
    result = sim.snapshot(index, title, action)
    if expect is None:
        return result
    return replace(result, failures=tuple(expect.check(result)), checked=True)
