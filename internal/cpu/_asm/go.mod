module github.com/goamp/goamp/internal/cpu/_asm

go 1.26.0

require github.com/mmcloughlin/avo v0.6.0

// x/tools is raised from avo v0.6.0's v0.16.1, which does not compile with
// Go 1.26 (tokeninternal); go generate needs it to build the generators.
require (
	golang.org/x/mod v0.23.0 // indirect
	golang.org/x/sync v0.11.0 // indirect
	golang.org/x/tools v0.30.0 // indirect
)
