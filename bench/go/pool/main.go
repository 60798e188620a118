// SPDX-License-Identifier: MIT
// Go peers of the ark benchmarks: one main package per section in a
// subdirectory (bench/go/<section>); bench/run.sh builds each into
// build/bench/go/bench_<section>_go and runs it.

// Section `pool`, Go peers of ark_pool: the Go map, a Go slice and our
// port of the Go client article's SliceMap, with the same workloads, PRNG, seed and
// operation order as bench/bench_pool.c (its header comment is the
// recipe), so the checksums agree. CLI and CSV as bench/bench_common.h.
//
// Each implementation's workloads are written out by hand (no interface
// or generic container in the loops) so no indirect call is timed.
package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"
)

const benchSeed = 0x2026a4c

// Elem is the 16-byte element every implementation stores.
type Elem struct{ X, Y, VX, VY float32 }

func elemMake(id uint64) Elem {
	return Elem{float32(id), float32(id + 1), 1, -1}
}

func xbits(e *Elem) uint64 { return uint64(math.Float32bits(e.X)) }

func benchRand(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func permMake(n int) []uint32 {
	a := make([]uint32, n)
	for i := range a {
		a[i] = uint32(i)
	}
	st := uint64(benchSeed)
	for i := n - 1; i >= 1; i-- {
		j := int(benchRand(&st) % uint64(i+1))
		a[i], a[j] = a[j], a[i]
	}
	return a
}

func procStatusKiB(key string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, key+":") {
			f := strings.Fields(line[len(key)+1:])
			if len(f) > 0 {
				v, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return v
				}
			}
		}
	}
	return -1
}

// peakReset returns free memory to the OS and resets the kernel's peak-RSS
// mark, so the peak printed with the next rows is that workload's.
func peakReset() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

func row(workload string, n int, impl string, runs []float64, unit string,
	checksum uint64) {
	sort.Float64s(runs)
	k := len(runs)
	med := runs[k/2]
	if k%2 == 0 {
		med = (runs[k/2-1] + runs[k/2]) / 2
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	fmt.Printf("pool,%s,%d,%s,%s,%s,%s,%s,%d,%d\n", workload, n, impl,
		g(med), g(runs[0]), g(runs[k-1]), unit, procStatusKiB("VmHWM"),
		checksum)
}

// budget is the per-workload time budget, as in bench_pool.c: a workload
// stops repeating once it has run this long (after at least one run).
var budget = time.Second

func moreRuns(run, runs int, start time.Time) bool {
	return run < runs && (run == 0 || time.Since(start) < budget)
}

func per(t0, t1 time.Time, n int) float64 {
	return float64(t1.Sub(t0).Nanoseconds()) / float64(n)
}

func s000Times(runs int) [5][]float64 {
	var t [5][]float64
	for w := range t {
		t[w] = make([]float64, runs)
	}
	return t
}

// s000Store stores the five phase times of one s000 run from ten
// timestamps, each phase's begin and end (untimed work, such as building
// the probe-order key stream, happens between one's end and the next's
// begin).
func s000Store(t *[5][]float64, run, n int, ts ...time.Time) {
	for w := 0; w < 5; w++ {
		t[w][run] = per(ts[2*w], ts[2*w+1], n)
	}
}

func s000Rows(impl string, n int, t [5][]float64, runs int, c5 [5]uint64,
	mem float64) {
	names := []string{"s000_insert", "s000_iterate", "s000_get_seq",
		"s000_get_random", "s000_remove_random"}
	for w, name := range names {
		row(name, n, impl, t[w][:runs], "ns/op", c5[w])
	}
	row("s000_memory", n, impl, []float64{mem}, "B/elem", uint64(n))
}

func churnRows(impl string, live int, tf, tit []float64, check uint64) {
	row("churn_frame", live, impl, tf, "us/frame", check)
	row("churn_iterate", live, impl, tit, "us/frame", check)
}

func staleRows(impl string, n int, t []float64, sum, accepted uint64) {
	row("stale_get", n, impl, t, "ns/op", sum)
	row("stale_accepted", n/2, impl, []float64{float64(accepted)}, "handles",
		uint64(n/2))
}

// memBegin starts the memory measurement of a workload's first run.
func memBegin(run int) int64 {
	if run != 0 {
		return 0
	}
	peakReset()
	return procStatusKiB("VmRSS")
}

// memEnd returns the bytes per element the peak RSS grew by since base.
func memEnd(base int64, n int) float64 {
	return float64(procStatusKiB("VmHWM")-base) * 1024 / float64(n)
}

type sizes struct {
	s000, s001 int
	churn      [2]int
	stale      int
	frames     int
}

func sizesFor(mode string) sizes {
	switch mode {
	case "smoke":
		return sizes{10000, 10000, [2]int{1000, 10000}, 10000, 2}
	case "full":
		return sizes{10000000, 1000000, [2]int{100000, 1000000}, 1000000, 100}
	}
	return sizes{1000000, 100000, [2]int{10000, 100000}, 100000, 100}
}

// workloads is one implementation's set, run smallest first.
type workloads struct {
	stale, s001, s000 func(n, runs int)
	churn             func(live, frames, runs int)
}

func runAll(w workloads, s sizes, runs int) {
	if w.stale != nil {
		peakReset()
		w.stale(s.stale, runs)
	}
	peakReset()
	w.s001(s.s001, runs)
	for _, l := range s.churn {
		peakReset()
		w.churn(l, s.frames, runs)
	}
	w.s000(s.s000, runs)
}

func main() {
	impls := []string{"go_map", "go_slice", "go_slicemap"}
	sets := map[string]workloads{
		"go_map":      {mapStale, mapS001, mapS000, mapChurn},
		"go_slice":    {nil, sliceS001, sliceS000, sliceChurn},
		"go_slicemap": {smStale, smS001, smS000, smChurn},
	}
	mode, impl := "quick", ""
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--mode" && i+1 < len(args):
			i++
			mode = args[i]
		case args[i] == "--impl" && i+1 < len(args):
			i++
			impl = args[i]
		case args[i] == "--list-impls":
			for _, name := range impls {
				fmt.Println(name)
			}
			return
		default:
			fmt.Fprintf(os.Stderr, "usage: %s --mode smoke|quick|full "+
				"[--impl NAME] [--list-impls]\n", os.Args[0])
			os.Exit(2)
		}
	}
	runs := 5
	if mode == "smoke" {
		runs = 1
	}
	if mode == "full" {
		budget = 8 * time.Second
	}
	for _, name := range impls {
		if impl == "" || impl == name {
			runAll(sets[name], sizesFor(mode), runs)
		}
	}
}
