#!/usr/bin/env python3
"""Turn the benchmark CSV into markdown tables, PNG charts and README's block.

usage: report.py CSV [--md OUT.md] [--charts DIR] [--readme README.md]

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
"""
import argparse
import collections
import csv
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


def readme_block(env, groups, made, chart_dir, readme):
    rel = os.path.relpath(chart_dir, os.path.dirname(os.path.abspath(readme)))
    out = [BEGIN,
           "<!-- generated by bench/report.py from the CSV; do not edit -->",
           ""]
    out += ["- " + line for line in env]
    out.append("")
    out += summary_tables(groups)
    for sec, wl, n, name in made:
        out.append("![%s %s n=%d](%s)" % (sec, wl, n, os.path.join(rel, name)))
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
    md = ["# ark benchmark results", "",
          "Generated by bench/report.py from `%s`; do not edit." % a.csv, ""]
    md += ["- " + line for line in env] + [""]
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
    print("\n".join(["- " + line for line in env] + [""] + summary_tables(groups)))
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
        update_readme(a.readme, readme_block(env, groups, made, a.charts, a.readme))
    elif a.readme:
        update_readme(a.readme, readme_block(env, groups, [], ".", a.readme))
    if unexplained:
        print("report: %d unexplained checksum mismatch(es): an implementation "
              "or a recipe is wrong" % unexplained, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
