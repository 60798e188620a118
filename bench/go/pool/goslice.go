// SPDX-License-Identifier: MIT
package main

import "time"

// go_slice: a []Elem grown by append, index access, swap-and-pop removal;
// Go's floor, like the C array. No handles, so no stale workload.

func sliceSum(v []Elem) uint64 {
	var s uint64
	for i := range v {
		s += xbits(&v[i])
	}
	return s
}

func sliceS001(n, runs int) {
	perm := permMake(n)
	ti, tg := make([]float64, runs), make([]float64, runs)
	var cnt, sum uint64
	run, start := 0, time.Now()
	for ; moreRuns(run, runs, start); run++ {
		var v []Elem
		t0 := time.Now()
		for i := 0; i < n; i++ {
			v = append(v, elemMake(uint64(i)))
		}
		t1 := time.Now()
		cnt, sum = uint64(len(v)), 0
		for k := 0; k < n; k++ {
			sum += xbits(&v[perm[k]])
		}
		t2 := time.Now()
		ti[run], tg[run] = per(t0, t1, n), per(t1, t2, n)
	}
	row("s001_insert", n, "go_slice", ti[:run], "ns/op", cnt)
	row("s001_get_random", n, "go_slice", tg[:run], "ns/op", sum)
}

func sliceChurn(live, frames, runs int) {
	tf, tit := make([]float64, runs), make([]float64, runs)
	var check uint64
	m := live / 10
	run, start := 0, time.Now()
	for ; moreRuns(run, runs, start); run++ {
		st, next := uint64(benchSeed), uint64(live)
		var v []Elem
		for i := 0; i < live; i++ {
			v = append(v, elemMake(uint64(i)))
		}
		var frameNs, iterNs int64
		check = 0
		for f := 0; f < frames; f++ {
			t0 := time.Now()
			for k := 0; k < m; k++ {
				j := int(benchRand(&st) % uint64(live-k))
				v[j] = v[len(v)-1]
				v = v[:len(v)-1]
			}
			for k := 0; k < m; k++ {
				v = append(v, elemMake(next))
				next++
			}
			t1 := time.Now()
			check += sliceSum(v)
			t2 := time.Now()
			frameNs += t2.Sub(t0).Nanoseconds()
			iterNs += t2.Sub(t1).Nanoseconds()
		}
		tf[run] = float64(frameNs) / float64(frames) / 1000
		tit[run] = float64(iterNs) / float64(frames) / 1000
	}
	churnRows("go_slice", live, tf[:run], tit[:run], check)
}

func sliceS000(n, runs int) {
	perm := permMake(n)
	t := s000Times(runs)
	var c5 [5]uint64
	var mem float64
	run, start := 0, time.Now()
	for ; moreRuns(run, runs, start); run++ {
		base := memBegin(run)
		var v []Elem
		t0 := time.Now()
		for i := 0; i < n; i++ {
			v = append(v, elemMake(uint64(i)))
		}
		t1 := time.Now()
		if run == 0 {
			mem = memEnd(base, n)
		}
		t1b := time.Now()
		c5[0] = uint64(len(v))
		c5[1] = sliceSum(v)
		t2 := time.Now()
		c5[2] = 0
		for i := 0; i < n; i++ {
			c5[2] += xbits(&v[i])
		}
		t3 := time.Now()
		c5[3] = 0
		for k := 0; k < n; k++ {
			c5[3] += xbits(&v[perm[k]])
		}
		t4 := time.Now()
		before := len(v)
		for k := 0; k < n; k++ {
			pos := int(perm[k]) % len(v)
			v[pos] = v[len(v)-1]
			v = v[:len(v)-1]
		}
		t5 := time.Now()
		c5[4] = uint64(before - len(v))
		s000Store(&t, run, n, t0, t1, t1b, t2, t2, t3, t3, t4, t4, t5)
	}
	s000Rows("go_slice", n, t, run, c5, mem)
}
