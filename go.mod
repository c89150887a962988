module github.com/goamp/goamp

go 1.26.0

require golang.org/x/sys v0.49.0

require github.com/ebitengine/purego v0.11.3
