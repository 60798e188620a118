// SPDX-License-Identifier: MIT
package main

import "time"

// go_slicemap: the SliceMap port (slicemap.go). Each element is allocated
// on the heap and saved by pointer, as the Go client article does; iteration goes
// through Range with a callback, the port's only way to iterate.

func smNew() *SliceMap { return NewSliceMap(1024, 1024) }

func smPut(m *SliceMap, id uint64) int64 {
	e := elemMake(id)
	return m.Save(&e, int64(id))
}

func smSum(m *SliceMap) uint64 {
	var s uint64
	m.Range(func(e *Elem) bool {
		s += xbits(e)
		return true
	})
	return s
}

func smCount(m *SliceMap) int {
	return int(m.index) - 1 - len(m.cacheIndex)
}

func smStale(n, runs int) {
	perm := permMake(n)
	h := make([]int64, n)
	s := make([]int64, n/2*2) // probe order: live, stale, alternately
	t := make([]float64, runs)
	var sum, accepted uint64
	run, start := 0, time.Now()
	for ; moreRuns(run, runs, start); run++ {
		m := smNew()
		for i := 0; i < n; i++ {
			h[i] = smPut(m, uint64(i))
		}
		for k := 0; k < n/2; k++ {
			s[2*k+1] = h[perm[k]]
			m.Remove(s[2*k+1])
		}
		for k := 0; k < n/2; k++ {
			h[perm[k]] = smPut(m, uint64(n+k))
			s[2*k] = h[perm[k]]
		}
		sum, accepted = 0, 0
		t0 := time.Now()
		for k := 0; k < n/2; k++ {
			if e := m.Get(s[2*k]); e != nil {
				sum += xbits(e)
			}
			if e := m.Get(s[2*k+1]); e != nil {
				sum += xbits(e)
				accepted++
			}
		}
		t[run] = per(t0, time.Now(), n/2*2)
	}
	staleRows("go_slicemap", n, t[:run], sum, accepted)
}

func smS001(n, runs int) {
	perm := permMake(n)
	h, keys := make([]int64, n), make([]int64, n)
	ti, tg := make([]float64, runs), make([]float64, runs)
	var cnt, sum uint64
	run, start := 0, time.Now()
	for ; moreRuns(run, runs, start); run++ {
		m := smNew()
		t0 := time.Now()
		for i := 0; i < n; i++ {
			h[i] = smPut(m, uint64(i))
		}
		t1 := time.Now()
		cnt, sum = uint64(smCount(m)), 0
		for k := 0; k < n; k++ {
			keys[k] = h[perm[k]]
		}
		t1k := time.Now()
		for k := 0; k < n; k++ {
			if e := m.Get(keys[k]); e != nil {
				sum += xbits(e)
			}
		}
		t2 := time.Now()
		ti[run], tg[run] = per(t0, t1, n), per(t1k, t2, n)
	}
	row("s001_insert", n, "go_slicemap", ti[:run], "ns/op", cnt)
	row("s001_get_random", n, "go_slicemap", tg[:run], "ns/op", sum)
}

func smChurn(live, frames, runs int) {
	h := make([]int64, live)
	tf, tit := make([]float64, runs), make([]float64, runs)
	var check uint64
	m := live / 10
	run, start := 0, time.Now()
	for ; moreRuns(run, runs, start); run++ {
		st, next := uint64(benchSeed), uint64(live)
		c := smNew()
		for i := 0; i < live; i++ {
			h[i] = smPut(c, uint64(i))
		}
		var frameNs, iterNs int64
		check = 0
		for f := 0; f < frames; f++ {
			t0 := time.Now()
			for k := 0; k < m; k++ {
				j := int(benchRand(&st) % uint64(live-k))
				c.Remove(h[j])
				h[j] = h[live-k-1]
			}
			for k := 0; k < m; k++ {
				h[live-m+k] = smPut(c, next)
				next++
			}
			t1 := time.Now()
			check += smSum(c)
			t2 := time.Now()
			frameNs += t2.Sub(t0).Nanoseconds()
			iterNs += t2.Sub(t1).Nanoseconds()
		}
		tf[run] = float64(frameNs) / float64(frames) / 1000
		tit[run] = float64(iterNs) / float64(frames) / 1000
	}
	churnRows("go_slicemap", live, tf[:run], tit[:run], check)
}

func smS000(n, runs int) {
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
		m := smNew()
		t0 := time.Now()
		for i := 0; i < n; i++ {
			h[i] = smPut(m, uint64(i))
		}
		t1 := time.Now()
		if run == 0 {
			mem = memEnd(base, n)
		}
		t1b := time.Now()
		c5[0] = uint64(smCount(m))
		c5[1] = smSum(m)
		t2 := time.Now()
		c5[2] = 0
		for i := 0; i < n; i++ {
			if e := m.Get(h[i]); e != nil {
				c5[2] += xbits(e)
			}
		}
		t3 := time.Now()
		for k := 0; k < n; k++ {
			keys[k] = h[perm[k]]
		}
		c5[3] = 0
		t3k := time.Now()
		for k := 0; k < n; k++ {
			if e := m.Get(keys[k]); e != nil {
				c5[3] += xbits(e)
			}
		}
		t4 := time.Now()
		before := smCount(m)
		for k := 0; k < n; k++ {
			m.Remove(keys[k])
		}
		t5 := time.Now()
		c5[4] = uint64(before - smCount(m))
		s000Store(&t, run, n, t0, t1, t1b, t2, t2, t3, t3k, t4, t4, t5)
	}
	s000Rows("go_slicemap", n, t, run, c5, mem)
}
