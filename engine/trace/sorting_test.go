package trace

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSorts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		a := make([]int, n)
		for i := range a {
			a[i] = r.IntN(10)
		}
		want := slices.Sorted(slices.Values(a))
		for name, sort := range map[string]func(int, func(i, j int) bool, func(i, j int)){"heap": heapSort, "insertion": insertionSort} {
			got := slices.Clone(a)
			sort(len(got), func(i, j int) bool { return got[i] < got[j] }, func(i, j int) { got[i], got[j] = got[j], got[i] })
			if !slices.Equal(got, want) {
				t.Errorf("%s sort of %v = %v", name, a, got)
			}
		}
	}
}
