// SPDX-License-Identifier: MIT
//! The clock of the Rust peers, as bench_now_ns in bench/bench_common.h:
//! monotonic wall time, or with ARK_BENCH_CLOCK=thread in the environment
//! the CPU time of the calling thread (which leaves out the time other
//! processes took the core). Included by each program in src/bin/ with
//! `#[path = "../clock.rs"] mod clock;`. The programs are single-threaded.
#![allow(dead_code)] // each program uses a part of it

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clk: i32, ts: *mut Timespec) -> i32;
}

// Linux's clock ids.
const CLOCK_MONOTONIC: i32 = 1;
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

fn clock_id() -> i32 {
    static mut CLK: i32 = -1;
    // SAFETY: the programs have one thread; CLK is set on first use.
    unsafe {
        if CLK < 0 {
            let thread = std::env::var("ARK_BENCH_CLOCK").map_or(false, |v| v == "thread");
            CLK = if thread { CLOCK_THREAD_CPUTIME_ID } else { CLOCK_MONOTONIC };
        }
        CLK
    }
}

/// Now, in nanoseconds, on the clock ARK_BENCH_CLOCK chooses.
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec for clock_gettime to fill.
    unsafe {
        clock_gettime(clock_id(), &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A point in time on that clock, with the part of std::time::Instant's
/// interface the programs use.
#[derive(Clone, Copy)]
pub struct Instant(u64);

/// A span between two Instants.
pub struct Span(u64);

impl Instant {
    #[inline]
    pub fn now() -> Instant {
        Instant(now_ns())
    }
    #[inline]
    pub fn duration_since(&self, earlier: Instant) -> Span {
        Span(self.0.saturating_sub(earlier.0))
    }
    #[inline]
    pub fn elapsed(&self) -> Span {
        Instant::now().duration_since(*self)
    }
}

impl Span {
    #[inline]
    pub fn as_nanos(&self) -> u128 {
        self.0 as u128
    }
}
