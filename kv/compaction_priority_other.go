//go:build !linux

package kv

const threadPrioritySupported = false

func lowerThreadPriority(CompactionPriority) error { return nil }
