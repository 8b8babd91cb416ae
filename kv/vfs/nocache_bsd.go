//go:build freebsd || netbsd || openbsd || dragonfly

package vfs

func noCache(int) {}
