"""`hermes-mlx bench` from start to end: the plan, the sessions, every scenario, the report.

The command only parses arguments; this module decides what runs (passes per scenario, idle
gaps, which sessions) and runs it, so the same benchmark can be driven from Python.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_mlx.bench import concurrent
from hermes_mlx.bench import contention as ct
from hermes_mlx.bench.memory import MemoryWatch
from hermes_mlx.bench.shipped import Session, load_with_facts, shipped_sessions
from hermes_mlx.errors import HermesMLXError, UsageError

# --quick runs one mlx_lm.server pass: uncapped, the small default model runs to Hermes's
# 1500-token cap, ~4 minutes a pass on a 2-core x86 machine
# concurrent_passes: passes each session of a sessions-N or alternating-N scenario runs
QUICK = dict(
    max_passes=4, gaps=[0.0, 1.0, 5.0, 30.0], hermes_passes=1, naive_passes=1, hermes_cap=1500, concurrent_passes=2
)
DEFAULT_SCENARIOS = "none,cpu2,membw,main-model,gpu,sessions-8,alternating-4"
QUICK_SCENARIOS = ["none", "cpu2"]
FULL = dict(
    max_passes=12, gaps=[0.0, 1.0, 5.0, 30.0], hermes_passes=4, naive_passes=3, hermes_cap=1500, concurrent_passes=4
)


@dataclass
class Options:
    """What the user chose beyond the plan."""

    model: str | None = None  # manifest name or mlx-lm folder; None: the embedded model
    out: Path = Path("bench-results")
    quick: bool = False
    baselines: bool = True
    progress: bool = True
    think_s: float = 0.0  # the user's pause between turns, in every replay of ours
    ahead: bool = False  # every replay of ours computes its next pass ahead (CompactorSettings.ahead)


def make_plan(quick: bool, max_passes: int | None = None, idle_gaps: str | None = None) -> dict:
    """Passes per scenario, idle gaps and baseline passes; UsageError for a bad value."""
    plan = dict(QUICK if quick else FULL)
    if max_passes is not None:
        if max_passes < 1:
            raise UsageError("--max-passes must be at least 1")
        plan["max_passes"] = max_passes
        plan["hermes_passes"] = min(plan["hermes_passes"], max_passes)
        plan["naive_passes"] = min(plan["naive_passes"], max_passes)
        plan["concurrent_passes"] = min(plan["concurrent_passes"], max_passes)
    if idle_gaps is not None:
        try:
            gaps = [float(g) for g in idle_gaps.split(",") if g.strip()]
        except ValueError:
            raise UsageError(f"--idle-gaps must be seconds separated by commas, got {idle_gaps!r}") from None
        if any(g < 0 for g in gaps):
            raise UsageError("--idle-gaps must not be negative")
        plan["gaps"] = [0.0] + [g for g in gaps if g > 0]
    return plan


def choose_scenarios(chosen: str | None, quick: bool) -> list[str]:
    """The scenarios to run, `none` always first; UsageError names an unknown one."""
    chosen = chosen or (",".join(QUICK_SCENARIOS) if quick else DEFAULT_SCENARIOS)
    scenarios = [s.strip() for s in chosen.split(",") if s.strip()]
    try:
        for s in scenarios:
            if not concurrent.parse(s):
                ct.check_scenario(s)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if "none" not in scenarios:
        scenarios.insert(0, "none")
    return scenarios


def load_sessions(paths: list[Path], session_id: str | None = None, quick: bool = False) -> list[Session]:
    """The sessions to replay (default: the shipped ones; with `quick`, the first of them), each
    checked to be a transcript with assistant turns, with its facts file when one sits beside it."""
    from hermes_mlx.bench.harness import session_turns
    from hermes_mlx.compactor.transcript import TranscriptError

    given = bool(paths)
    paths = paths or shipped_sessions()
    if not paths:
        raise UsageError("no SESSION given and no shipped sessions found")
    if quick and not given:
        paths = paths[:1]
    sessions = []
    for path in paths:
        session = load_with_facts(path, session_id)  # SessionFormatError names the file and the fault
        try:
            turns = session_turns(session.messages)
        except TranscriptError as exc:
            raise UsageError(f"{path}: not a transcript: {exc}") from None
        if not any(m.get("role") == "assistant" for t in turns for m in t):
            raise UsageError(f"{path}: not a transcript: no assistant turns to compact")
        sessions.append(session)
    return sessions


def many(scenarios: list[str]) -> list[str]:
    """The many-sessions scenarios (sessions-N, alternating-N) among `scenarios`."""
    return [s for s in scenarios if concurrent.parse(s)]


def unique_names(sessions: list[Session]) -> list[str]:
    """Rows and per-turn matches are keyed by name: keep the names apart."""
    names: list[str] = []
    for s in sessions:
        names.append(s.path.stem if s.path.stem not in names else f"{s.path.stem}-{len(names) + 1}")
    return names


def describe(
    plan: dict, scenarios: list[str], sessions: list[Session], options: Options, pool: list[Session] | None = None
) -> str:
    """What a run would do, for --dry-run: no model is resolved or loaded."""
    lines = [f"sessions: {len(sessions)}"]
    lines += [f"  {s.path} ({len(s.messages)} messages, facts: {'yes' if s.facts else 'no'})" for s in sessions]
    lines.append(f"scenarios: {', '.join(scenarios)}")
    lines.append(f"passes a scenario: {plan['max_passes']}; idle gaps: {', '.join(f'{g:g}' for g in plan['gaps'])} s")
    for scenario in many(scenarios):
        kind, n = concurrent.parse(scenario)
        lines.append(
            f"{scenario}: {n} sessions {'at once' if kind == 'sessions' else 'taking turns'} (from "
            f"{len(pool or sessions)} recorded), {plan['concurrent_passes']} pass(es) each, after the same "
            "sessions one after another"
        )
    if options.think_s:
        lines.append(f"think time between turns: {options.think_s:g} s")
    if options.ahead:
        lines.append("passes computed ahead: on (each pass's summarizer call starts after the turn before)")
    if options.baselines:
        lines.append(
            f"baselines: {plan['hermes_passes']} mlx_lm.server pass(es), capped at {plan['hermes_cap']} "
            f"tokens; {plan['naive_passes']} load-per-pass pass(es)"
        )
    else:
        lines.append("baselines: none")
    lines.append(f"model: {options.model or '(default)'}; output: {options.out}")
    return "\n".join(lines)


def resolve(model: str | None) -> str:
    """The model's local folder; HermesMLXError (exit 1) when it cannot be had."""
    from hermes_mlx.engine.errors import EngineError
    from hermes_mlx.engine.models import resolve_model

    try:
        return str(resolve_model(model))
    except EngineError as exc:
        raise HermesMLXError(f"model {model or '(default)'}: {exc}") from exc


def run(
    options: Options,
    plan: dict,
    scenarios: list[str],
    sessions: list[Session],
    model_path: str,
    pool: list[Session] | None = None,
) -> int:
    """Every session through every scenario and the baselines, then the many-sessions scenarios
    over `pool` (default: `sessions`); writes bench.json and bench.md."""
    from tqdm import tqdm

    from hermes_mlx.bench import results

    measured = results.Results()
    if "gpu" in scenarios and not ct.has_metal():
        scenarios = [s for s in scenarios if s != "gpu"]
        measured.notes.append("gpu scenario skipped: no Metal GPU on this machine")
    if plan["hermes_cap"] != 1500:
        measured.notes.append(f"mlx_lm.server baseline capped at {plan['hermes_cap']} tokens (Hermes uses 1500)")
    if options.quick:
        measured.notes.append(
            f"--quick: {plan['max_passes']} passes a scenario, idle gaps {plan['gaps']} s, "
            f"{plan['hermes_passes']} mlx_lm.server pass(es), {plan['naive_passes']} load-per-pass pass(es)"
        )
    measured.machine = results.machine_facts()
    contended, pool = [s for s in scenarios if not concurrent.parse(s)], pool or sessions
    per_session = 1 + len(contended) * plan["max_passes"] + len(plan["gaps"])
    if options.baselines:
        per_session += plan["hermes_passes"] + plan["naive_passes"]
    total = (
        per_session * len(sessions)
        + sum(2 * concurrent.parse(s)[1] for s in many(scenarios)) * plan["concurrent_passes"]
    )
    bar = tqdm(total=total, unit="pass", disable=not options.progress, file=sys.stderr)
    lock = threading.Lock()  # many-sessions passes end on several threads

    def on_pass(p) -> None:
        with lock:
            measured.passes.append(p.to_dict())
            bar.set_postfix_str(f"{p.scenario}/{p.variant} {p.duration_s:.1f}s")
            bar.update(1)

    started = time.monotonic()
    try:
        for name, s in zip(unique_names(sessions), sessions):
            bench_session(options, plan, contended, name, s, model_path, bar, on_pass, measured)
        for scenario in many(scenarios):
            bar.set_description(scenario)
            for phase in many_sessions(options, plan, scenario, pool, on_pass):
                measured.phases.append(phase.to_dict())
                measured.notes += [
                    f"{scenario} {phase.variant} {k}: {r['error']}" for k, r in phase.per_session.items() if r["error"]
                ]
    except KeyboardInterrupt:
        measured.notes.append("interrupted: partial results")
        print("interrupted; writing partial results", file=sys.stderr)
    finally:
        ct.stop_all()
        bar.close()
    measured.settings = {
        "model": options.model or "(default)",
        "model_path": model_path,
        "sessions": [str(s.path) for s in sessions],
        "scenarios": scenarios,
        "quick": options.quick,
        "think_s": options.think_s,
        "ahead": options.ahead,
        **({"pool": [str(s.path) for s in pool]} if many(scenarios) else {}),
        **plan,
        "wall_s": round(time.monotonic() - started, 1),
    }
    json_path, md_path, md = results.write(Path(options.out), measured)
    print(md)
    print(f"wrote {json_path} and {md_path}")
    return 0


def bench_session(
    options: Options,
    plan: dict,
    scenarios: list[str],
    name: str,
    session: Session,
    model_path: str,
    bar,
    on_pass,
    measured,
) -> None:
    """Cold pass, every scenario, idle probes, then the baselines, for one session. Fills its
    fidelity row in `measured` (results.Results) as it goes (ours from the uncontended replay,
    mlx_lm.server's from its own summary), and the run's notes and phases, so an interrupted
    run keeps what was measured."""
    from hermes_mlx.bench import baselines, harness
    from hermes_mlx.bench.fidelity import context_fidelity, summary_fidelity
    from hermes_mlx.engine.generate import unload

    model, messages, facts, base = options.model, session.messages, session.facts, None
    notes, row = measured.notes, measured.fidelity.setdefault(name, {})
    unload(model)
    bar.set_description(f"{name} cold")
    harness.run_passes(
        messages, model=model, scenario="none", session=name, variant="ours-cold", max_passes=1, on_pass=on_pass
    )
    for scenario in scenarios:
        bar.set_description(f"{name} {scenario}")
        fresh_engine(model)  # else the prefix cache serves this scenario the last one's prompts
        try:
            load = ct.Contention(scenario, model=model_path).start()
        except RuntimeError as exc:
            notes.append(str(exc))
            continue
        started = time.monotonic()
        try:
            with MemoryWatch() as watch:
                replay = harness.run_passes(
                    messages,
                    model=model,
                    scenario=scenario,
                    session=name,
                    max_passes=plan["max_passes"],
                    on_pass=on_pass,
                    before_pass=load.check,
                    think_s=options.think_s,
                    ahead=options.ahead,
                )
            load.check()
        finally:
            load.stop()
        wall = round(time.monotonic() - started, 3)
        measured.phases.append(
            dict(scenario=scenario, variant="ours", session=name, wall_s=wall, memory=watch.result(replay.passes))
        )
        notes += [f"{scenario}: contention process died mid-run: {n}" for n in load.notes]
        if scenario == "none" and replay.passes:
            base = replay
            row.update(context_fidelity(replay, facts))
            if replay.probe is None:
                notes.append(f"{name}: no pass called the model, so there was no call to repeat after idle gaps")
            else:
                bar.set_description(f"{name} idle gaps")
                harness.idle_probes(replay.probe, gaps=plan["gaps"], session=name, on_pass=on_pass)
    if not options.baselines:
        return
    bar.set_description(f"{name} mlx_lm.server")
    ours_turns = {p.turn for p in base.passes} if base else None
    try:
        _, hsummary, folded = baselines.run_hermes_passes(
            messages,
            model_path=model_path,
            session=name,
            max_passes=plan["hermes_passes"],
            max_tokens=plan["hermes_cap"],
            on_pass=on_pass,
            only_turns=ours_turns,
        )
        row["mlx_lm_server"] = summary_fidelity(hsummary, folded, facts)
    except Exception as exc:  # a baseline that fails (server gone, bad answer) is a note, not a lost run
        notes.append(f"mlx_lm.server baseline: {type(exc).__name__}: {exc}")
    bar.set_description(f"{name} load-per-pass")
    harness.run_passes(
        messages,
        model=model,
        scenario="none",
        session=name,
        variant="load-per-pass",
        max_passes=plan["naive_passes"],
        before_pass=lambda: unload(model),
        on_pass=on_pass,
    )


def fresh_engine(model: str | None) -> None:
    """The model loaded afresh, with no cached prefix: every scenario replays the same passes, and
    the engine's prefix cache would otherwise hand one scenario the prompts of the one before.
    The load itself happens here, outside the timings."""
    from hermes_mlx.engine.generate import generate, unload

    unload(model)
    generate("ok", model=model, max_tokens=1)


def many_sessions(options: Options, plan: dict, scenario: str, pool: list[Session], on_pass) -> list:
    """One sessions-N or alternating-N scenario (concurrent.Phase each): the sessions one after
    another, then the scenario's own way, each on a freshly loaded model with no cached prefix."""
    from hermes_mlx.bench import harness

    def replay_one(name, messages, variant, before_pass, on_turn):
        return harness.run_passes(
            messages,
            model=options.model,
            scenario=scenario,
            session=name,
            variant=variant,
            max_passes=plan["concurrent_passes"],
            before_pass=before_pass,
            on_turn=on_turn,
            on_pass=on_pass,
            think_s=options.think_s,
            ahead=options.ahead,
        )

    named = [(n, s.messages) for n, s in zip(unique_names(pool), pool)]
    return concurrent.run_scenario(scenario, named, replay_one, lambda: fresh_engine(options.model))
