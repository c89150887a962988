//go:build linux && (amd64 || arm64)

package cublas

import (
	"testing"

	"github.com/ebitengine/purego"
)

// TestBindings binds every entry point's Go signature to a dummy address,
// never called: purego refuses a signature with more arguments than it
// can pass (the strided batches take 18) when it binds, which on a machine
// without cuBLAS would otherwise show only on the GPU machine, at Open.
func TestBindings(t *testing.T) {
	var l library
	names := map[string]bool{}
	for _, s := range l.symbols() {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: purego cannot bind its signature: %v", s.name, r)
				}
			}()
			purego.RegisterFunc(s.fn, 1)
		}()
		names[s.name] = true
	}
	for _, want := range []string{"cublasSgemm_v2", "cublasDgemm_v2", "cublasSgemmStridedBatched", "cublasDgemmStridedBatched"} {
		if !names[want] {
			t.Errorf("%s is not bound", want)
		}
	}
	if l.sgemmStridedBatched == nil || l.dgemmStridedBatched == nil {
		t.Error("the strided batches were not bound")
	}
}
