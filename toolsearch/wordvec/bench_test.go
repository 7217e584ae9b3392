package wordvec

import (
	"runtime"
	"strings"
	"testing"
)

// BenchmarkLoad is the first use's cost: reading the embedded model.
// kept-MB is the heap it keeps, measured.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var m *Model
	for b.Loop() {
		var err error
		if m, err = Read(strings.NewReader(embedded)); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "kept-MB")
	runtime.KeepAlive(m)
}
