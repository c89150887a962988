package frontend

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRefusals checks that every construct outside the subset in
// testdata/bad is refused at its line, with a message that says what it
// is, and that nothing else there is.
func TestRefusals(t *testing.T) {
	_, err := Load("testdata/bad", ".")
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Load: %v, want an ErrorList", err)
	}
	wants := map[int]string{} // line -> substring
	f, err := os.Open("testdata/bad/bad.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`// want "([^"]+)"`)
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			wants[line] = m[1]
		}
	}
	got := map[int]string{}
	for _, e := range list {
		if filepath.Base(e.Pos.Filename) != "bad.go" {
			t.Errorf("error in %s: %v", e.Pos.Filename, e)
			continue
		}
		got[e.Pos.Line] += e.Msg
		if !strings.Contains(e.Error(), "bad.go:") {
			t.Errorf("error without file:line: %q", e.Error())
		}
	}
	for line, want := range wants {
		if !strings.Contains(got[line], want) {
			t.Errorf("bad.go:%d: got %q, want a message containing %q", line, got[line], want)
		}
	}
	for line, msg := range got {
		if _, ok := wants[line]; !ok {
			t.Errorf("bad.go:%d: unexpected refusal %q", line, msg)
		}
	}
}
