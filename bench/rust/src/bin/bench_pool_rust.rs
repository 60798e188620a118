// SPDX-License-Identifier: MIT
//! Section `pool`, Rust peers of ark_pool: slotmap 1.0.6's SlotMap,
//! HopSlotMap and DenseSlotMap, with the same workloads, PRNG, seed and
//! operation order as bench/bench_pool.c (its header comment is the
//! recipe), so the checksums agree. CLI and CSV as bench/bench_common.h;
//! ARK_BENCH_CLOCK=thread times with the thread's CPU clock, as there.
//! Our code, written against slotmap's public API.

use slotmap::{DefaultKey, DenseSlotMap, HopSlotMap, SlotMap};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[path = "../clock.rs"]
mod clock;
use clock::Instant; // std's interface, on ARK_BENCH_CLOCK's clock

/// Per-workload time budget, as in bench_pool.c: stop repeating a workload
/// once it has run this long (after at least one run).
static BUDGET_NS: AtomicU64 = AtomicU64::new(1_000_000_000);

const BENCH_SEED: u64 = 0x2026a4c;
const IMPLS: [&str; 3] = ["SlotMap", "HopSlotMap", "DenseSlotMap"];

#[derive(Clone, Copy)]
struct Elem {
    x: f32,
    #[allow(dead_code)]
    y: f32,
    #[allow(dead_code)]
    vx: f32,
    #[allow(dead_code)]
    vy: f32,
}

#[inline]
fn elem_make(id: u64) -> Elem {
    Elem { x: id as f32, y: (id + 1) as f32, vx: 1.0, vy: -1.0 }
}

#[inline]
fn xbits(e: &Elem) -> u64 {
    e.x.to_bits() as u64
}

#[inline]
fn bench_rand(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e3779b97f4a7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

fn perm_make(n: usize) -> Vec<u32> {
    let mut a: Vec<u32> = (0..n as u32).collect();
    let mut st = BENCH_SEED;
    let mut i = n;
    while i > 1 {
        i -= 1;
        let j = (bench_rand(&mut st) % (i as u64 + 1)) as usize;
        a.swap(i, j);
    }
    a
}

extern "C" {
    fn malloc_trim(pad: usize) -> i32;
}

fn proc_status_kib(key: &str) -> i64 {
    let s = match std::fs::read_to_string("/proc/self/status") {
        Ok(s) => s,
        Err(_) => return -1,
    };
    for line in s.lines() {
        if let Some(rest) = line.strip_prefix(key) {
            if let Some(v) = rest.strip_prefix(':') {
                let num = v.trim().trim_end_matches("kB").trim();
                return num.parse().unwrap_or(-1);
            }
        }
    }
    -1
}

fn peak_reset() {
    // SAFETY: glibc's malloc_trim only returns free heap memory to the OS.
    unsafe {
        malloc_trim(0);
    }
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Format like C's %.4g, closely enough for the CSV readers.
fn g4(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{}", v);
    }
    let e = v.abs().log10().floor() as i32;
    if !(-4..4).contains(&e) {
        return format!("{:.3e}", v);
    }
    let s = format!("{:.*}", (3 - e).max(0) as usize, v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn row(workload: &str, n: usize, imp: &str, runs: &mut [f64], unit: &str, checksum: u64) {
    runs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let k = runs.len();
    let med = if k % 2 == 1 { runs[k / 2] } else { (runs[k / 2 - 1] + runs[k / 2]) / 2.0 };
    println!(
        "pool,{},{},{},{},{},{},{},{},{}",
        workload,
        n,
        imp,
        g4(med),
        g4(runs[0]),
        g4(runs[k - 1]),
        unit,
        proc_status_kib("VmHWM"),
        checksum
    );
}

/// Return true while another run of a workload started at `start` fits
/// in the budget (the first run always does).
fn more_runs(run: usize, start: Instant) -> bool {
    run == 0 || (start.elapsed().as_nanos() as u64) < BUDGET_NS.load(Relaxed)
}

fn per(t0: Instant, t1: Instant, n: f64) -> f64 {
    t1.duration_since(t0).as_nanos() as f64 / n
}

trait Container {
    fn new() -> Self;
    fn insert(&mut self, e: Elem) -> DefaultKey;
    fn get(&self, k: DefaultKey) -> Option<&Elem>;
    fn remove(&mut self, k: DefaultKey);
    fn count(&self) -> usize;
    fn sum(&self) -> u64;
}

macro_rules! container {
    ($t:ident) => {
        impl Container for $t<DefaultKey, Elem> {
            #[inline]
            fn new() -> Self {
                $t::new()
            }
            #[inline]
            fn insert(&mut self, e: Elem) -> DefaultKey {
                $t::insert(self, e)
            }
            #[inline]
            fn get(&self, k: DefaultKey) -> Option<&Elem> {
                $t::get(self, k)
            }
            #[inline]
            fn remove(&mut self, k: DefaultKey) {
                $t::remove(self, k);
            }
            #[inline]
            fn count(&self) -> usize {
                self.len()
            }
            #[inline]
            fn sum(&self) -> u64 {
                let mut s = 0u64;
                for e in self.values() {
                    s = s.wrapping_add(xbits(e));
                }
                s
            }
        }
    };
}
container!(SlotMap);
container!(HopSlotMap);
container!(DenseSlotMap);

fn stale<C: Container>(imp: &str, n: usize, runs: usize) {
    let perm = perm_make(n);
    let mut h = vec![DefaultKey::default(); n];
    // The probe sequence: live handle, stale handle, alternately.
    let mut s = vec![DefaultKey::default(); n / 2 * 2];
    let mut t = vec![0.0; runs];
    let (mut sum, mut accepted) = (0u64, 0u64);
    let start = Instant::now();
    let mut done = 0;
    for run in 0..runs {
        if !more_runs(run, start) {
            break;
        }
        done = run + 1;
        let mut c = C::new();
        for i in 0..n {
            h[i] = c.insert(elem_make(i as u64));
        }
        for k in 0..n / 2 {
            s[2 * k + 1] = h[perm[k] as usize];
            c.remove(s[2 * k + 1]);
        }
        for k in 0..n / 2 {
            h[perm[k] as usize] = c.insert(elem_make((n + k) as u64));
            s[2 * k] = h[perm[k] as usize];
        }
        sum = 0;
        accepted = 0;
        let t0 = Instant::now();
        for k in 0..n / 2 {
            if let Some(e) = c.get(s[2 * k]) {
                sum = sum.wrapping_add(xbits(e));
            }
            if let Some(e) = c.get(s[2 * k + 1]) {
                sum = sum.wrapping_add(xbits(e));
                accepted += 1;
            }
        }
        t[run] = per(t0, Instant::now(), (n / 2 * 2) as f64);
    }
    row("stale_get", n, imp, &mut t[..done], "ns/op", sum);
    row("stale_accepted", n / 2, imp, &mut [accepted as f64], "handles", (n / 2) as u64);
}

fn holes<C: Container>(imp: &str, n: usize, runs: usize) {
    const REPS: usize = 10; // HOLES_REPS in pool_recipe.h
    let perm = perm_make(n);
    let mut h = vec![DefaultKey::default(); n];
    let m = n / 10;
    let live = n - m;
    let mut t = vec![0.0; runs];
    let mut sum = 0u64;
    let start = Instant::now();
    let mut done = 0;
    for run in 0..runs {
        if !more_runs(run, start) {
            break;
        }
        done = run + 1;
        let mut c = C::new();
        for i in 0..n {
            h[i] = c.insert(elem_make(i as u64));
        }
        for k in 0..m {
            c.remove(h[perm[k] as usize]);
        }
        sum = 0;
        let t0 = Instant::now();
        for _ in 0..REPS {
            sum = sum.wrapping_add(c.sum());
        }
        t[run] = per(t0, Instant::now(), (live * REPS) as f64);
    }
    row("holes_iterate", n, imp, &mut t[..done], "ns/elem", sum);
}

fn churn<C: Container>(imp: &str, live: usize, frames: usize, runs: usize) {
    let mut h = vec![DefaultKey::default(); live];
    let (mut tf, mut tit) = (vec![0.0; runs], vec![0.0; runs]);
    let (mut trm, mut tin) = (vec![0.0; runs], vec![0.0; runs]);
    let mut check = 0u64;
    let m = live / 10;
    let start = Instant::now();
    let mut done = 0;
    for run in 0..runs {
        if !more_runs(run, start) {
            break;
        }
        done = run + 1;
        let mut st = BENCH_SEED;
        let mut next = live as u64;
        let mut c = C::new();
        for i in 0..live {
            h[i] = c.insert(elem_make(i as u64));
        }
        let (mut frame_ns, mut iter_ns, mut rm_ns, mut in_ns) = (0u128, 0u128, 0u128, 0u128);
        check = 0;
        for _ in 0..frames {
            let t0 = Instant::now();
            for k in 0..m {
                let j = (bench_rand(&mut st) % (live - k) as u64) as usize;
                c.remove(h[j]);
                h[j] = h[live - k - 1];
            }
            let tr = Instant::now();
            for k in 0..m {
                h[live - m + k] = c.insert(elem_make(next));
                next += 1;
            }
            let t1 = Instant::now();
            check = check.wrapping_add(c.sum());
            let t2 = Instant::now();
            frame_ns += t2.duration_since(t0).as_nanos();
            iter_ns += t2.duration_since(t1).as_nanos();
            rm_ns += tr.duration_since(t0).as_nanos();
            in_ns += t1.duration_since(tr).as_nanos();
        }
        tf[run] = frame_ns as f64 / frames as f64 / 1000.0;
        tit[run] = iter_ns as f64 / frames as f64 / 1000.0;
        trm[run] = rm_ns as f64 / (frames * m) as f64;
        tin[run] = in_ns as f64 / (frames * m) as f64;
    }
    row("churn_frame", live, imp, &mut tf[..done], "us/frame", check);
    row("churn_iterate", live, imp, &mut tit[..done], "us/frame", check);
    row("churn_remove", live, imp, &mut trm[..done], "ns/op", check);
    row("churn_insert", live, imp, &mut tin[..done], "ns/op", check);
}

/// seq (s001 at 1M, s000 at 10M): insert, iterate, get in order, get
/// picks[k] = h[perm[k]] (the handle array in random order, read inside
/// the timed loop), remove picks[k].
fn seq<C: Container>(imp: &str, fam: &str, n: usize, runs: usize) {
    let perm = perm_make(n);
    let mut h = vec![DefaultKey::default(); n];
    let mut picks = vec![DefaultKey::default(); n];
    for k in h.iter_mut().chain(picks.iter_mut()) {
        *k = DefaultKey::default(); // touch every page before measuring
    }
    let mut t: Vec<Vec<f64>> = vec![vec![0.0; runs]; 5];
    let mut c5 = [0u64; 5];
    let mut mem = 0.0;
    let start = Instant::now();
    let mut done = 0;
    for run in 0..runs {
        if !more_runs(run, start) {
            break;
        }
        done = run + 1;
        let mut base = 0;
        if run == 0 {
            peak_reset();
            base = proc_status_kib("VmRSS");
        }
        let mut c = C::new();
        let t0 = Instant::now();
        for i in 0..n {
            h[i] = c.insert(elem_make(i as u64));
        }
        let t1 = Instant::now();
        if run == 0 {
            mem = (proc_status_kib("VmHWM") - base) as f64 * 1024.0 / n as f64;
        }
        c5[0] = c.count() as u64;
        let t1b = Instant::now();
        c5[1] = c.sum();
        let t2 = Instant::now();
        c5[2] = 0;
        for i in 0..n {
            if let Some(e) = c.get(h[i]) {
                c5[2] = c5[2].wrapping_add(xbits(e));
            }
        }
        let t3 = Instant::now();
        for k in 0..n {
            picks[k] = h[perm[k] as usize];
        }
        c5[3] = 0;
        let t3k = Instant::now();
        for k in 0..n {
            if let Some(e) = c.get(picks[k]) {
                c5[3] = c5[3].wrapping_add(xbits(e));
            }
        }
        let t4 = Instant::now();
        let before = c.count();
        for k in 0..n {
            c.remove(picks[k]);
        }
        let t5 = Instant::now();
        c5[4] = (before - c.count()) as u64;
        t[0][run] = per(t0, t1, n as f64);
        t[1][run] = per(t1b, t2, n as f64);
        t[2][run] = per(t2, t3, n as f64);
        t[3][run] = per(t3k, t4, n as f64);
        t[4][run] = per(t4, t5, n as f64);
    }
    let names = ["insert", "iterate", "get_seq", "get_random", "remove_random"];
    for w in 0..5 {
        row(&format!("{}_{}", fam, names[w]), n, imp, &mut t[w][..done], "ns/op", c5[w]);
    }
    row(&format!("{}_memory", fam), n, imp, &mut [mem], "B/elem", n as u64);
}

fn run_all<C: Container>(imp: &str, mode: &str, runs: usize) {
    // sizes_for in pool_recipe.h: s000, s001, churn, stale, holes, frames
    let (n000, n001, churn_ns, stale_n, holes_n, frames) = match mode {
        "smoke" => (10000, 10000, [1000, 10000], 10000, 10000, 2),
        "full" => (10000000, 1000000, [100000, 1000000], 1000000, 1000000, 100),
        _ => (1000000, 100000, [10000, 100000], 100000, 100000, 100),
    };
    peak_reset();
    stale::<C>(imp, stale_n, runs);
    peak_reset();
    holes::<C>(imp, holes_n, runs);
    seq::<C>(imp, "s001", n001, runs);
    for &l in churn_ns.iter() {
        peak_reset();
        churn::<C>(imp, l, frames, runs);
    }
    seq::<C>(imp, "s000", n000, runs);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut mode = "quick".to_string();
    let mut imp: Option<String> = None;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--mode" if i + 1 < args.len() => {
                i += 1;
                mode = args[i].clone();
            }
            "--impl" if i + 1 < args.len() => {
                i += 1;
                imp = Some(args[i].clone());
            }
            "--list-impls" => {
                for name in IMPLS.iter() {
                    println!("{}", name);
                }
                return;
            }
            _ => {
                eprintln!("usage: {} --mode smoke|quick|full [--impl NAME] [--list-impls]", args[0]);
                std::process::exit(2);
            }
        }
        i += 1;
    }
    let runs = if mode == "smoke" { 1 } else { 5 };
    if mode == "full" {
        BUDGET_NS.store(8_000_000_000, Relaxed);
    }
    let sel = |name: &str| imp.as_deref().map_or(true, |x| x == name);
    if sel("SlotMap") {
        run_all::<SlotMap<DefaultKey, Elem>>("SlotMap", &mode, runs);
    }
    if sel("HopSlotMap") {
        run_all::<HopSlotMap<DefaultKey, Elem>>("HopSlotMap", &mode, runs);
    }
    if sel("DenseSlotMap") {
        run_all::<DenseSlotMap<DefaultKey, Elem>>("DenseSlotMap", &mode, runs);
    }
}
