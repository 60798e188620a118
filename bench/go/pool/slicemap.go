// SPDX-License-Identifier: MIT
package main

// SliceMap is our port of the Go client article's design (a Go "slice instead of map"
// container), kept as the seed describes it so the bench measures that
// design: a slice of element pointers (nil = empty), a FIFO list of freed
// slot indices reused before fresh ones, slot 0 never used, and a handle
// that is the slot index in the low 32 bits and the caller's key in the
// high 32 bits. Get checks only the slot index, never the key, so a handle
// whose slot was freed and reused is accepted: it returns the new element.
type SliceMap struct {
	index      int64   // next fresh slot
	cacheIndex []int64 // freed slots, reused oldest first
	vs         []*Elem
	max        int64 // len(vs)
	baseAppend int64 // slots added when vs is full
}

func sliceIndex(combined int64) int64 { return combined << 32 >> 32 }

func combine(slot, key int64) int64 { return key<<32 ^ (slot << 32 >> 32) }

// NewSliceMap returns a map with baseMax slots allocated up front.
func NewSliceMap(baseMax, baseAppend int64) *SliceMap {
	if baseAppend <= 0 {
		baseAppend = 1
	}
	return &SliceMap{index: 1, vs: make([]*Elem, baseMax), max: baseMax,
		baseAppend: baseAppend}
}

// Save stores e and returns its handle (slot | key << 32).
func (m *SliceMap) Save(e *Elem, key int64) int64 {
	var slot int64
	if len(m.cacheIndex) > 0 {
		slot = m.cacheIndex[0]
		m.vs[slot] = e
		m.cacheIndex = m.cacheIndex[1:]
	} else {
		for m.index >= m.max {
			m.vs = append(m.vs, make([]*Elem, m.baseAppend)...)
			m.max += m.baseAppend
		}
		slot = m.index
		m.vs[slot] = e
		m.index++
	}
	return combine(slot, key)
}

// Get returns the element in the handle's slot, or nil.
func (m *SliceMap) Get(h int64) *Elem {
	slot := sliceIndex(h)
	if slot >= 0 && slot < m.max {
		return m.vs[slot]
	}
	return nil
}

// Remove empties the handle's slot and queues it for reuse.
func (m *SliceMap) Remove(h int64) bool {
	slot := sliceIndex(h)
	if slot >= 0 && slot < m.max && m.vs[slot] != nil {
		m.vs[slot] = nil
		m.cacheIndex = append(m.cacheIndex, slot)
		return true
	}
	return false
}

// Range calls f on every element in slot order until f returns false.
func (m *SliceMap) Range(f func(*Elem) bool) {
	for i := int64(0); i < m.index; i++ {
		if e := m.vs[i]; e != nil {
			if !f(e) {
				break
			}
		}
	}
}
