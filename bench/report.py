#!/usr/bin/env python3
"""Turn the benchmark CSV into markdown tables, PNG charts and README's block.

usage: report.py CSV [--md OUT.md] [--charts DIR] [--readme README.md]
                 [--targets TARGETS.csv]

CSV columns (bench/bench_common.h, plus a header line):
  section,workload,n,impl,value,min,max,unit,peak_rss_kib,checksum

Rows repeated by several rounds (bench/run.sh with ROUNDS=k) are merged:
median of the medians, overall min and max. For every section / workload
/ n the table lists each implementation's
median with min-max, the ratio to ark (value / ark's value for the same
section, workload, n and unit), peak RSS, and whether its checksum agrees
with ark's (MISMATCH if not). The machine and toolchain lines come from
the .env file run.sh writes beside the CSV. Charts need gnuplot; without it
they are skipped with a message. README.md's text between the lines
<!-- bench:begin --> and <!-- bench:end --> is replaced; without those
markers README is left alone. Exits 3 when a checksum disagrees with ark's
for a reason other than accepted stale handles. Standard library only.

The "Targets" table (top of the markdown, and in README's block) checks
each row of bench/targets.csv (or --targets; its header comment describes
the columns) against the CSV: for every section / workload / n the row
matches, ratio = value(num_impl) / value(den_impl) (or num_impl's value
alone when den_impl is empty) compared with the threshold: met or MISSED;
"not measured" when the CSV lacks the workload, the n or an
implementation.
"""
import argparse
import collections
import csv
import fnmatch
import math
import os
import shutil
import subprocess
import sys

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"
REFERENCE = "ark"


def num(v):
    """Format a number with 4 significant digits, no exponent below 1e9."""
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e9 or a < 1e-3:
        return "%.3g" % v
    if a >= 1000:
        return "{:,.0f}".format(v)
    s = "%.4g" % v
    return s


def ratio_text(r):
    if r is None:
        return "—"
    return ("%.2f" % r if r < 10 else "%.1f" % r) + "×"


def load(path):
    rows = collections.OrderedDict()
    with open(path, newline="") as f:
        for rec in csv.reader(f):
            if len(rec) != 10 or rec[0] == "section" or rec[0].startswith("#"):
                continue
            sec, wl, n, impl, val, lo, hi, unit, rss, chk = rec
            try:
                row = {
                    "section": sec, "workload": wl, "n": int(n),
                    "impl": impl, "value": float(val), "min": float(lo),
                    "max": float(hi), "unit": unit, "rss": int(rss),
                    "checksum": chk,
                }
            except ValueError:
                continue
            rows.setdefault((sec, wl, int(n), unit, impl), []).append(row)
    return [merge(rs) for rs in rows.values()]


def merge(rs):
    """One row from the rows of several rounds (run.sh ROUNDS=k): the
    median of their medians, the overall min and max, the largest RSS. A
    checksum that changes between rounds is kept as 'unstable'."""
    if len(rs) == 1:
        return rs[0]
    vals = sorted(r["value"] for r in rs)
    k = len(vals)
    out = dict(rs[0])
    out["value"] = vals[k // 2] if k % 2 else (vals[k // 2 - 1] + vals[k // 2]) / 2
    out["min"] = min(r["min"] for r in rs)
    out["max"] = max(r["max"] for r in rs)
    out["rss"] = max(r["rss"] for r in rs)
    if len({r["checksum"] for r in rs}) > 1:
        out["checksum"] = "unstable"
    return out


def group(rows):
    """{section: [((workload, n, unit), [rows])]} in a stable order:
    workload families (text before the first '_') alphabetically, then
    the order in which the CSV first names each workload and n."""
    first = {}
    by = collections.OrderedDict()
    for i, r in enumerate(rows):
        key = (r["section"], r["workload"], r["n"], r["unit"])
        first.setdefault(key, i)
        by.setdefault(key, []).append(r)
    out = collections.OrderedDict()
    for sec in sorted({k[0] for k in by}):
        keys = [k for k in by if k[0] == sec]
        keys.sort(key=lambda k: (k[1].split("_")[0], first[k]))
        out[sec] = [(k[1:], by[k]) for k in keys]
    return out


def annotate(rs):
    """Add ratio and agreement against the reference row, if any."""
    ref = next((r for r in rs if r["impl"] == REFERENCE), None)
    if ref is None:  # a section may name its ark implementation ark_<x>
        ref = next((r for r in rs if r["impl"].startswith(REFERENCE)), None)
    for r in rs:
        r["ratio"] = None
        r["agree"] = None
        if ref is not None:
            if ref["value"] != 0:
                r["ratio"] = r["value"] / ref["value"]
            r["agree"] = (r["checksum"] == ref["checksum"]
                          and r["checksum"] != "unstable")
    return ref


def impl_order(rows):
    seen = []
    for r in rows:
        if r["impl"] not in seen:
            seen.append(r["impl"])
    ours = [i for i in seen if i.startswith(REFERENCE)]
    return ours + [i for i in seen if not i.startswith(REFERENCE)]


def detail_tables(groups):
    out = []
    for sec, items in groups.items():
        out.append("## Section `%s`\n" % sec)
        for (wl, n, unit), rs in items:
            annotate(rs)
            out.append("### %s · %s · n = %s (%s)\n" % (sec, wl, "{:,}".format(n), unit))
            out.append("| implementation | median | min–max | ratio to ark | peak RSS | checksum |")
            out.append("|---|---:|---:|---:|---:|---|")
            for r in sorted(rs, key=lambda r: (r["value"], r["impl"])):
                name = "**%s**" % r["impl"] if r["impl"].startswith(REFERENCE) else r["impl"]
                agree = {None: "—", True: "agrees", False: "**MISMATCH**"}[r["agree"]]
                if wl.endswith("_accepted") and r["value"] > 0:
                    agree += " (accepts stale handles)"
                out.append("| %s | %s | %s–%s | %s | %s MiB | %s |" % (
                    name, num(r["value"]), num(r["min"]), num(r["max"]),
                    ratio_text(r["ratio"]), num(r["rss"] / 1024.0), agree))
            out.append("")
    return out


def summary_tables(groups):
    """One compact table per section: a row per workload, a column per
    implementation, cells 'median (ratio to ark)'."""
    out = []
    for sec, items in groups.items():
        impls = impl_order([r for _, rs in items for r in rs])
        out.append("**Section `%s`** (median of the runs: 5, or 1 in smoke mode; in brackets: ratio "
                   "to ark, lower is faster; `!` = checksum disagrees with "
                   "ark's)\n" % sec)
        out.append("| workload | n | unit | " + " | ".join(impls) + " |")
        out.append("|---|---:|---|" + "---:|" * len(impls))
        for (wl, n, unit), rs in items:
            annotate(rs)
            cells = []
            for impl in impls:
                r = next((x for x in rs if x["impl"] == impl), None)
                if r is None:
                    cells.append("")
                    continue
                c = num(r["value"])
                if not impl.startswith(REFERENCE) and r["ratio"] is not None:
                    c += " (%s)" % ratio_text(r["ratio"])
                if r["agree"] is False:
                    c += " !"
                cells.append(c)
            out.append("| %s | %s | %s | %s |" % (wl, "{:,}".format(n), unit,
                                                  " | ".join(cells)))
        out.append("")
    return out


def load_targets(path):
    """The rows of targets.csv as dicts; comment lines (#) and the header
    line are skipped. A malformed row is reported and ignored."""
    out = []
    try:
        f = open(path, newline="")
    except OSError:
        print("report: no targets file %s, targets skipped" % path, file=sys.stderr)
        return out
    with f:
        lines = [l for l in f if l.strip() and not l.lstrip().startswith("#")]
    for i, rec in enumerate(csv.reader(lines)):
        if rec and rec[0] == "section":
            continue
        rec = [x.strip() for x in rec]
        try:
            sec, wl, n, num_impl, den_impl, op, thr, label = rec
            if op not in ("<=", ">="):
                raise ValueError("op must be <= or >=")
            if n != "*":
                int(n.lstrip("<>="))
            out.append({"section": sec, "workload": wl, "n": n,
                        "num": num_impl, "den": den_impl, "op": op,
                        "threshold": float(thr), "label": label})
        except ValueError as e:
            print("report: %s: bad target %r (%s), ignored" % (path, ",".join(rec), e),
                  file=sys.stderr)
    return out


def n_matches(spec, n):
    if spec == "*":
        return True
    if spec.startswith(">="):
        return n >= int(spec[2:])
    if spec.startswith("<="):
        return n <= int(spec[2:])
    return n == int(spec)


def evaluate_targets(targets, rows):
    """One result per target and matched section / workload / n:
    dicts with the target, workload, n, ratio (None when not measured)
    and met (None when not measured)."""
    by = collections.OrderedDict()
    for r in rows:
        by.setdefault((r["section"], r["workload"], r["n"]), {})[r["impl"]] = r
    out = []
    for t in targets:
        keys = [k for k in by if k[0] == t["section"]
                and fnmatch.fnmatchcase(k[1], t["workload"])
                and n_matches(t["n"], k[2])]
        if not keys:
            out.append({"t": t, "workload": t["workload"], "n": t["n"],
                        "ratio": None, "met": None, "unit": ""})
            continue
        for sec, wl, n in keys:
            impls = by[(sec, wl, n)]
            num_r = impls.get(t["num"])
            den_r = impls.get(t["den"]) if t["den"] else None
            ratio = None
            if num_r is not None and (den_r is not None or not t["den"]):
                if den_r is None:
                    ratio = num_r["value"]
                elif den_r["value"] != 0:
                    ratio = num_r["value"] / den_r["value"]
            met = None
            if ratio is not None:
                met = ratio <= t["threshold"] if t["op"] == "<=" else ratio >= t["threshold"]
            out.append({"t": t, "workload": wl, "n": n, "ratio": ratio,
                        "met": met, "unit": num_r["unit"] if num_r else ""})
    return out


def targets_table(results):
    """The markdown table of evaluated targets (empty without targets)."""
    if not results:
        return []
    met = sum(1 for r in results if r["met"] is True)
    missed = sum(1 for r in results if r["met"] is False)
    absent = sum(1 for r in results if r["met"] is None)
    out = ["**Targets** (bench/targets.csv; measured = num / den for the same "
           "workload and n, or num's value when there is no den): %d met, "
           "%d missed, %d not measured\n" % (met, missed, absent),
           "| target | workload | n | num / den | measured | threshold | verdict |",
           "|---|---|---:|---|---:|---|---|"]
    for r in results:
        t = r["t"]
        n = r["n"]
        if isinstance(n, int) or n.isdigit():
            n = "{:,}".format(int(n))
        pair = "%s / %s" % (t["num"], t["den"]) if t["den"] else t["num"]
        if r["ratio"] is None:
            measured = "—"
        elif t["den"]:
            measured = ("%.3f×" if r["ratio"] < 10 else "%.1f×") % r["ratio"]
        else:
            measured = "%s %s" % (num(r["ratio"]), r["unit"])
        thr = "%s %g%s" % (t["op"].replace("<=", "≤").replace(">=", "≥"),
                           t["threshold"], "×" if t["den"] else "")
        verdict = {True: "met", False: "**MISSED**", None: "not measured"}[r["met"]]
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            t["label"], r["workload"], n, pair, measured, thr, verdict))
    out.append("")
    return out


def chart_name(sec, wl, n):
    return "%s_%s_%d.png" % (sec, wl, n)


def charts(groups, outdir):
    gp = shutil.which("gnuplot")
    if gp is None:
        print("report: gnuplot not found, charts skipped (install gnuplot-nox)",
              file=sys.stderr)
        return []
    os.makedirs(outdir, exist_ok=True)
    script = []
    made = []
    for sec, items in groups.items():
        for (wl, n, unit), rs in items:
            rs = sorted(rs, key=lambda r: -r["value"])  # fastest on top
            name = chart_name(sec, wl, n)
            path = os.path.join(outdir, name)
            height = 90 + 26 * len(rs)
            vmax = max([r["max"] for r in rs] + [1e-9])
            script.append("$d << EOD")
            for i, r in enumerate(rs):
                label = r["impl"]
                if r.get("agree") is False:
                    label += " (checksum MISMATCH)"
                color = "0xd62728" if r["impl"].startswith(REFERENCE) else "0x1f77b4"
                script.append('%d "%s" %g %g %g %s "%s"' % (
                    i, label, r["value"], r["min"], r["max"], color,
                    num(r["value"])))
            script.append("EOD")
            vmin = min([r["value"] for r in rs if r["value"] > 0] + [vmax])
            # A wide range gets a log scale, so the fast bars stay visible.
            logx = vmax / vmin > 30
            lo = 10 ** math.floor(math.log10(vmin / 1.5)) if logx else 0
            script.append("set terminal pngcairo noenhanced size 720,%d font 'sans,9'" % height)
            script.append("set output '%s'" % path.replace("'", ""))
            script.append("set title '%s: %s, n = %s (%s, median, bars min–max%s)'"
                          % (sec, wl, "{:,}".format(n), unit,
                             ", log scale" if logx else ""))
            if logx:
                script.append("set logscale x")
                script.append("set xrange [%g:%g]" % (lo, vmax * 4))
            else:
                script.append("unset logscale x")
                script.append("set xrange [0:%g]" % (vmax * 1.25))
            script.append("set yrange [-0.6:%g]" % (len(rs) - 0.4))
            script.append("unset key")
            script.append("set grid xtics")
            script.append("set style fill solid 0.8 noborder")
            script.append(
                ("plot $d using 3:1:(%g):($3 > %g ? $3 : %g):($1-0.35):($1+0.35):"
                 "(column(6)):ytic(2) with boxxyerrorbars lc rgb variable, " % (lo, lo, lo))
                + "$d using 3:1:4:5 with xerrorbars lc rgb 'black' pt 0, "
                "$d using 5:1:7 with labels left offset 0.8,0")
            script.append("unset output")
            made.append((sec, wl, n, name))
    res = subprocess.run([gp], input="\n".join(script) + "\n", text=True,
                         capture_output=True)
    if res.returncode != 0:
        print("report: gnuplot failed:\n" + res.stderr[-2000:], file=sys.stderr)
        return []
    return made


def targets_digest(results):
    """README's short form of the targets: one row per target label, with
    how many measured cells meet it and the best and worst ratio."""
    if not results:
        return []
    rows = collections.OrderedDict()
    for r in results:
        rows.setdefault(r["t"]["label"], []).append(r)
    met = sum(1 for r in results if r["met"] is True)
    missed = sum(1 for r in results if r["met"] is False)
    out = ["**Targets** (from bench/targets.csv; every cell is in "
           "bench/results/latest.md): %d cells met, %d missed\n" % (met, missed),
           "| target | cells met | measured (best – worst) | threshold |",
           "|---|---:|---|---|"]
    for label, rs in rows.items():
        t = rs[0]["t"]
        got = [r for r in rs if r["ratio"] is not None]
        thr = "%s %g%s" % (t["op"].replace("<=", "≤").replace(">=", "≥"),
                           t["threshold"], "×" if t["den"] else "")
        if not got:
            out.append("| %s | not measured | — | %s |" % (label, thr))
            continue
        vals = sorted(r["ratio"] for r in got)
        if t["op"] == ">=":
            vals.reverse()
        fmt = (lambda v: "%.2f×" % v) if t["den"] else num
        span = fmt(vals[0]) if len(vals) == 1 else "%s – %s" % (
            fmt(vals[0]), fmt(vals[-1]))
        ok = sum(1 for r in got if r["met"])
        out.append("| %s | %d / %d | %s | %s |" % (label, ok, len(got), span,
                                                    thr))
    out.append("")
    return out


# README keeps a section's summary to its largest n when the section has
# more rows than this (idset has hundreds); latest.md has every row.
README_MAX_ROWS = 40


def largest_n_only(groups):
    out = collections.OrderedDict()
    for sec, items in groups.items():
        if len(items) > README_MAX_ROWS:
            top = max(n for (_, n, _), _ in items)
            items = [it for it in items if it[0][1] == top]
        out[sec] = items
    return out


def readme_block(env, groups, made, chart_dir, readme, targets=()):
    rel = os.path.relpath(chart_dir, os.path.dirname(os.path.abspath(readme)))
    out = [BEGIN,
           "<!-- generated by bench/report.py from the CSV; do not edit -->",
           ""]
    out += ["- " + line for line in env]
    out.append("")
    out += targets_digest(targets)
    short = largest_n_only(groups)
    out += summary_tables(short)
    out.append("Every table, row and chart: "
               "[bench/results/latest.md](bench/results/latest.md). Charts "
               "at the largest size of each workload:\n")
    largest = {}
    for sec, wl, n, _ in made:
        largest[(sec, wl)] = max(n, largest.get((sec, wl), 0))
    for sec, wl, n, name in made:
        if n == largest[(sec, wl)]:
            out.append("![%s %s n=%d](%s)" % (sec, wl, n,
                                              os.path.join(rel, name)))
    out.append(END)
    return out


def update_readme(path, block):
    try:
        text = open(path).read()
    except OSError:
        return False
    lines = text.split("\n")
    try:
        b = lines.index(BEGIN)
        e = lines.index(END, b)
    except ValueError:
        print("report: %s has no %s / %s markers, left alone" % (path, BEGIN, END),
              file=sys.stderr)
        return False
    new = "\n".join(lines[:b] + block + lines[e + 1:])
    if new != text:
        with open(path, "w") as f:
            f.write(new)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--md")
    ap.add_argument("--charts")
    ap.add_argument("--readme")
    ap.add_argument("--targets", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "targets.csv"))
    a = ap.parse_args()
    rows = load(a.csv)
    if not rows:
        print("report: no rows in %s" % a.csv, file=sys.stderr)
        return 1
    env_path = os.path.splitext(a.csv)[0] + ".env"
    env = []
    if os.path.exists(env_path):
        env = [l.rstrip("\n") for l in open(env_path) if l.strip()]
    groups = group(rows)
    for items in groups.values():
        for _, rs in items:
            annotate(rs)
    made = charts(groups, a.charts) if a.charts else []
    results = evaluate_targets(load_targets(a.targets), rows)
    md = ["# ark benchmark results", "",
          "Generated by bench/report.py from `%s`; do not edit." % a.csv, ""]
    md += ["- " + line for line in env] + [""]
    md += targets_table(results)
    md += ["## Summary", ""] + summary_tables(groups)
    md += detail_tables(groups)
    if made:
        md.append("## Charts\n")
        rel = os.path.relpath(a.charts, os.path.dirname(os.path.abspath(a.md or ".")))
        md += ["![%s %s n=%d](%s)" % (s, w, n, os.path.join(rel, f))
               for s, w, n, f in made]
    text = "\n".join(md) + "\n"
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
        print("report: wrote %s" % a.md, file=sys.stderr)
    # The summary, for people watching the run.
    print("\n".join(["- " + line for line in env] + [""] + targets_table(results)
                    + summary_tables(groups)))
    # A mismatch is explained when the same implementation accepted stale
    # handles in a workload of the same family (stale_accepted > 0 explains
    # stale_get); any other one is a bug in an implementation or a recipe.
    accepting = {(r["section"], r["impl"], r["workload"].split("_")[0])
                 for r in rows if r["workload"].endswith("_accepted")
                 and r["value"] > 0}
    unexplained = 0
    for _, items in groups.items():
        for _, rs in items:
            for r in rs:
                if r.get("agree") is not False or r["workload"].endswith("_accepted"):
                    continue
                why = "accepts stale handles" if (
                    r["section"], r["impl"], r["workload"].split("_")[0]
                ) in accepting else "UNEXPLAINED"
                unexplained += why == "UNEXPLAINED"
                print("report: checksum MISMATCH: %s %s n=%d %s (%s)" % (
                    r["section"], r["workload"], r["n"], r["impl"], why),
                    file=sys.stderr)
    if a.readme and a.charts is not None:
        update_readme(a.readme, readme_block(env, groups, made, a.charts, a.readme,
                                             results))
    elif a.readme:
        update_readme(a.readme, readme_block(env, groups, [], ".", a.readme, results))
    if unexplained:
        print("report: %d unexplained checksum mismatch(es): an implementation "
              "or a recipe is wrong" % unexplained, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
