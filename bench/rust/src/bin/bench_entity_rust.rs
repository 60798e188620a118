// SPDX-License-Identifier: MIT
//! Section `entities`, Rust peers of ark's keyed pools and tables: slotmap
//! 1.0.6's SecondaryMap and SparseSecondaryMap holding the components of
//! the entities of a SlotMap, with the same workloads, values, draws and
//! checksums as bench/bench_entity.c (its header comment is the recipe).
//! CLI and CSV as bench/bench_common.h; ARK_BENCH_CLOCK=thread times with
//! the thread's CPU clock, as there. Our code, written against slotmap's
//! public API, the way a slotmap user writes it:
//!   - entities: `SlotMap<DefaultKey, u32>` (the value is the entity's
//!     number, as ark's entity pool holds a u32);
//!   - components: `SecondaryMap<DefaultKey, Vec4>` (impl `secondary_map`)
//!     or `SparseSecondaryMap<DefaultKey, Vec4>` (`sparse_secondary_map`);
//!   - tags: `SecondaryMap<DefaultKey, ()>` / `SparseSecondaryMap<..., ()>`;
//!   - update: iterate the velocity map, look the position up;
//!   - tags: iterate the smaller tag map, look the other tag and the
//!     position up;
//!   - despawn and sweep: remove the entity from the SlotMap and, when it
//!     was there, from every secondary map (slotmap has no deferred
//!     removal, so sweep does the same as despawn).

use slotmap::{DefaultKey, SecondaryMap, SlotMap, SparseSecondaryMap};

#[path = "../clock.rs"]
mod clock;
use clock::now_ns;

const BENCH_SEED: u64 = 0x2026a4c;
const IMPLS: [&str; 2] = ["secondary_map", "sparse_secondary_map"];
const WORKS: [&str; NWORK] = ["add", "get", "update", "tags", "despawn", "sweep"];
const NWORK: usize = 6;
const W_ADD: usize = 0;
const W_GET: usize = 1;
const W_UPDATE: usize = 2;
const W_TAGS: usize = 3;
const W_DESPAWN: usize = 4;
const W_SWEEP: usize = 5;
/// Passes of update and tags per run (FRAMES in bench_entity.c).
const FRAMES: usize = 5;

#[derive(Clone, Copy, Default)]
struct Vec4 {
    x: f32,
    y: f32,
    z: f32,
    w: f32,
}

#[inline]
fn pos_of(k: usize) -> Vec4 {
    Vec4 { x: k as f32, y: 2.0f32 * (k as f32), z: 0.0, w: 0.0 }
}

#[inline]
fn vel_of(k: usize) -> Vec4 {
    Vec4 { x: (k & 7) as f32, y: 1.0, z: 0.5, w: 0.0 }
}

#[inline]
fn fbits(f: f32) -> u32 {
    f.to_bits()
}

/// What a position adds to the update and tags checksums: the uint32
/// sum of x's and w's bit patterns (C adds two uint32_t, modulo 2^32).
#[inline]
fn pos_bits(v: &Vec4) -> u64 {
    fbits(v.x).wrapping_add(fbits(v.w)) as u64
}

#[inline]
fn bench_rand(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e3779b97f4a7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// plan_make in bench_entity.c: the same draws in the same order.
struct Plan {
    n: usize,
    has_vel: Vec<bool>,
    tag_a: Vec<bool>,
    tag_b: Vec<bool>,
    perm: Vec<u32>,
    nvel: usize,
    nboth: usize,
}

fn plan_make(n: usize) -> Plan {
    let mut p = Plan {
        n,
        has_vel: vec![false; n],
        tag_a: vec![false; n],
        tag_b: vec![false; n],
        perm: (0..n as u32).collect(),
        nvel: 0,
        nboth: 0,
    };
    let mut st = BENCH_SEED;
    for k in 0..n {
        let r = bench_rand(&mut st);
        p.has_vel[k] = r & 1 != 0;
        p.tag_a[k] = (r >> 8) % 10 < 3;
        p.tag_b[k] = (r >> 24) % 10 < 3;
        p.nvel += p.has_vel[k] as usize;
        p.nboth += (p.tag_a[k] && p.tag_b[k]) as usize;
    }
    let mut k = n;
    while k > 1 {
        let j = (bench_rand(&mut st) % k as u64) as usize;
        p.perm.swap(k - 1, j);
        k -= 1;
    }
    p
}

fn per(t0: u64, t1: u64, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        (t1 - t0) as f64 / n as f64
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let k = v.len();
    if k % 2 == 1 {
        v[k / 2]
    } else {
        (v[k / 2 - 1] + v[k / 2]) / 2.0
    }
}

// ---- CSV ------------------------------------------------------------------

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

/// bench_row: median, min, max of the runs, peak RSS, checksum.
fn row(workload: &str, n: usize, imp: &str, runs: &mut [f64], checksum: u64) {
    let med = median(runs);
    let k = runs.len();
    println!(
        "entities,{},{},{},{},{},{},ns,{},{}",
        workload,
        n,
        imp,
        g4(med),
        g4(runs[0]),
        g4(runs[k - 1]),
        proc_status_kib("VmHWM"),
        checksum
    );
}

/// One run's results: ns per unit of each workload, and checksums.
#[derive(Default)]
struct Outcome {
    ns: [f64; NWORK],
    sum: [u64; NWORK],
}

// ---- the run, once per kind of secondary map ----------------------------

macro_rules! world {
    ($run:ident, $map:ident) => {
        mod $run {
            use super::*;

            type Comp = $map<DefaultKey, Vec4>;
            type Tag = $map<DefaultKey, ()>;

            /// The update loop: iterate the velocities, look the position up.
            #[inline(never)]
            fn update(pos: &mut Comp, vel: &Comp) {
                for (e, v) in vel.iter() {
                    if let Some(p) = pos.get_mut(e) {
                        p.x += v.x;
                        p.y += v.y;
                        p.z += v.z;
                        p.w += v.w;
                    }
                }
            }

            /// Both tags: iterate the smaller tag map, look the other up.
            #[inline(never)]
            fn tags(pos: &mut Comp, a: &Tag, b: &Tag) -> u64 {
                let (small, big) = if a.len() <= b.len() { (a, b) } else { (b, a) };
                let mut n = 0u64;
                for e in small.keys() {
                    if big.contains_key(e) {
                        if let Some(p) = pos.get_mut(e) {
                            p.x += 1.0;
                            n += 1;
                        }
                    }
                }
                n
            }

            fn pos_sum(pos: &Comp, e: &[DefaultKey]) -> u64 {
                let mut s = 0u64;
                for &k in e {
                    s = s.wrapping_add(pos.get(k).map_or(0, pos_bits));
                }
                s
            }

            struct World {
                units: SlotMap<DefaultKey, u32>,
                pos: Comp,
                vel: Comp,
                a: Tag,
                b: Tag,
            }

            impl World {
                /// Remove an entity with its components and tags.
                #[inline]
                fn despawn(&mut self, e: DefaultKey) {
                    if self.units.remove(e).is_some() {
                        self.pos.remove(e);
                        self.vel.remove(e);
                        self.a.remove(e);
                        self.b.remove(e);
                    }
                }

                fn count(&self) -> u64 {
                    (self.units.len() + self.pos.len() + self.vel.len() + self.a.len()
                        + self.b.len()) as u64
                }
            }

            pub(super) fn run(p: &Plan) -> Outcome {
                let mut res = Outcome::default();
                let n = p.n;
                let mut w = World {
                    units: SlotMap::new(),
                    pos: Comp::new(),
                    vel: Comp::new(),
                    a: Tag::new(),
                    b: Tag::new(),
                };
                let e: Vec<DefaultKey> = (0..n).map(|k| w.units.insert(k as u32)).collect();
                // add
                let t0 = now_ns();
                for k in 0..n {
                    w.pos.insert(e[k], pos_of(k));
                }
                let t1 = now_ns();
                res.ns[W_ADD] = per(t0, t1, n);
                // get, random order
                let mut s = 0u64;
                let t0 = now_ns();
                for i in 0..n {
                    s = s.wrapping_add(fbits(w.pos[e[p.perm[i] as usize]].x) as u64);
                }
                let t1 = now_ns();
                res.ns[W_GET] = per(t0, t1, n);
                res.sum[W_GET] = s;
                // velocities and tags, untimed
                for k in 0..n {
                    if p.has_vel[k] {
                        w.vel.insert(e[k], vel_of(k));
                    }
                    if p.tag_a[k] {
                        w.a.insert(e[k], ());
                    }
                    if p.tag_b[k] {
                        w.b.insert(e[k], ());
                    }
                }
                let mut f = [0.0f64; FRAMES];
                for r in 0..FRAMES {
                    let t0 = now_ns();
                    update(&mut w.pos, &w.vel);
                    f[r] = per(t0, now_ns(), p.nvel);
                }
                res.ns[W_UPDATE] = median(&mut f);
                res.sum[W_UPDATE] = pos_sum(&w.pos, &e);
                let mut matches = 0;
                for r in 0..FRAMES {
                    let t0 = now_ns();
                    matches = tags(&mut w.pos, &w.a, &w.b);
                    f[r] = per(t0, now_ns(), p.nboth);
                }
                res.ns[W_TAGS] = median(&mut f);
                res.sum[W_TAGS] = matches.wrapping_add(pos_sum(&w.pos, &e));
                let nd = n / 10;
                let t0 = now_ns();
                for i in 0..nd {
                    w.despawn(e[p.perm[i] as usize]);
                }
                let t1 = now_ns();
                res.ns[W_DESPAWN] = per(t0, t1, nd);
                res.sum[W_DESPAWN] = w.count();
                let t0 = now_ns();
                for i in nd..2 * nd {
                    w.despawn(e[p.perm[i] as usize]);
                }
                let t1 = now_ns();
                res.ns[W_SWEEP] = per(t0, t1, nd);
                res.sum[W_SWEEP] = w.count();
                res
            }
        }
    };
}
world!(secondary, SecondaryMap);
world!(sparse_secondary, SparseSecondaryMap);

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
    // bench_entity.c's main: sizes, runs (every run is a whole world).
    let runs = if mode == "smoke" { 1 } else { 5 };
    let sizes: &[usize] = match mode.as_str() {
        "smoke" => &[1000],
        "full" => &[100000, 1000000],
        _ => &[100000],
    };
    for &n in sizes {
        let p = plan_make(n);
        for (which, name) in IMPLS.iter().enumerate() {
            if imp.as_deref().map_or(false, |x| x != *name) {
                continue;
            }
            let mut t = vec![vec![0.0f64; runs]; NWORK];
            let mut sum = [0u64; NWORK];
            for r in 0..runs {
                let res = if which == 0 { secondary::run(&p) } else { sparse_secondary::run(&p) };
                for w in 0..NWORK {
                    t[w][r] = res.ns[w];
                    sum[w] = res.sum[w];
                }
            }
            for w in 0..NWORK {
                row(WORKS[w], n, name, &mut t[w], sum[w]);
            }
        }
    }
}
