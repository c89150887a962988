package frontend

import (
	"testing"
)

func TestLoadGood(t *testing.T) {
	pkg, err := Load("testdata/good", ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range pkg.Kernels {
		t.Logf("%s tiled=%v args=%d", k.Name, k.Tiled, len(k.Args))
		if testing.Verbose() && k.GoName == "Transpose" {
			t.Log(k.Funcs[2])
		}
	}
}
