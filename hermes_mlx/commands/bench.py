"""`hermes-mlx bench`: pass latency on this machine, under contention, next to the alternatives."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# --quick runs one mlx_lm.server pass: uncapped, the small default model runs to Hermes's
# 1500-token cap, ~4 minutes a pass on a 2-core x86 machine
QUICK = dict(max_passes=4, gaps=[0.0, 1.0, 5.0, 30.0], hermes_passes=1, naive_passes=1, hermes_cap=1500)
DEFAULT_SCENARIOS = "none,cpu2,membw,main-model,gpu"
QUICK_SCENARIOS = ["none", "cpu2"]
FULL = dict(max_passes=12, gaps=[0.0, 1.0, 5.0, 30.0], hermes_passes=4, naive_passes=3, hermes_cap=1500)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench",
        help="time compaction passes under contention, next to mlx_lm.server and a load per pass",
        description="Replay recorded sessions through micro-compaction and time every pass: with no "
        "contention, busy CPUs, a memory-bandwidth hog, a concurrent main model, a GPU load (Apple "
        "Silicon only); after idle gaps; cold; and side by side with Hermes's own micro prompt on "
        "mlx_lm.server and with a model load per pass. Writes bench.json and bench.md (and PNGs "
        "when matplotlib is installed).",
    )
    p.add_argument("sessions", nargs="*", metavar="SESSION", help="transcripts (.jsonl) or Hermes state.db "
                   "(default: the shipped benchmarks/sessions)")
    p.add_argument("--session-id", default=None, help="which session of a Hermes state.db to replay")
    p.add_argument("--model", default=None, help="summarizer model: manifest name or mlx-lm folder (default: embedded)")
    p.add_argument("--scenarios", default=None,
                   help=f"comma-separated: none, cpuN (N busy loops), membw, main-model, gpu (default: {DEFAULT_SCENARIOS}; "
                   "with --quick: none,cpu2)")
    p.add_argument("--quick", action="store_true", help="1 session, 4 passes a scenario, 1 mlx_lm.server pass (<10 min)")
    p.add_argument("--out", default="bench-results", help="output folder (default: ./bench-results)")
    p.add_argument("--max-passes", type=int, default=None, help="passes per scenario and session")
    p.add_argument("--idle-gaps", default=None, metavar="S,S,...",
                   help="seconds of idle before each idle probe; 0 first (default: 0,1,5,30)")
    p.add_argument("--no-baselines", action="store_true", help="skip mlx_lm.server and load-per-pass")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def fail(message: str, code: int = 2) -> int:
    print(f"hermes-mlx bench: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    import hermes_mlx  # noqa: F401  (BLAS before mlx)
    from hermes_mlx.bench import contention as ct
    from hermes_mlx.compactor.sessions import SessionFormatError, facts_path, load_facts, load_session, shipped_sessions
    from hermes_mlx.compactor.transcript import TranscriptError
    from hermes_mlx.bench.harness import session_turns

    plan = dict(QUICK if args.quick else FULL)
    if args.max_passes is not None:
        if args.max_passes < 1:
            return fail("--max-passes must be at least 1")
        plan["max_passes"] = args.max_passes
        plan["hermes_passes"] = min(plan["hermes_passes"], args.max_passes)
        plan["naive_passes"] = min(plan["naive_passes"], args.max_passes)
    if args.idle_gaps is not None:
        try:
            plan["gaps"] = [float(g) for g in args.idle_gaps.split(",") if g.strip()]
        except ValueError:
            return fail(f"--idle-gaps must be seconds separated by commas, got {args.idle_gaps!r}")
        if any(g < 0 for g in plan["gaps"]):
            return fail("--idle-gaps must not be negative")
        plan["gaps"] = [0.0] + [g for g in plan["gaps"] if g > 0]
    chosen = args.scenarios or (",".join(QUICK_SCENARIOS) if args.quick else DEFAULT_SCENARIOS)
    scenarios = [s.strip() for s in chosen.split(",") if s.strip()]
    try:
        for s in scenarios:
            ct.check_scenario(s)
    except ValueError as exc:
        return fail(str(exc))
    if "none" not in scenarios:
        scenarios.insert(0, "none")

    paths = [Path(s) for s in args.sessions] or shipped_sessions()
    if not paths:
        return fail("no SESSION given and no shipped sessions found")
    if args.quick and not args.sessions:
        paths = paths[:1]
    sessions = []
    for path in paths:
        try:
            messages = load_session(path, args.session_id)
        except SessionFormatError as exc:  # names the file and what is wrong with it
            return fail(str(exc))
        try:
            turns = session_turns(messages)
        except TranscriptError as exc:
            return fail(f"{path}: not a transcript: {exc}")
        if not any(m.get("role") == "assistant" for t in turns for m in t):
            return fail(f"{path}: not a transcript: no assistant turns to compact")
        fp = facts_path(path)
        facts = load_facts(fp) if fp.is_file() else None
        sessions.append((path, messages, facts))

    from hermes_mlx.engine.errors import EngineError
    from hermes_mlx.engine.models import resolve_model

    try:
        model_path = str(resolve_model(args.model))
    except EngineError as exc:
        return fail(f"model {args.model or '(default)'}: {exc}", 1)

    return execute(args, plan, scenarios, sessions, model_path)


def execute(args, plan: dict, scenarios: list[str], sessions: list, model_path: str) -> int:
    from hermes_mlx.bench import contention as ct
    from hermes_mlx.bench import report

    from tqdm import tqdm

    notes: list[str] = []
    if "gpu" in scenarios and not ct.has_metal():
        scenarios = [s for s in scenarios if s != "gpu"]
        notes.append("gpu scenario skipped: no Metal GPU on this machine")
    if plan["hermes_cap"] != 1500:
        notes.append(f"mlx_lm.server baseline capped at {plan['hermes_cap']} tokens (Hermes uses 1500)")
    if args.quick:
        notes.append(f"--quick: {plan['max_passes']} passes a scenario, idle gaps {plan['gaps']} s, "
                     f"{plan['hermes_passes']} mlx_lm.server pass(es), {plan['naive_passes']} load-per-pass pass(es)")
    machine = report.machine_facts()
    per_session = 1 + len(scenarios) * plan["max_passes"] + len(plan["gaps"])
    if not args.no_baselines:
        per_session += plan["hermes_passes"] + plan["naive_passes"]
    bar = tqdm(total=per_session * len(sessions), unit="pass", disable=args.no_progress, file=sys.stderr)
    passes: list[dict] = []
    fidelity: dict = {}

    def on_pass(p) -> None:
        passes.append(p.to_dict())
        bar.set_postfix_str(f"{p.scenario}/{p.variant} {p.duration_s:.1f}s")
        bar.update(1)

    started = time.monotonic()
    names: list[str] = []
    for path, _, _ in sessions:  # rows and per-turn matches are keyed by name: keep names apart
        names.append(path.stem if path.stem not in names else f"{path.stem}-{len(names) + 1}")
    try:
        for name, (path, messages, facts) in zip(names, sessions):
            bench_session(args, plan, scenarios, name, messages, facts, model_path, bar, on_pass, notes,
                          fidelity.setdefault(name, {}))
    except KeyboardInterrupt:
        notes.append("interrupted: partial results")
        print("interrupted; writing partial results", file=sys.stderr)
    finally:
        ct.stop_all()
        bar.close()
    settings = {"model": args.model or "(default)", "model_path": model_path,
                "sessions": [str(p) for p, _, _ in sessions], "scenarios": scenarios, "quick": args.quick, **plan,
                "wall_s": round(time.monotonic() - started, 1)}
    json_path, md_path, md = report.write(Path(args.out), passes=passes, machine=machine, settings=settings,
                                          fidelity_rows=fidelity, notes=notes)
    print(md)
    print(f"wrote {json_path} and {md_path}")
    return 0


def bench_session(args, plan: dict, scenarios: list[str], name: str, messages: list, facts, model_path: str,
                  bar, on_pass, notes: list[str], row: dict) -> None:
    """Cold pass, every scenario, idle probes, then the baselines, for one session. Fills its
    fidelity `row` as it goes (ours from the uncontended replay, mlx_lm.server's from its own
    summary), so an interrupted run keeps what was measured."""
    from hermes_mlx.bench import contention as ct
    from hermes_mlx.bench import report
    from hermes_mlx.bench.baselines import run_hermes_passes
    from hermes_mlx.bench.harness import idle_probes, run_passes
    from hermes_mlx.engine.generate import unload

    model, base = args.model, None
    unload()
    bar.set_description(f"{name} cold")
    run_passes(messages, model=model, scenario="none", session=name, variant="ours-cold", max_passes=1,
               on_pass=on_pass)
    for scenario in scenarios:
        bar.set_description(f"{name} {scenario}")
        try:
            load = ct.Contention(scenario, model=model_path).start()
        except RuntimeError as exc:
            notes.append(str(exc))
            continue
        try:
            replay = run_passes(messages, model=model, scenario=scenario, session=name,
                                max_passes=plan["max_passes"], on_pass=on_pass, before_pass=load.check)
            load.check()
        finally:
            load.stop()
        notes += [f"{scenario}: contention process died mid-run: {n}" for n in load.notes]
        if scenario == "none" and replay.passes:
            base = replay
            row.update(report.fidelity(replay, facts))
            if replay.probe is None:
                notes.append(f"{name}: no pass called the model, so there was no call to repeat after idle gaps")
            else:
                bar.set_description(f"{name} idle gaps")
                idle_probes(replay.probe, gaps=plan["gaps"], session=name, on_pass=on_pass)
    if args.no_baselines:
        return
    bar.set_description(f"{name} mlx_lm.server")
    ours_turns = {p.turn for p in base.passes} if base else None
    try:
        _, hsummary, folded = run_hermes_passes(messages, model_path=model_path, session=name,
                                                max_passes=plan["hermes_passes"], max_tokens=plan["hermes_cap"],
                                                on_pass=on_pass, only_turns=ours_turns)
        row["mlx_lm_server"] = report.summary_fidelity(hsummary, folded, facts)
    except Exception as exc:  # a baseline that fails (server gone, bad answer) is a note, not a lost run
        notes.append(f"mlx_lm.server baseline: {type(exc).__name__}: {exc}")
    bar.set_description(f"{name} load-per-pass")
    run_passes(messages, model=model, scenario="none", session=name, variant="load-per-pass",
               max_passes=plan["naive_passes"], before_pass=unload, on_pass=on_pass)
