//go:build !linux && !darwin

package npy

// machineMemory reports the memory as unknown: there is no portable way to
// learn it here.
func machineMemory() int64 { return -1 }
