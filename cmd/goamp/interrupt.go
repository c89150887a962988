package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// writing is held while a file is being written, or a probe file made and
// removed. A signal handler that wants the process gone takes it too, so the
// process never ends between a temporary file's creation and its removal or
// rename.
var writing sync.Mutex

// catchInterrupts returns a context that is cancelled when the process gets
// SIGINT, SIGTERM or SIGHUP, and ends the process then by that signal — but
// only once a file being written has stopped and removed its temporary
// file, so that an interrupted run leaves nothing behind. A signal that was
// ignored when goamp started (nohup, a background job of a script) stays
// ignored. A second signal ends the process at once.
func catchInterrupts() context.Context {
	var caught []os.Signal
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			caught = append(caught, s)
		}
	}
	if len(caught) == 0 {
		return context.Background()
	}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, caught...)
	go func() {
		sig := <-sigs
		signal.Reset(caught...) // a second signal takes its default action
		cancel()                // a write in progress stops and cleans up...
		writing.Lock()          // ...and lets go when it has
		dieBy(sig)
	}()
	return ctx
}

// dieBy ends the process by sig, as if it had not been caught: a shell that
// runs goamp in a loop sees it killed by the signal, and stops the loop on
// Ctrl-C, where an ordinary exit status would tell it goamp handled it. Where
// a process cannot signal itself, it exits with status 128+signal.
func dieBy(sig os.Signal) {
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(sig) == nil {
		time.Sleep(time.Second) // the signal's default action ends the process
	}
	status := 1
	if s, ok := sig.(syscall.Signal); ok {
		status = 128 + int(s)
	}
	os.Exit(status)
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
