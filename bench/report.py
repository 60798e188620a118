#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn the benchmark CSV into markdown tables, PNG charts and the dated
docs/benchmarks.md.

usage: report.py CSV [--md OUT.md] [--charts DIR] [--targets TARGETS.csv]
                 [--doc docs/benchmarks.md --doc-charts docs/img]
                 [--headlines]

CSV columns (bench/bench_common.h, plus a header line):
  section,workload,n,impl,value,min,max,unit,peak_rss_kib,checksum

Every value is a cost (time, bytes), and every ratio this script prints
is in one direction: ark's value / the other implementation's value, so
below 1 means ark is faster (or smaller).

Rows repeated by several rounds (bench/run.sh with ROUNDS=k) are merged:
median of the medians, overall min and max. --md writes every table: for
each section / workload / n, each implementation's median with min-max,
ark / it, peak RSS, and whether its checksum agrees with ark's (MISMATCH
if not). --charts writes one PNG per workload (gnuplot; skipped with a
message without it). The machine and toolchain lines come from the .env
file run.sh writes beside the CSV.

The entities section also gets a table of its own (in --md and --doc):
per workload and n, every implementation's ns and its value / the best
peer's (sparse_set, secondary_map, sparse_secondary_map), and on update
ark_pool's and ark_table's value / the arrays floor's.

--doc writes the file the repository keeps (make bench-doc): the run's
date, machine, compilers and flags, the headline tables "ark vs the best
peer", the targets, the entities table, one summary table per section
and a few charts (--doc-charts, the handful named in DOC_CHARTS). --headlines prints the
headline tables alone (README copies them). Nothing else is written: the
script never edits README.

The "Targets" table checks each row of bench/targets.csv (or --targets;
its header comment describes the columns) against the CSV: ratio =
value(num_impl) / value(den_impl) (or num_impl's value alone when
den_impl is empty) compared with the threshold: met or MISSED; "not
measured" when the CSV lacks the workload, the n or an implementation.

Exits 3 when a checksum disagrees with ark's for a reason other than
accepted stale handles. Standard library only.
"""
import argparse
import collections
import csv
import fnmatch
import math
import os
import re
import shutil
import subprocess
import sys

REFERENCE = "ark"

# What each workload measures, in words, for the tables people read (the
# CSV keeps the programs' short names). A workload missing here is shown
# by its CSV name.
LABELS = {
    ("pool", "s000_insert"): "insert, no reserve",
    ("pool", "s000_iterate"): "iterate every element",
    ("pool", "s000_get_seq"): "get, insertion order",
    ("pool", "s000_get_random"): "get, random order",
    ("pool", "s000_remove_random"): "remove, random order",
    ("pool", "s000_memory"): "peak memory while inserting",
    ("pool", "s001_insert"): "insert (handle-map test)",
    ("pool", "s001_get_random"): "get, random order (handle-map test)",
    ("pool", "churn_frame"): "game frame: remove 10%, insert 10%, iterate",
    ("pool", "churn_iterate"): "iterate with 10% holes",
    ("pool", "stale_get"): "get, every other handle stale",
    ("pool", "stale_accepted"): "stale handles accepted (must be 0)",
    ("table", "update"): "update loop over columns",
    ("table", "get_row"): "handle to row, random order",
    ("table", "insert"): "insert a row",
    ("table", "remove10"): "remove 10% of rows (swap and pop)",
    ("idmap", "insert_seq"): "insert, keys 0..n-1",
    ("idmap", "insert_rand"): "insert, random keys",
    ("idmap", "insert_reserve_seq"): "insert after reserve, keys 0..n-1",
    ("idmap", "insert_reserve_rand"): "insert after reserve, random keys",
    ("idmap", "lookup_hit_seq"): "lookup hit, keys 0..n-1",
    ("idmap", "lookup_hit_rand"): "lookup hit, random keys",
    ("idmap", "lookup_miss_seq"): "lookup miss, keys 0..n-1",
    ("idmap", "lookup_miss_rand"): "lookup miss, random keys",
    ("idmap", "iterate_seq"): "iterate, keys 0..n-1",
    ("idmap", "iterate_rand"): "iterate, random keys",
    ("idmap", "remove_seq"): "remove, keys 0..n-1",
    ("idmap", "remove_rand"): "remove, random keys",
    ("entities", "add"): "add a component to every entity",
    ("entities", "get"): "get a component, random order",
    ("entities", "update"): "update: position += velocity, half the entities",
    ("entities", "tags"): "visit the entities with both tags (9%)",
    ("entities", "despawn"): "despawn 10%, components and tags with them",
    ("entities", "sweep"): "sweep: mark 10%, then remove them in one go",
}
# The idset workloads are named B<k>_<what>_<distribution>.
IDSET_WHAT = {
    "B1_at_tput": "id at a position (throughput)",
    "B2_at_lat": "id at a position (latency)",
    "B3_at_seq": "id at each position in order",
    "B4_lb_tput": "lower_bound (throughput)",
    "B4_lb_lat": "lower_bound (latency)",
    "B4h_find_tput": "find (throughput)",
    "B5_insert": "insert one id",
    "B5_insert_p99": "insert one id, 99th percentile",
    "B5_insert_max": "insert one id, worst",
    "B5_allocs": "allocations per insert",
    "B5a_append": "append ids in order",
    "B6_remove": "remove one id",
    "B6_remove_p99": "remove one id, 99th percentile",
    "B6_remove_max": "remove one id, worst",
    "B6p_remove_at": "remove at a position",
    "B7_batch_01pct": "remove 0.1% per frame in one batch",
    "B7_batch_1pct": "remove 1% per frame in one batch",
    "B7_batch_10pct": "remove 10% per frame in one batch",
    "B8_iter": "iterate, per id",
    "B9_mem_fresh": "memory after inserting",
    "B9_mem_churn": "memory after churn",
    "B9_mem_frames": "memory after frames of churn",
    "B10_front": "remove the front id",
    "B10_front_max": "remove the front id, worst",
}
IDSET_DIST = {"D1": "dense ids", "D3": "random 32-bit ids",
              "D5": "ids 256 apart"}


def label(sec, wl):
    """The workload in words, or its CSV name."""
    if (sec, wl) in LABELS:
        return LABELS[(sec, wl)]
    if sec == "idset" and "_" in wl:
        what, dist = wl.rsplit("_", 1)
        if what in IDSET_WHAT and dist in IDSET_DIST:
            return "%s, %s" % (IDSET_WHAT[what], IDSET_DIST[dist])
    return wl


# Peers by the name a reader knows them by, in the headline tables.
PEER_NAMES = {
    "absl_flat_hash_map": "absl::flat_hash_map",
    "absl_flat": "absl::flat_hash_map",
    "unordered_map": "std::unordered_map",
    "unordered_map_reserve": "std::unordered_map + reserve",
    "std_unordered": "std::unordered_map",
    "go_map": "Go map",
    "go_slicemap": "Go SliceMap",
    "plf_colony": "plf::colony",
    "SlotMap": "Rust SlotMap",
    "HopSlotMap": "Rust HopSlotMap",
    "DenseSlotMap": "Rust DenseSlotMap",
    "plain_arrays": "SoA arrays + index",
    "aos": "array of structs + index",
    "flat": "sorted array",
    "croaring": "CRoaring",
    "judy": "Judy1",
    "sparse_set": "sparse set (EnTT design)",
    "secondary_map": "Rust SecondaryMap",
    "sparse_secondary_map": "Rust SparseSecondaryMap",
}


def peer_name(impl):
    return PEER_NAMES.get(impl, impl)


# Implementations that are a floor, not a peer: they keep no handles at
# all (an index into a plain array). The headline tables leave them out
# of "best peer"; every other table shows them.
FLOORS = {("pool", "array"), ("pool", "go_slice"), ("entities", "arrays")}

# A section with several ark implementations names the one its ratios,
# checksums and headline rows take (otherwise: the implementation named
# ark, or the first ark_<x> of the CSV).
SECTION_REF = {"entities": "ark_pool"}

# The entities section's own table (entities_table): its ark
# implementations, its peers, its floor, and its workloads in order.
ENTITIES_ARK = ("ark_pool", "ark_table")
ENTITIES_PEERS = ("sparse_set", "secondary_map", "sparse_secondary_map")
ENTITIES_FLOOR = "arrays"
ENTITIES_WORKLOADS = ("add", "get", "update", "tags", "despawn", "sweep")

# The headline tables: per section, the workloads a newcomer asks about,
# each at the largest n the run measured.
HEADLINES = [
    ("pool", "the pool against slot maps, hash maps and colonies", [
        "s000_insert", "s000_get_random", "s000_iterate",
        "s000_remove_random", "churn_frame", "stale_get", "s000_memory"]),
    ("table", "the table against hand-written arrays with an index table", [
        "update", "get_row", "insert", "remove10"]),
    ("idmap", "the id map against absl::flat_hash_map and std::unordered_map", [
        "insert_rand", "lookup_hit_rand", "lookup_miss_rand", "remove_rand",
        "insert_seq", "lookup_hit_seq", "iterate_rand"]),
    ("idset", "the id set against a sorted array, CRoaring and Judy (dense ids)", [
        "B1_at_tput_D1", "B4_lb_tput_D1", "B8_iter_D1", "B7_batch_1pct_D1",
        "B5_insert_D1", "B6_remove_D1", "B9_mem_fresh_D1"]),
    ("entities", "entities in keyed pools against a sparse set and slotmap's "
     "secondary maps", list(ENTITIES_WORKLOADS)),
]

# README's one compact table (report.py --compact prints it): section,
# workload, the peers to pick the best from (None = every peer but the
# floors) and the row's label.
HASH_MAPS = ("unordered_map", "unordered_map_reserve", "absl_flat_hash_map",
             "go_map")
COMPACT = [
    ("pool", "s000_get_random", HASH_MAPS, "pool: get, random order, vs hash maps"),
    ("pool", "s000_get_random", None, "pool: get, random order"),
    ("pool", "s000_insert", None, "pool: insert"),
    ("pool", "s000_iterate", None, "pool: iterate"),
    ("pool", "s000_remove_random", None, "pool: remove, random order"),
    ("pool", "churn_frame", None, "pool: game frame (remove 10%, insert 10%, iterate)"),
    ("table", ("update", "update_user"), None,
     "table: update loop over columns"),
    ("table", "get_row", None, "table: handle to row, random order"),
    ("idmap", ("insert_rand", "insert_out_rand", "insert_find_rand"), None,
     "idmap: insert, random keys"),
    ("idmap", ("lookup_hit_rand", "lookup_hit_out_rand",
               "lookup_hit_find_rand"), None,
     "idmap: lookup hit, random keys"),
    ("idmap", "insert_seq", None, "idmap: insert, keys 0..n-1"),
    ("idset", ("B1_at_tput_D1", "B2_at_lat_D1"), None,
     "idset: id at a position"),
    ("idset", "B4_lb_tput_D1", None, "idset: lower_bound"),
    ("idset", "B8_iter_D1", None, "idset: iterate"),
    ("idset", "B5_insert_D1", None, "idset: insert one id"),
    ("entities", "add", None, "entities: add a component"),
    ("entities", "get", None, "entities: get a component, random order"),
    ("entities", "update", None, "entities: update (position += velocity)"),
    ("entities", "tags", None, "entities: visit those with two tags"),
    ("entities", "despawn", None, "entities: despawn 10%"),
    ("entities", "sweep", None, "entities: sweep 10% (mark, then remove)"),
]

# The charts docs/benchmarks.md shows (section, workload); each at the
# largest n measured.
DOC_CHARTS = [
    ("pool", "s000_get_random"), ("pool", "s000_iterate"),
    ("pool", "churn_frame"), ("table", "update"),
    ("idmap", "lookup_hit_rand"), ("idset", "B4_lb_tput_D1"),
]


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
    """Add ratio (ark's value / this row's value: below 1, ark is faster
    or smaller) and agreement against the reference row, if any."""
    want = SECTION_REF.get(rs[0]["section"], REFERENCE) if rs else REFERENCE
    ref = next((r for r in rs if r["impl"] == want), None)
    if ref is None:  # a section may name its ark implementation ark_<x>
        ref = next((r for r in rs if r["impl"].startswith(REFERENCE)), None)
    for r in rs:
        r["ratio"] = None
        r["agree"] = None
        if ref is not None:
            if r["value"] != 0:
                r["ratio"] = ref["value"] / r["value"]
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
            out.append("### %s · %s · n = %s (%s)\n" % (
                sec, label(sec, wl), "{:,}".format(n), unit))
            out.append("`%s`; ark / it: below 1, ark is faster\n" % wl)
            out.append("| implementation | median | min–max | ark / it | peak RSS | checksum |")
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


def summary_tables(groups, level="**"):
    """One compact table per section: a row per workload, a column per
    implementation, cells 'median (ark / it)'."""
    out = []
    for sec, items in groups.items():
        impls = impl_order([r for _, rs in items for r in rs])
        note = ("medians; in brackets: ark's value / this one, below 1 = ark "
                "faster or smaller; `!` = checksum disagrees with ark's")
        if level.startswith("#"):
            out.append("%sSection `%s`\n\n%s.\n" % (level, sec, note[0].upper() + note[1:]))
        else:
            out.append("%sSection `%s`%s (%s)\n" % (level, sec, level, note))
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
            out.append("| %s | %s | %s | %s |" % (label(sec, wl), "{:,}".format(n), unit,
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


def charts(groups, outdir, only=None):
    """One PNG per section / workload / n in outdir (only: a set of
    (section, workload, n) to draw, None = all)."""
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
            if only is not None and (sec, wl, n) not in only:
                continue
            rs = sorted(rs, key=lambda r: -r["value"])  # fastest on top
            name = chart_name(sec, wl, n)
            path = os.path.join(outdir, name)
            height = 90 + 26 * len(rs)
            vmax = max([r["max"] for r in rs] + [1e-9])
            script.append("$d << EOD")
            for i, r in enumerate(rs):
                name_ = r["impl"]
                if r.get("agree") is False:
                    name_ += " (checksum MISMATCH)"
                color = "0xd62728" if r["impl"].startswith(REFERENCE) else "0x1f77b4"
                script.append('%d "%s" %g %g %g %s "%s"' % (
                    i, name_, r["value"], r["min"], r["max"], color,
                    num(r["value"])))
            script.append("EOD")
            vmin = min([r["value"] for r in rs if r["value"] > 0] + [vmax])
            # A wide range gets a log scale, so the fast bars stay visible.
            logx = vmax / vmin > 30
            lo = 10 ** math.floor(math.log10(vmin / 1.5)) if logx else 0
            script.append("set terminal pngcairo noenhanced size 720,%d font 'sans,9'" % height)
            script.append("set output '%s'" % path.replace("'", ""))
            script.append("set title '%s: %s, n = %s (%s, median, bars min–max%s)'"
                          % (sec, label(sec, wl).replace("'", ""),
                             "{:,}".format(n), unit,
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
    if not script:
        return []
    res = subprocess.run([gp], input="\n".join(script) + "\n", text=True,
                         capture_output=True)
    if res.returncode != 0:
        print("report: gnuplot failed:\n" + res.stderr[-2000:], file=sys.stderr)
        return []
    return made


def targets_digest(results):
    """The short form of the targets: one row per target, with how many
    measured cells meet it and the best and worst ratio."""
    if not results:
        return []
    rows = collections.OrderedDict()
    for r in results:
        rows.setdefault(r["t"]["label"], []).append(r)
    met = sum(1 for r in results if r["met"] is True)
    missed = sum(1 for r in results if r["met"] is False)
    out = ["**Targets** (bench/targets.csv; a cell is one workload at one "
           "size; ratios are ark's value / the peer's, below 1 = ark "
           "faster or smaller): %d cells met, %d missed\n" % (met, missed),
           "| target | cells met | measured (best – worst) | threshold |",
           "|---|---:|---|---|"]
    for lab, rs in rows.items():
        t = rs[0]["t"]
        got = [r for r in rs if r["ratio"] is not None]
        thr = "%s %g%s" % (t["op"].replace("<=", "≤").replace(">=", "≥"),
                           t["threshold"], "×" if t["den"] else "")
        if not got:
            out.append("| %s | not measured | — | %s |" % (lab, thr))
            continue
        vals = sorted(r["ratio"] for r in got)
        if t["op"] == ">=":
            vals.reverse()
        fmt = (lambda v: "%.2f×" % v) if t["den"] else num
        span = fmt(vals[0]) if len(vals) == 1 else "%s – %s" % (
            fmt(vals[0]), fmt(vals[-1]))
        ok = sum(1 for r in got if r["met"])
        out.append("| %s | %d / %d | %s | %s |" % (lab, ok, len(got), span,
                                                    thr))
    out.append("")
    return out


# docs/benchmarks.md keeps a section's summary to its largest n when the
# section has more rows than this (idset has hundreds); the full report
# (--md) has every row.
DOC_MAX_ROWS = 40


def largest_n_only(groups):
    out = collections.OrderedDict()
    for sec, items in groups.items():
        if len(items) > DOC_MAX_ROWS:
            top = max(n for (_, n, _), _ in items)
            items = [it for it in items if it[0][1] == top]
        out[sec] = items
    return out


def stale_acceptors(rows):
    """{(section, impl)} of the implementations that accepted a stale
    handle in some *_accepted workload."""
    return {(r["section"], r["impl"]) for r in rows
            if r["workload"].endswith("_accepted") and r["value"] > 0}


def headline_tables(groups, rows):
    """One compact table per section: for each headline workload at the
    largest n measured, ark's median, the best peer (floors without
    handles left out) and ark / best peer (below 1 = ark faster)."""
    accepts = stale_acceptors(rows)
    out = []
    for sec, title, wls in HEADLINES:
        items = groups.get(sec)
        if not items:
            continue
        lines = []
        for wl in wls:
            cand = [(n, unit, rs) for (w, n, unit), rs in items if w == wl]
            if not cand:
                continue
            n, unit, rs = max(cand, key=lambda c: c[0])
            ref = annotate(rs)
            peers = [r for r in rs if not r["impl"].startswith(REFERENCE)
                     and (sec, r["impl"]) not in FLOORS]
            if ref is None or not peers:
                continue
            best = min(peers, key=lambda r: (r["value"], r["impl"]))
            name = peer_name(best["impl"])
            if (sec, best["impl"]) in accepts:
                name += " †"
            ratio = ref["value"] / best["value"] if best["value"] else None
            lines.append("| %s | %s | %s | %s | %s %s | %s |" % (
                label(sec, wl), "{:,}".format(n), unit, num(ref["value"]),
                name, num(best["value"]), ratio_text(ratio)))
        if not lines:
            continue
        out.append("**%s%s**\n" % (title[0].upper(), title[1:]))
        out.append("| workload | n | unit | ark | best peer | ark / best |")
        out.append("|---|---:|---|---:|---|---:|")
        out += lines
        out.append("")
    if accepts:
        out.append("† accepts stale handles: a removed element's handle "
                   "still reaches whatever reused its slot, so it skips the "
                   "check ark makes.\n")
    return out


def entities_table(groups, level="###"):
    """The entities section on its own: for each workload and n, every
    implementation's value and, in brackets, its value / the best peer's
    (the fastest of ENTITIES_PEERS), and on update ark / the arrays floor."""
    items = groups.get("entities")
    if not items:
        return []
    seen = impl_order([r for _, rs in items for r in rs])
    cols = [i for i in ENTITIES_ARK + ENTITIES_PEERS if i in seen]
    cols += [i for i in seen if i not in cols and i != ENTITIES_FLOOR]
    arks = [i for i in ENTITIES_ARK if i in seen]
    floor = ENTITIES_FLOOR in seen
    order = {w: k for k, w in enumerate(ENTITIES_WORKLOADS)}
    items = sorted(items, key=lambda it: (order.get(it[0][0], len(order)),
                                          it[0][0], it[0][1]))
    out = ["%s Entities: ark against the best peer\n" % level,
           "ns per entity (update and tags: per matching entity). In "
           "brackets: the value / the best peer's, the best peer being the "
           "fastest of %s; below 1, faster than every peer. `%s` is the "
           "floor of the update loop (two plain arrays of just the matching "
           "entities' components), not a peer; `!` = checksum disagrees "
           "with %s's.\n" % (", ".join(ENTITIES_PEERS), ENTITIES_FLOOR,
                              SECTION_REF["entities"])]
    head = ["workload", "n"] + cols + ["best peer"]
    if floor:
        head += [ENTITIES_FLOOR] + ["%s / %s" % (i, ENTITIES_FLOOR) for i in arks]
    out.append("| " + " | ".join(head) + " |")
    out.append("|---|---:|" + "---:|" * len(cols) + "---|"
               + ("---:|" * (1 + len(arks)) if floor else ""))
    for (wl, n, unit), rs in items:
        annotate(rs)
        by = {r["impl"]: r for r in rs}
        peers = [by[i] for i in ENTITIES_PEERS if i in by]
        best = min(peers, key=lambda r: (r["value"], r["impl"])) if peers else None
        cells = []
        for impl in cols:
            r = by.get(impl)
            if r is None:
                cells.append("")
                continue
            c = num(r["value"])
            if best is not None and best["value"]:
                c += " (%s)" % ratio_text(r["value"] / best["value"])
            if r["agree"] is False:
                c += " !"
            cells.append(c)
        cells.append(peer_name(best["impl"]) if best else "—")
        if floor:
            f = by.get(ENTITIES_FLOOR)
            if f is None or not f["value"]:
                cells += [""] * (1 + len(arks))
            else:
                cells.append(num(f["value"]) + (" !" if f["agree"] is False else ""))
                cells += [ratio_text(by[i]["value"] / f["value"]) if i in by
                          else "—" for i in arks]
        out.append("| %s | %s | %s |" % (label("entities", wl),
                                          "{:,}".format(n), " | ".join(cells)))
    out.append("")
    return out


def compact_row(groups, sec, wl, among, accepts):
    """One workload's README cell at the largest n: (n, unit, ark's row,
    the best peer's row, its stale mark, ark / best), or None."""
    cand = [(n, unit, rs) for (w, n, unit), rs in groups.get(sec, [])
            if w == wl]
    if not cand:
        return None
    n, unit, rs = max(cand, key=lambda c: c[0])
    ref = annotate(rs)
    peers = [r for r in rs if not r["impl"].startswith(REFERENCE)
             and (sec, r["impl"]) not in FLOORS
             and (among is None or r["impl"] in among)]
    if ref is None or not peers:
        return None
    best = min(peers, key=lambda r: (r["value"], r["impl"]))
    mark = " †" if (sec, best["impl"]) in accepts else ""
    ratio = ref["value"] / best["value"] if best["value"] else None
    return n, unit, ref, best, mark, ratio


def compact_table(groups, rows):
    """README's table: one row per COMPACT entry, at the largest n. An
    entry naming several workloads (the loop shapes a user writes for one
    operation) reports the one where ark fares worst."""
    accepts = stale_acceptors(rows)
    out = ["| workload | n | ark | best peer | ark / peer |",
           "|---|---:|---:|---|---:|"]
    for sec, wls, among, lab in COMPACT:
        cells = [compact_row(groups, sec, wl, among, accepts)
                 for wl in ((wls,) if isinstance(wls, str) else wls)]
        cells = [c for c in cells if c is not None]
        if not cells:
            continue
        n, unit, ref, best, mark, ratio = max(
            cells, key=lambda c: (c[5] is not None, c[5] or 0))
        out.append("| %s | %s | %s %s | %s%s %s | %s |" % (
            lab, short_n(n), num(ref["value"]), unit, peer_name(best["impl"]), mark,
            num(best["value"]), ratio_text(ratio)))
    return out


def short_n(n):
    for div, suf in ((1 << 20, "Mi"), (1000000, "M"), (1 << 10, "Ki"), (1000, "K")):
        if n >= div and n % div == 0:
            return "%d%s" % (n // div, suf)
    return "{:,}".format(n)


def doc_text(env, groups, rows, results, made, img_rel, source):
    """docs/benchmarks.md."""
    when = next((l.split(",", 1)[1].strip() for l in env
                 if l.startswith("mode:") and "," in l), "an unknown date")
    mode = next((l.split(",", 1)[0].split(":", 1)[1].strip() for l in env
                 if l.startswith("mode:")), "unknown")
    out = ["# ark benchmark results (%s)" % when, "",
           "<!-- generated by `make bench-doc` (bench/report.py) from the last "
           "run's CSV; do not edit by hand -->", "",
           "One `make bench` run (%s mode, %s), read from `%s`. How the "
           "workloads are built and how to read the tables: "
           "[bench.md](bench.md). To measure your own machine, run `make "
           "bench`: its results go to `build/bench/results/`, and `make "
           "bench-doc` rewrites this page from them." % (mode, when, source),
           "", "Every ratio on this page is **ark's value / the other's "
           "value**: below 1, ark is faster (or smaller); above 1, ark is "
           "slower. Values are medians of up to 5 runs on a shared, noisy "
           "virtual machine: compare within one table, not across pages.",
           "", "## Machine and build", ""]
    out += ["- " + line for line in env if not line.startswith("mode:")]
    out += ["", "## ark vs the best peer", "",
            "Each headline workload at the largest size measured; the best "
            "peer is the fastest other implementation (for the pool, plain "
            "arrays without handles are a floor, not a peer: they are in "
            "the section tables below).", ""]
    out += headline_tables(groups, rows)
    if made:
        out += ["## Charts", ""]
        out += ["![%s: %s, n = %s](%s)" % (s, label(s, w), "{:,}".format(n),
                                          img_rel + "/" + f)
                for s, w, n, f in made]
        out.append("")
    out += ["## Targets", ""]
    out += targets_digest(results)
    out += entities_table(groups, level="##")
    out += ["## Every workload", "",
            "One table per section (idset at its largest size only; the full "
            "report `make bench` writes to `build/bench/results/latest.md` "
            "has every size, min–max, peak RSS and checksums).", ""]
    out += summary_tables(largest_n_only(groups), level="### ")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--md")
    ap.add_argument("--charts")
    ap.add_argument("--doc")
    ap.add_argument("--doc-charts")
    ap.add_argument("--headlines", action="store_true")
    ap.add_argument("--compact", action="store_true")
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
    results = evaluate_targets(load_targets(a.targets), rows)
    if a.compact:
        print("\n".join(compact_table(groups, rows)))
        return 0
    if a.headlines:
        print("\n".join(headline_tables(groups, rows)))
        return 0
    if a.doc:
        made = []
        if a.doc_charts:
            want = set()
            for sec, wl in DOC_CHARTS:
                ns = [n for (w, n, _), _ in groups.get(sec, []) if w == wl]
                if ns:
                    want.add((sec, wl, max(ns)))
            made = charts(groups, a.doc_charts, only=want)
            # Drop this page's charts of sizes the run did not measure, so
            # docs/img/ holds only what the page shows.
            keep = {f for _, _, _, f in made}
            pattern = re.compile(r"^(%s)_\d+\.png$" % "|".join(
                re.escape("%s_%s" % c) for c in DOC_CHARTS))
            if made:
                for f in os.listdir(a.doc_charts):
                    if pattern.match(f) and f not in keep:
                        os.remove(os.path.join(a.doc_charts, f))
        img_rel = os.path.relpath(a.doc_charts or ".",
                                  os.path.dirname(os.path.abspath(a.doc)))
        text = doc_text(env, groups, rows, results, made, img_rel,
                        os.path.relpath(a.csv))
        with open(a.doc, "w") as f:
            f.write(text)
        print("report: wrote %s" % a.doc, file=sys.stderr)
        return 0
    made = charts(groups, a.charts) if a.charts else []
    md = ["# ark benchmark results", "",
          "Generated by bench/report.py from `%s`; do not edit. Ratios are "
          "ark's value / the other's: below 1, ark is faster or smaller."
          % os.path.relpath(a.csv), ""]
    md += ["- " + line for line in env] + [""]
    md += ["## ark vs the best peer", ""] + headline_tables(groups, rows)
    md += targets_table(results)
    md += entities_table(groups, level="##")
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
    print("\n".join(["- " + line for line in env] + [""]
                    + headline_tables(groups, rows) + targets_table(results)))
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
    if unexplained:
        print("report: %d unexplained checksum mismatch(es): an implementation "
              "or a recipe is wrong" % unexplained, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
