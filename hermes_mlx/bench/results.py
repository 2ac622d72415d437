"""Results: machine facts, a JSON file with every pass (and the fidelity rows measured with
them, scored by bench/fidelity.py), a markdown table, PNG plots (when matplotlib, the `bench`
extra, is installed).

Medians and p95 are over passes, per (scenario, variant); ratios compare ours with the
baselines and each contended scenario with `none`, so one run answers "how much faster, how
much less output, how much does a busy machine hurt".
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import statistics
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from hermes_mlx.bench import contention, figures
from hermes_mlx.compactor.log_report import percentile


@dataclass
class Results:
    """What a bench run measured, filled in as it goes, so an interrupted run still writes it."""

    machine: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    passes: list[dict] = field(default_factory=list)
    # the timed stretches (each scenario's replay, each run of many sessions) with their wall
    # time, memory and prefix-cache counters
    phases: list[dict] = field(default_factory=list)
    fidelity: dict = field(default_factory=dict)  # session name -> its fidelity row
    notes: list[str] = field(default_factory=list)


def machine_facts() -> dict:
    facts = {
        "os": platform.platform(),
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "cpu": platform.processor() or platform.machine(),
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                facts["memory_gb"] = round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        import subprocess

        for key, name in (("cpu", "machdep.cpu.brand_string"), ("memory_gb", "hw.memsize")):
            try:
                out = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5).stdout.strip()
                facts[key] = round(int(out) / 1024**3, 1) if key == "memory_gb" else out
            except (OSError, ValueError, subprocess.SubprocessError):
                pass
    for dist in ("mlx", "mlx-lm"):
        try:
            facts[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            facts[dist] = None
    try:
        import mlx.core as mx

        import hermes_mlx  # noqa: F401

        facts["device"] = str(mx.default_device())
    except Exception as exc:  # the report still gets written
        facts["device"] = f"unknown ({exc})"
    try:
        from hermes_mlx.engine.blas import blas_info

        info = blas_info()
        facts["blas"] = info.__dict__ if hasattr(info, "__dict__") else str(info)
    except Exception as exc:
        facts["blas"] = f"unknown ({exc})"
    try:
        facts["load_average"] = list(os.getloadavg())
    except OSError:
        pass
    return facts


def groups(passes: list[dict]) -> dict[tuple[str, str], dict]:
    out: dict[tuple[str, str], dict] = {}
    for p in passes:
        out.setdefault((p["scenario"], p["variant"]), {"passes": []})["passes"].append(p)
    for g in out.values():
        ps = g["passes"]
        durations = [p["duration_s"] for p in ps if not p.get("error")]
        g.update(
            n=len(ps),
            p50=percentile(durations, 50),
            p95=percentile(durations, 95),
            visible_p95=percentile([p.get("visible_s", p["duration_s"]) for p in ps if not p.get("error")], 95),
            reuse=figures.reuse(ps),
            gen=statistics.median([p["generation_tokens"] for p in ps]) if ps else None,
            prompt=statistics.median([p["prompt_tokens"] for p in ps]) if ps else None,
            ttft=percentile([p["ttft_s"] for p in ps if p.get("ttft_s") is not None], 50),
            prompt_tps=percentile([p["prompt_tps"] for p in ps if p.get("prompt_tps")], 50),
            generation_tps=percentile([p["generation_tps"] for p in ps if p.get("generation_tps")], 50),
        )
    return out


def _f(value, fmt="{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def matched_ratios(passes: list[dict], variant: str) -> list[dict]:
    """Per-pass ratios ours / baseline on the turns both ran (same session, same turn):
    baselines run fewer passes, and early turns are smaller, so medians alone would mislead."""
    ours = {
        (p["session"], p["turn"]): p
        for p in passes
        if p["scenario"] == "none" and p["variant"] in ("ours", "ours-cold") and not p.get("error")
    }
    out = []
    for b in passes:
        o = ours.get((b["session"], b["turn"]))
        if b["variant"] != variant or b.get("error") or o is None or b["duration_s"] <= 0:
            continue
        out.append(
            {
                "session": b["session"],
                "turn": b["turn"],
                "duration": round(o["duration_s"] / b["duration_s"], 3),
                "gen_tokens": round(o["generation_tokens"] / b["generation_tokens"], 3)
                if b["generation_tokens"] > 0
                else None,
            }
        )
    return out


def stage_slowdown(base: dict, contended: dict) -> dict:
    """Which stage a contended scenario slows: median prefill and decode rates against `none`,
    and the fewest OpenBLAS threads its passes ran with (the engine gives up busy cores)."""
    out = {}
    for stage, key in (("prefill", "prompt_tps"), ("decode", "generation_tps")):
        if base.get(key) and contended.get(key):
            out[stage] = round(base[key] / contended[key], 2)
    threads = [p.get("blas_threads") for p in contended["passes"] if p.get("blas_threads")]
    if threads:
        out["blas_threads"] = min(threads)
    return out


def evened(probe: dict, tokens: int) -> float:
    """A probe's seconds as if it had generated `tokens`: the stamp that keeps probes from
    sharing a cached prefix can change a greedy reply's length."""
    decode = probe["decode_s"] * tokens / probe["generation_tokens"] if probe["generation_tokens"] else 0.0
    return (probe["ttft_s"] or 0.0) + decode


def fair_share(base: dict, contended: dict, scenario: str, cores: int) -> dict | None:
    """Our p95 slowdown under a contention scenario as a ratio of the fair-share bound, taking
    our job to be as many BLAS threads as the idle passes ran with (1 where none says)."""
    busy = contention.busy_threads(scenario)
    if busy is None or not base.get("p95") or not contended.get("p95"):
        return None
    threads = [p["blas_threads"] for p in base["passes"] if p.get("blas_threads")]
    ours = round(statistics.median(threads)) if threads else 1
    bound = contention.fair_share_bound(busy, ours, cores)
    slowdown = contended["p95"] / base["p95"]
    return {
        "busy_threads": busy,
        "our_threads": ours,
        "cores": cores,
        "bound": round(bound, 3),
        "p95_slowdown": round(slowdown, 3),
        "p95_vs_bound": round(slowdown / bound, 3),
    }


def summary_table(passes: list[dict], cores: int | None = None) -> tuple[str, dict]:
    """The markdown table and the headline ratios."""
    g = groups(passes)
    base = g.get(("none", "ours"), {})
    rows = [
        "| scenario | variant | passes | p50 s | p95 s | visible p95 s | ttft p50 s | prompt tok p50 | gen tok p50 | "
        "prefix reuse | prefill tok/s | decode tok/s | p50 vs none | p95 vs none |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (scenario, variant), s in sorted(g.items()):
        ref = g.get(("none", variant), base)
        r50 = s["p50"] / ref["p50"] if s["p50"] and ref.get("p50") else None
        r95 = s["p95"] / ref["p95"] if s["p95"] and ref.get("p95") else None
        rows.append(
            f"| {scenario} | {variant} | {s['n']} | {_f(s['p50'])} | {_f(s['p95'])} | {_f(s['visible_p95'])} | "
            f"{_f(s['ttft'])} | {_f(s['prompt'], '{:.0f}')} | {_f(s['gen'], '{:.0f}')} | {_f(s['reuse'], '{:.1%}')} | "
            f"{_f(s['prompt_tps'], '{:.0f}')} | "
            f"{_f(s['generation_tps'], '{:.1f}')} | {_f(r50, '{:.2f}x')} | {_f(r95, '{:.2f}x')} |"
        )
    ratios = {}
    for variant, key in (("mlx_lm.server", "mlx_lm_server"), ("load-per-pass", "load_per_pass")):
        matched = matched_ratios(passes, variant)
        if matched:
            gen = [m["gen_tokens"] for m in matched if m["gen_tokens"] is not None]
            ratios[f"duration_ours_vs_{key}_same_turns_p50"] = round(
                percentile([m["duration"] for m in matched], 50), 3
            )
            ratios[f"gen_tokens_ours_vs_{key}_same_turns_p50"] = round(percentile(gen, 50), 3) if gen else None
            ratios[f"ours_vs_{key}_per_pass"] = matched
        elif base.get("p50") and g.get(("none", variant), {}).get("p50"):  # no common turns: medians
            other = g[("none", variant)]
            ratios[f"duration_ours_vs_{key}_medians"] = round(base["p50"] / other["p50"], 3)
            if other["gen"]:
                ratios[f"gen_tokens_ours_vs_{key}_medians"] = round(base["gen"] / other["gen"], 3)
    for (scenario, variant), s in g.items():
        if variant == "ours" and scenario != "none" and s.get("p95") and base.get("p95"):
            ratios[f"p95_{scenario}_vs_none"] = round(s["p95"] / base["p95"], 3)
            ratios[f"{scenario}_slowdown_by_stage"] = stage_slowdown(base, s)
            bound = fair_share(base, s, scenario, cores or os.cpu_count() or 1)
            if bound:
                ratios[f"{scenario}_fair_share"] = bound
    probes = [p for p in passes if p["variant"] == "idle-probe" and not p.get("error")]
    warm = [p for p in probes if p["idle_before_s"] == 0.0]
    if warm and len(probes) > len(warm):
        ref = warm[0]["generation_tokens"]
        by_gap: dict[float, list[float]] = {}
        for p in probes:
            by_gap.setdefault(p["idle_before_s"], []).append(evened(p, ref))
        base_s = percentile(by_gap[0.0], 50)
        ratios["idle_probe_s_by_gap"] = {str(k): round(percentile(v, 50), 3) for k, v in sorted(by_gap.items())}
        ratios["idle_penalty_s_by_gap"] = {
            str(k): round(percentile(v, 50) - base_s, 3) for k, v in sorted(by_gap.items()) if k
        }
    wired = {str(p["idle_before_s"]): p["wired_mb"] for p in probes if p.get("wired_mb") is not None}
    if wired:  # Metal: was the warm model still wired when each pause ended (0 means it could page out)
        ratios["idle_probe_wired_mb_by_gap"] = wired
    cold = g.get(("none", "ours-cold"))
    if cold and cold.get("p50"):
        ratios["cold_first_pass_s"] = round(cold["p50"], 3)
    return "\n".join(rows), ratios


def plots(passes: list[dict], out: Path) -> list[str]:
    """PNG plots; returns notes for the report. Never raises: a plot that cannot be drawn (no
    passes after an early Ctrl-C, a broken matplotlib) must not cost the results."""
    if not passes:
        return ["no passes: no plots"]
    if importlib.util.find_spec("matplotlib") is None:
        return ["plots skipped: matplotlib is not installed (pip install 'hermes-mlx[bench]')"]
    try:
        draw(passes, out)
    except Exception as exc:
        return [f"plots not drawn: {type(exc).__name__}: {exc}"]
    return []


def draw(passes: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def spread_out(ax, values) -> None:  # mlx_lm.server runs ~50x longer: keep ours readable
        values = [v for v in values if v]
        if values and max(values) > 20 * min(values):
            ax.set_yscale("log")

    g = groups(passes)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    durations = [[p["duration_s"] for p in x["passes"]] for x in g.values()]
    ax.boxplot(durations, tick_labels=[f"{s}\n{v}" for s, v in g])
    ax.tick_params(axis="x", labelsize=7)
    spread_out(ax, [d for ds in durations for d in ds])
    ax.set_ylabel("pass duration (s)")
    ax.set_title("pass latency by scenario")
    fig.tight_layout()
    fig.savefig(out / "latency_by_scenario.png")
    plt.close(fig)
    # per agent turn, so the baselines line up with our passes over the same turns
    for name, key, ylabel in (
        ("occupancy.png", "occupancy_pct", "occupancy (%)"),
        ("generated_tokens.png", "generation_tokens", "tokens generated"),
    ):
        fig, ax = plt.subplots(figsize=(8, 4))
        values = []
        for (s, v), x in g.items():
            rows = [p for p in x["passes"] if p.get(key) is not None and v != "idle-probe"]
            if rows:
                ax.plot([p["turn"] for p in rows], [p[key] for p in rows], marker="o", label=f"{s}/{v}")
                values += [p[key] for p in rows]
        spread_out(ax, values)
        ax.set_xlabel("agent turn")
        ax.set_ylabel(ylabel)
        if values:
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / name)
        plt.close(fig)


def write(out: Path, results: Results) -> tuple[Path, Path, str]:
    """bench.json and bench.md in `out`, with the plots (or a note saying why there are none)."""
    out.mkdir(parents=True, exist_ok=True)
    passes, machine, settings, phases = results.passes, results.machine, results.settings, results.phases
    table, ratios = summary_table(passes, machine.get("cores"))
    concurrent = figures.concurrency(passes, phases, groups(passes).get(("none", "ours"), {}).get("p50"))
    bounds = {k.removesuffix("_fair_share"): v for k, v in ratios.items() if k.endswith("_fair_share")}
    notes = results.notes + plots(passes, out)
    data = {
        "machine": machine,
        "settings": settings,
        "ratios": ratios,
        "concurrency": concurrent,
        "fidelity": results.fidelity,
        "notes": notes,
        "phases": phases,
        "passes": passes,
    }
    json_path = out / "bench.json"
    json_path.write_text(json.dumps(data, indent=2, default=str))
    lines = [
        "# hermes-mlx bench",
        "",
        f"{machine.get('cpu')} · {machine.get('cores')} cores · {machine.get('memory_gb')} GB · "
        f"{machine.get('os')} · mlx {machine.get('mlx')} · mlx-lm {machine.get('mlx-lm')} · "
        f"device {machine.get('device')} · load avg at start {machine.get('load_average')}",
        "",
        f"model: {settings.get('model')} · sessions: {', '.join(settings.get('sessions', []))}",
        "",
        table,
        "",
        "## Ratios",
        "",
    ]
    lines += [f"- {k}: {v}" for k, v in ratios.items()]
    lines += figures.markdown(concurrent, phases, bounds)
    lines += ["", "## Fidelity (ours, after the last pass)", ""]
    lines += [f"- {k}: {v}" for k, v in results.fidelity.items()]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    md = "\n".join(lines) + "\n"
    md_path = out / "bench.md"
    md_path.write_text(md)
    return json_path, md_path, md
