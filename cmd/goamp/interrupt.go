package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// writing is held while a result file is being written. A signal handler
// that wants the process gone takes it too, so the process never ends
// between a temporary file's creation and its removal or rename.
var writing sync.Mutex

// catchInterrupts returns a context that is cancelled when the process gets
// SIGINT, SIGTERM or SIGHUP, and ends the process then as the signal would
// have (exit status 128+signal) — but only once a result being written has
// stopped and removed its temporary file, so that an interrupted run leaves
// nothing behind. A second signal ends the process at once.
func catchInterrupts() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		signal.Reset() // a second signal takes its default action
		cancel()       // a write in progress stops and cleans up...
		writing.Lock() // ...and lets go when it has
		status := 1
		if s, ok := sig.(syscall.Signal); ok {
			status = 128 + int(s)
		}
		os.Exit(status)
	}()
	return ctx
}

// whileWriting runs write holding writing, unless ctx is already cancelled.
func whileWriting(ctx context.Context, write func() error) error {
	writing.Lock()
	defer writing.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	return write()
}
