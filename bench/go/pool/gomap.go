// SPDX-License-Identifier: MIT
package main

import "time"

// go_map: map[int64]Elem keyed by the element's id; the handle is the id.

func mapSum(m map[int64]Elem) uint64 {
	var s uint64
	for _, e := range m {
		e := e
		s += xbits(&e)
	}
	return s
}

func mapStale(n, runs int) {
	perm := permMake(n)
	h := make([]int64, n)
	s := make([]int64, n/2*2) // probe order: live, stale, alternately
	t := make([]float64, runs)
	var sum, accepted uint64
	run, start := 0, time.Now()
	for ; moreRuns(run, runs, start); run++ {
		m := map[int64]Elem{}
		for i := 0; i < n; i++ {
			m[int64(i)] = elemMake(uint64(i))
			h[i] = int64(i)
		}
		for k := 0; k < n/2; k++ {
			s[2*k+1] = h[perm[k]]
			delete(m, s[2*k+1])
		}
		for k := 0; k < n/2; k++ {
			id := int64(n + k)
			m[id] = elemMake(uint64(id))
			h[perm[k]] = id
			s[2*k] = id
		}
		sum, accepted = 0, 0
		t0 := time.Now()
		for k := 0; k < n/2; k++ {
			if e, ok := m[s[2*k]]; ok {
				sum += xbits(&e)
			}
			if e, ok := m[s[2*k+1]]; ok {
				sum += xbits(&e)
				accepted++
			}
		}
		t[run] = per(t0, time.Now(), n/2*2)
	}
	staleRows("go_map", n, t[:run], sum, accepted)
}

func mapS001(n, runs int) {
	perm := permMake(n)
	h, keys := make([]int64, n), make([]int64, n)
	ti, tg := make([]float64, runs), make([]float64, runs)
	var cnt, sum uint64
	run, start := 0, time.Now()
	for ; moreRuns(run, runs, start); run++ {
		m := map[int64]Elem{}
		t0 := time.Now()
		for i := 0; i < n; i++ {
			m[int64(i)] = elemMake(uint64(i))
			h[i] = int64(i)
		}
		t1 := time.Now()
		cnt, sum = uint64(len(m)), 0
		for k := 0; k < n; k++ {
			keys[k] = h[perm[k]]
		}
		t1k := time.Now()
		for k := 0; k < n; k++ {
			if e, ok := m[keys[k]]; ok {
				sum += xbits(&e)
			}
		}
		t2 := time.Now()
		ti[run], tg[run] = per(t0, t1, n), per(t1k, t2, n)
	}
	row("s001_insert", n, "go_map", ti[:run], "ns/op", cnt)
	row("s001_get_random", n, "go_map", tg[:run], "ns/op", sum)
}

func mapChurn(live, frames, runs int) {
	h := make([]int64, live)
	tf, tit := make([]float64, runs), make([]float64, runs)
	var check uint64
	m := live / 10
	run, start := 0, time.Now()
	for ; moreRuns(run, runs, start); run++ {
		st, next := uint64(benchSeed), int64(live)
		c := map[int64]Elem{}
		for i := 0; i < live; i++ {
			c[int64(i)] = elemMake(uint64(i))
			h[i] = int64(i)
		}
		var frameNs, iterNs int64
		check = 0
		for f := 0; f < frames; f++ {
			t0 := time.Now()
			for k := 0; k < m; k++ {
				j := int(benchRand(&st) % uint64(live-k))
				delete(c, h[j])
				h[j] = h[live-k-1]
			}
			for k := 0; k < m; k++ {
				c[next] = elemMake(uint64(next))
				h[live-m+k] = next
				next++
			}
			t1 := time.Now()
			check += mapSum(c)
			t2 := time.Now()
			frameNs += t2.Sub(t0).Nanoseconds()
			iterNs += t2.Sub(t1).Nanoseconds()
		}
		tf[run] = float64(frameNs) / float64(frames) / 1000
		tit[run] = float64(iterNs) / float64(frames) / 1000
	}
	churnRows("go_map", live, tf[:run], tit[:run], check)
}

func mapS000(n, runs int) {
	perm := permMake(n)
	h, keys := make([]int64, n), make([]int64, n)
	for i := range h {
		h[i], keys[i] = -1, -1 // touch every page before measuring
	}
	t := s000Times(runs)
	var c5 [5]uint64
	var mem float64
	run, start := 0, time.Now()
	for ; moreRuns(run, runs, start); run++ {
		base := memBegin(run)
		m := map[int64]Elem{}
		t0 := time.Now()
		for i := 0; i < n; i++ {
			m[int64(i)] = elemMake(uint64(i))
			h[i] = int64(i)
		}
		t1 := time.Now()
		if run == 0 {
			mem = memEnd(base, n)
		}
		t1b := time.Now()
		c5[0] = uint64(len(m))
		c5[1] = mapSum(m)
		t2 := time.Now()
		c5[2] = 0
		for i := 0; i < n; i++ {
			if e, ok := m[h[i]]; ok {
				c5[2] += xbits(&e)
			}
		}
		t3 := time.Now()
		for k := 0; k < n; k++ {
			keys[k] = h[perm[k]]
		}
		c5[3] = 0
		t3k := time.Now()
		for k := 0; k < n; k++ {
			if e, ok := m[keys[k]]; ok {
				c5[3] += xbits(&e)
			}
		}
		t4 := time.Now()
		before := len(m)
		for k := 0; k < n; k++ {
			delete(m, keys[k])
		}
		t5 := time.Now()
		c5[4] = uint64(before - len(m))
		s000Store(&t, run, n, t0, t1, t1b, t2, t2, t3, t3k, t4, t4, t5)
	}
	s000Rows("go_map", n, t, run, c5, mem)
}
