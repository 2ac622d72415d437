"""The report's figures for many sessions at once, prefix reuse and memory, read off the passes
and the phases (`concurrent.Phase` and each scenario's replay, as dicts).

Each many-sessions scenario is read against its own sequential run of the same sessions: total
time at once over total time one after another, a pass's p50 at once over its p50 alone, prefix
reuse alternating over reuse alone, and peak memory with N sessions over the sequential run's,
which never held more than one session at a time.
"""

from __future__ import annotations

from hermes_mlx.bench.concurrent import KINDS, parse
from hermes_mlx.compactor.log_report import percentile


def reuse(passes: list[dict]) -> float | None:
    """Cached prompt tokens over prompt tokens, pooled over the passes; None when no pass read a
    prompt (a summarizer that reports no tokens)."""
    prompt = sum(p.get("prompt_tokens") or 0 for p in passes)
    return round(sum(p.get("cached_tokens") or 0 for p in passes) / prompt, 4) if prompt else None


def timing(passes: list[dict]) -> dict:
    ok = [p for p in passes if not p.get("error")]
    return {
        "passes": len(passes),
        "p50_s": percentile([p["duration_s"] for p in ok], 50),
        "p95_s": percentile([p["duration_s"] for p in ok], 95),
        "visible_p95_s": percentile([p.get("visible_s", p["duration_s"]) for p in ok], 95),
        "busy_s": round(sum(p["duration_s"] for p in passes), 3),
        "reuse": reuse(passes),
    }


def ratio(a, b, digits: int = 3) -> float | None:
    return round(a / b, digits) if a is not None and b else None


def concurrency(passes: list[dict], phases: list[dict], idle_p50: float | None = None) -> dict:
    """Per many-sessions scenario: each phase's wall time, pass timings (overall and per
    session), reuse, memory and prefix-cache counters, and the ratios against the sequential run."""
    out: dict[str, dict] = {}
    for ph in phases:
        if not parse(ph["scenario"]):
            continue
        ps = [p for p in passes if p["scenario"] == ph["scenario"] and p["variant"] == ph["variant"]]
        by_session: dict[str, list[dict]] = {}
        for p in ps:
            by_session.setdefault(p["session"], []).append(p)
        out.setdefault(ph["scenario"], {})[ph["variant"]] = {
            "sessions": ph["sessions"],
            "wall_s": ph["wall_s"],
            **timing(ps),
            "memory": ph["memory"],
            "prompt_cache": ph.get("prompt_cache"),
            "per_session": {
                name: {**timing(by_session.get(name, [])), **row} for name, row in ph.get("per_session", {}).items()
            },
        }
    for scenario, fig in out.items():
        seq, other = fig.get("sequential"), fig.get(KINDS[parse(scenario)[0]])
        if not (seq and other):
            continue
        fig["ratios"] = {
            "wall_vs_sequential": ratio(other["wall_s"], seq["wall_s"]),
            "p50_vs_sequential_p50": ratio(other["p50_s"], seq["p50_s"]),
            "p50_vs_none_p50": ratio(other["p50_s"], idle_p50),
            "reuse_vs_alone": ratio(other["reuse"], seq["reuse"]),
            "peak_rss_vs_sequential": ratio(other["memory"].get("peak_rss_mb"), seq["memory"].get("peak_rss_mb")),
            "peak_mlx_vs_sequential": ratio(other["memory"].get("peak_mlx_mb"), seq["memory"].get("peak_mlx_mb")),
        }
    return out


def _f(value, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def markdown(concurrent: dict, phases: list[dict], fair_share: dict) -> list[str]:
    """The report's sections for many sessions, the fair-share bound and memory."""
    lines: list[str] = []
    if concurrent:
        lines += ["", "## Many sessions", ""]
        for scenario, fig in concurrent.items():
            for variant, row in fig.items():
                if variant == "ratios":
                    continue
                lines.append(
                    f"- {scenario} {variant}: {row['sessions']} sessions, {row['passes']} passes, total "
                    f"{row['wall_s']:.1f} s, pass p50 {_f(row['p50_s'])} s, p95 {_f(row['p95_s'])} s, visible p95 "
                    f"{_f(row['visible_p95_s'])} s, prefix reuse {_f(row['reuse'], '{:.1%}')}, prompt cache "
                    f"{row['prompt_cache'] or '-'}"
                )
                for name, s in row["per_session"].items():
                    lines.append(
                        f"  - {name}: {s['passes']} passes, wall {s['wall_s']:.1f} s, p50 {_f(s['p50_s'])} s, "
                        f"p95 {_f(s['p95_s'])} s, reuse {_f(s['reuse'], '{:.1%}')}"
                        + (f", error: {s['error']}" if s.get("error") else "")
                    )
            if fig.get("ratios"):
                lines.append(f"- {scenario} ratios: {fig['ratios']}")
    if fair_share:
        lines += ["", "## Contention against the fair-share bound", ""]
        for scenario, f in fair_share.items():
            lines.append(
                f"- {scenario}: {f['busy_threads']} busy + {f['our_threads']} BLAS threads on {f['cores']} cores: "
                f"bound {f['bound']:.2f}x; our p95 {_f(f['p95_slowdown'])}x idle = {_f(f['p95_vs_bound'])}x the bound"
            )
    if phases:
        lines += [
            "",
            "## Memory and reuse by scenario",
            "",
            "| scenario | variant | session(s) | wall s | peak RSS MB | max RSS MB | peak MLX MB |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        for ph in phases:
            m = ph["memory"]
            lines.append(
                f"| {ph['scenario']} | {ph['variant']} | {ph.get('session') or ph.get('sessions')} | "
                f"{ph['wall_s']:.1f} | {_f(m.get('peak_rss_mb'), '{:.0f}')} | {_f(m.get('maxrss_mb'), '{:.0f}')} | "
                f"{_f(m.get('peak_mlx_mb'), '{:.0f}')} |"
            )
    return lines
