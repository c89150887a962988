package readme

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// modulePath is the module whose README this test checks.
const modulePath = "github.com/goamp/goamp"

// TestREADMESnippets builds every ```go block of README.md as doc.go
// describes: go vet and go build on all of them, then each program run.
func TestREADMESnippets(t *testing.T) {
	goBin := lookGo(t)
	root := repoRoot(t)
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippets, err := parseSnippets(string(md))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if len(snippets) == 0 {
		t.Fatal("README.md has no ```go blocks: the test would check nothing (has the fence syntax changed?)")
	}
	mod := writeModule(t, root, snippets)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := vetAndBuild(ctx, goBin, mod, snippets); err != nil {
		if strings.Contains(err.Error(), root+string(filepath.Separator)) {
			t.Fatalf("%v\n(the errors above are in the repository's own packages, which the snippets import)", err)
		}
		t.Fatal(err)
	}
	for _, s := range snippets {
		if s.kind != program {
			continue
		}
		t.Run(fmt.Sprintf("README.md:%d", s.start), func(t *testing.T) {
			runProgram(ctx, t, mod, s)
		})
	}
}

// TestBrokenSnippetFails shows that the check fails, at the right README
// line, when a snippet stops compiling: here a variable declared and not
// used, which go vet reports and the compiler refuses.
func TestBrokenSnippetFails(t *testing.T) {
	goBin := lookGo(t)
	root := repoRoot(t)
	md := strings.Join([]string{
		"# A README", // line 1
		"",
		"```go",
		`import "github.com/goamp/goamp/amp"`, // line 4
		"",
		"v, err := amp.NewArrayView(amp.Extent1(2), []float32{1, 2})", // line 6
		"_ = v",
		"```",
		"",
	}, "\n")
	snippets, err := parseSnippets(md)
	if err != nil {
		t.Fatal(err)
	}
	mod := writeModule(t, root, snippets)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = vetAndBuild(ctx, goBin, mod, snippets)
	if err == nil {
		t.Fatal("a snippet with an unused variable passed go vet and go build")
	}
	if msg := err.Error(); !strings.Contains(msg, "README.md:6") || !strings.Contains(msg, "declared and not used") {
		t.Fatalf("the error does not name README.md:6 and the unused variable:\n%v", err)
	}
}

// TestParseSnippets checks how blocks become packages, without the go
// command.
func TestParseSnippets(t *testing.T) {
	md := strings.Join([]string{
		"```go", // line 1
		"package main",
		"",
		"func main() {}",
		"```",
		"```go", // line 6
		`import "fmt"`,
		"",
		"fmt.Println(1)",
		"// Output: 1",
		"```",
		"```sh", // line 12: not Go, ignored
		"go test ./...",
		"```",
		"```go", // line 15
		`import "testing"`,
		"",
		"func TestX(t *testing.T) {}",
		"```",
		"```go", // line 20
		"type T int",
		"```",
		"  ```go", // line 23: indented, as inside a list
		"  x := 1",
		"  _ = x",
		"  ```",
	}, "\n")
	snippets, err := parseSnippets(md)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		start  int
		kind   kind
		file   string
		output string
	}
	wants := []want{
		{2, program, "main.go", ""},
		{7, program, "main.go", "1"},
		{16, testFile, "snippet_test.go", ""},
		{21, library, "snippet.go", ""},
		{24, program, "main.go", ""},
	}
	if len(snippets) != len(wants) {
		t.Fatalf("%d snippets, want %d", len(snippets), len(wants))
	}
	for i, w := range wants {
		s := snippets[i]
		out := ""
		if s.output != nil {
			out = *s.output
		}
		if s.start != w.start || s.kind != w.kind || s.file != w.file || out != w.output {
			t.Errorf("snippet %d: start %d, kind %v, file %s, output %q; want %d, %v, %s, %q",
				i, s.start, s.kind, s.file, out, w.start, w.kind, w.file, w.output)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), s.file, s.src, 0); err != nil {
			t.Errorf("snippet %d does not parse: %v\n%s", i, err, s.src)
		}
	}
	// The wrapped statements keep their README lines: line 9 of the
	// Markdown is the Println.
	s := snippets[1]
	for i, l := range strings.Split(s.src, "\n") {
		if strings.Contains(l, "Println") && s.lines[i] != 9 {
			t.Errorf("Println maps to README line %d, want 9", s.lines[i])
		}
	}
}

// kind is what the test does with a snippet's package.
type kind int

const (
	program  kind = iota // package main: vetted, built and run
	library              // another package: vetted and built
	testFile             // a _test.go file: vetted
)

func (k kind) String() string {
	return [...]string{"program", "library", "test file"}[k]
}

// snippet is a ```go block made into a package of its own.
type snippet struct {
	start  int      // README line of the block's first line of code
	dir    string   // the package's directory in the temporary module
	file   string   // the file the code goes into
	src    string   // the file's contents
	lines  []int    // README line of each line of src; 0 for lines the test added
	kind   kind     // what the test does with it
	output *string  // expected output of a program; nil if the block has no // Output: comment
	extra  []string // further files of the package, as name and contents pairs
}

// parseSnippets returns a snippet for each ```go block of the Markdown text md.
func parseSnippets(md string) ([]snippet, error) {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	var out []snippet
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " \t")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := lines[i][:len(lines[i])-len(trimmed)]
		info := strings.Fields(strings.TrimPrefix(trimmed, "```"))
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("line %d: a code block that is never closed", i+1)
		}
		if len(info) > 0 && info[0] == "go" {
			code := make([]string, 0, end-i-1)
			for _, l := range lines[i+1 : end] {
				code = append(code, strings.TrimPrefix(l, indent))
			}
			s, err := makeSnippet(i+2, code)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		i = end
	}
	return out, nil
}

// makeSnippet applies the convention of doc.go to the block whose code
// starts on README line start.
func makeSnippet(start int, code []string) (snippet, error) {
	s := snippet{start: start, dir: fmt.Sprintf("readme_line_%d", start), output: expectedOutput(code)}
	var src []string
	add := func(line string, readmeLine int) {
		src = append(src, line)
		s.lines = append(s.lines, readmeLine)
	}
	addCode := func(from, to int) {
		for k := from; k < to; k++ {
			add(code[k], start+k)
		}
	}
	finish := func() snippet {
		s.src = strings.Join(src, "\n") + "\n"
		return s
	}
	body := strings.Join(code, "\n")

	// A whole file.
	if first := firstCode(code); first < len(code) && strings.HasPrefix(strings.TrimSpace(code[first]), "package ") {
		f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", body, parser.SkipObjectResolution)
		if err != nil {
			return s, fmt.Errorf("the block at line %d: %v", start, err)
		}
		s.kind, s.file = classify(f)
		if f.Name.Name != "main" && s.kind == program {
			s.kind = library
		}
		addCode(0, len(code))
		if s.kind == testFile {
			s.extra = []string{"doc.go", "package " + f.Name.Name + "\n"}
		}
		return finish(), nil
	}

	// Top-level declarations.
	if f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", "package snippet\n"+body, parser.SkipObjectResolution); err == nil {
		s.kind, s.file = classify(f)
		pkg := "snippet"
		if s.kind == program {
			pkg = "main"
		}
		add("package "+pkg, 0)
		add("", 0)
		addCode(0, len(code))
		if s.kind == testFile {
			s.extra = []string{"doc.go", "package snippet\n"}
		}
		return finish(), nil
	}

	// Imports, then statements: the statements become func main.
	n := importsEnd(code)
	s.kind, s.file = program, "main.go"
	add("package main", 0)
	add("", 0)
	addCode(0, n)
	add("func main() {", 0)
	addCode(n, len(code))
	add("}", 0)
	return finish(), nil
}

// classify says what a file of declarations is: a program if it declares
// func main, a test file if it declares a TestXxx function, else a library.
func classify(f *ast.File) (kind, string) {
	k := library
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		switch {
		case fn.Name.Name == "main":
			return program, "main.go"
		case strings.HasPrefix(fn.Name.Name, "Test"):
			k = testFile
		}
	}
	if k == testFile {
		return testFile, "snippet_test.go"
	}
	return library, "snippet.go"
}

// firstCode returns the index of the first line that is neither blank nor a
// line comment.
func firstCode(code []string) int {
	for i, l := range code {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "//") {
			return i
		}
	}
	return len(code)
}

// importsEnd returns the index of the line after the block's leading import
// declarations (0 if it has none); comments and blank lines after the last
// one stay with the statements.
func importsEnd(code []string) int {
	end := 0
	for i := 0; i < len(code); i++ {
		l := strings.TrimSpace(code[i])
		switch {
		case l == "" || strings.HasPrefix(l, "//"):
		case l == "import (":
			for i < len(code) && strings.TrimSpace(code[i]) != ")" {
				i++
			}
			end = i + 1
		case strings.HasPrefix(l, "import "):
			end = i + 1
		default:
			return end
		}
	}
	return end
}

// expectedOutput returns the text of the block's "// Output:" comment: the
// rest of its line and the comment lines that follow, each trimmed; nil if
// there is none.
func expectedOutput(code []string) *string {
	for i, l := range code {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "// Output:")
		if !ok {
			continue
		}
		var want []string
		if rest = strings.TrimSpace(rest); rest != "" {
			want = append(want, rest)
		}
		for _, next := range code[i+1:] {
			c, ok := strings.CutPrefix(strings.TrimSpace(next), "//")
			if !ok {
				break
			}
			want = append(want, strings.TrimSpace(c))
		}
		w := strings.Join(want, "\n")
		return &w
	}
	return nil
}

// lookGo returns the go command's path, or skips the test without one.
func lookGo(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("SKIP: no go command on PATH to build the README's snippets with: %v", err)
	}
	return goBin
}

// repoRoot returns the directory of the module this test belongs to.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modLine(data, "module") == modulePath {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %s above the test's directory", modulePath)
		}
		dir = parent
	}
}

// modLine returns the argument of the first go.mod line that starts with
// directive ("module", "go").
func modLine(gomod []byte, directive string) string {
	sc := bufio.NewScanner(strings.NewReader(string(gomod)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == directive {
			return f[1]
		}
	}
	return ""
}

// writeModule writes the temporary module: go.mod requiring the repository
// through a replace directive, the repository's go.sum, and a directory per
// snippet. It returns the module's directory.
func writeModule(t *testing.T, root string, snippets []snippet) string {
	t.Helper()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	files := map[string]string{
		"go.mod": fmt.Sprintf("module readmesnippets\n\ngo %s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n",
			modLine(gomod, "go"), modulePath, modulePath, strconv.Quote(root)),
		"go.sum": string(gosum),
	}
	for _, s := range snippets {
		files[filepath.Join(s.dir, s.file)] = s.src
		for i := 0; i+1 < len(s.extra); i += 2 {
			files[filepath.Join(s.dir, s.extra[i])] = s.extra[i+1]
		}
	}
	for name, data := range files {
		path := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return mod
}

// goEnv is the environment of the go commands: nothing downloaded, no
// workspace, no other toolchain.
func goEnv() []string {
	return append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
}

// vetAndBuild runs go vet and go build on every snippet of the module in
// mod, leaving the programs in mod/bin. Its error quotes the go command's
// output with the snippets' files and lines turned into README lines.
func vetAndBuild(ctx context.Context, goBin, mod string, snippets []snippet) error {
	for _, args := range [][]string{
		{"vet", "./..."},
		{"build", "-o", filepath.Join(mod, "bin") + string(filepath.Separator), "./..."},
	} {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = mod
		cmd.Env = goEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("go %s in the snippets' module: %v\n%s", strings.Join(args, " "), err, toREADMELines(string(out), snippets))
		}
	}
	return nil
}

// fileLine matches a position in a snippet's file in the go command's output.
var fileLine = regexp.MustCompile(`(?:[^\s:]*/)?(readme_line_\d+)/([\w.]+\.go):(\d+)(?::\d+)?`)

// toREADMELines rewrites positions in the snippets' files as README lines.
func toREADMELines(out string, snippets []snippet) string {
	byFile := map[string]snippet{}
	for _, s := range snippets {
		byFile[s.dir+"/"+s.file] = s
	}
	return fileLine.ReplaceAllStringFunc(out, func(m string) string {
		sub := fileLine.FindStringSubmatch(m)
		s, ok := byFile[sub[1]+"/"+sub[2]]
		n, _ := strconv.Atoi(sub[3])
		if !ok || n < 1 || n > len(s.lines) || s.lines[n-1] == 0 {
			return m
		}
		return fmt.Sprintf("README.md:%d (%s)", s.lines[n-1], m)
	})
}

// runProgram runs a program snippet on the CPU accelerator and compares its
// output with the block's // Output: comment, if it has one.
func runProgram(ctx context.Context, t *testing.T, mod string, s snippet) {
	exe := filepath.Join(mod, "bin", s.dir)
	cmd := exec.CommandContext(ctx, exe)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOAMP_DEVICE=cpu")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("running the block at README.md:%d: %v", s.start, err)
		}
		t.Fatalf("the block at README.md:%d: %v\nstdout:\n%s\nstderr:\n%s", s.start, err, stdout.String(), stderr.String())
	}
	if s.output == nil {
		return
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		got = append(got, strings.TrimSpace(l))
	}
	if g := strings.Join(got, "\n"); g != *s.output {
		t.Errorf("the block at README.md:%d printed\n%s\nwant (its // Output: comment)\n%s", s.start, g, *s.output)
	}
}
