package trace

// Sorting without package sort or slices' generic sorts: each generic
// instantiation or sort's reflection-based swapper adds kilobytes to the
// WebAssembly build, and the lists sorted here are short.

// heapSort sorts n elements in O(n log n) through less and swap.
func heapSort(n int, less func(i, j int) bool, swap func(i, j int)) {
	down := func(root, end int) {
		for {
			child := 2*root + 1
			if child >= end {
				return
			}
			if child+1 < end && less(child, child+1) {
				child++
			}
			if !less(root, child) {
				return
			}
			swap(root, child)
			root = child
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i, n)
	}
	for end := n - 1; end > 0; end-- {
		swap(0, end)
		down(0, end)
	}
}

// insertionSort sorts n elements stably through less and swap: for the
// few files of one session.
func insertionSort(n int, less func(i, j int) bool, swap func(i, j int)) {
	for i := 1; i < n; i++ {
		for j := i; j > 0 && less(j, j-1); j-- {
			swap(j, j-1)
		}
	}
}

// search returns the index of id in ids, sorted, or -1.
func search(ids []string, id string) int {
	lo, hi := 0, len(ids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ids[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(ids) && ids[lo] == id {
		return lo
	}
	return -1
}
