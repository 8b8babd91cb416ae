// Package errorfs wraps a vfs.FS to inject faults: any operation (create,
// open, read, write, sync, rename, remove, list, lock) can fail with EIO or
// ENOSPC, and a write can be cut short, by rule or at random with a seed.
// Combined with vfs.MemFS.CrashClone, which loses what was not synced, it
// lets tests reproduce the failures a real disk produces and check what the
// engine promises about them.
//
// Injection is decided per operation by a list of Rules: the first rule
// whose operation kind and path pattern match and whose condition fires
// decides the error. Rules can be switched on and off while the filesystem
// is in use (FS.SetRules), so a test can fail the disk, watch the engine
// react, then "free space" and watch it carry on.
//
// An FS is safe for concurrent use; it counts the faults it injected.
package errorfs

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/strata-db/strata/kv/vfs"
)

// Op is a kind of filesystem operation.
type Op uint16

const (
	OpCreate Op = 1 << iota
	OpOpen
	OpRead
	OpWrite
	OpSync
	OpRename
	OpRemove
	OpList
	OpLock
	OpStat
	OpMkdir

	// OpAny matches every operation; OpWriteAny every operation that
	// changes the disk.
	OpAny      Op = 1<<16 - 1
	OpWriteAny    = OpCreate | OpWrite | OpSync | OpRename | OpRemove | OpMkdir
)

var opNames = map[Op]string{OpCreate: "create", OpOpen: "open", OpRead: "read", OpWrite: "write",
	OpSync: "sync", OpRename: "rename", OpRemove: "remove", OpList: "list", OpLock: "lock", OpStat: "stat", OpMkdir: "mkdir"}

func (o Op) String() string {
	if n, ok := opNames[o]; ok {
		return n
	}
	return fmt.Sprintf("ops(%#x)", uint16(o))
}

// The errors injected. They wrap the syscall errors a real disk returns, so
// errors.Is(err, syscall.EIO) and errors.Is(err, syscall.ENOSPC) hold.
var (
	ErrIO    = fmt.Errorf("errorfs: injected I/O error: %w", syscall.EIO)
	ErrNoSpc = fmt.Errorf("errorfs: injected disk full: %w", syscall.ENOSPC)
)

// Rule decides faults for the operations it matches.
type Rule struct {
	// Ops are the operations the rule applies to.
	Ops Op
	// Path, when not empty, is a filepath.Match pattern against the base
	// name of the file ("*.log", "MANIFEST-*", "000012.sst").
	Path string
	// Prob is the probability that a matching operation fails (1 = always).
	Prob float64
	// After skips the first After matching operations.
	After int64
	// Limit stops the rule after it injected Limit faults (0 = unlimited).
	Limit int64
	// Err is the error returned; nil means ErrIO.
	Err error
	// Short makes a failing write write a random prefix of its bytes
	// before failing, as a disk that filled up in the middle of it does.
	Short bool

	seen, fired atomic.Int64
}

// FS is a vfs.FS that injects faults.
type FS struct {
	inner vfs.FS
	mu    sync.Mutex
	rules []*Rule
	rng   *rand.Rand
	// Injected counts the faults injected.
	Injected atomic.Int64
}

// Wrap returns a fault-injecting FS over inner, with no rules, its random
// choices seeded by seed.
func Wrap(inner vfs.FS, seed uint64) *FS {
	return &FS{inner: inner, rng: rand.New(rand.NewPCG(seed, seed^0xfa17))}
}

// SetRules replaces the rules. SetRules() with none turns injection off.
func (fs *FS) SetRules(rules ...*Rule) {
	fs.mu.Lock()
	fs.rules = rules
	fs.mu.Unlock()
}

// Inner returns the wrapped filesystem.
func (fs *FS) Inner() vfs.FS { return fs.inner }

// maybeFail returns the error to inject for op on path, if any, and for a
// write how many bytes to let through first.
func (fs *FS) maybeFail(op Op, path string, n int) (error, int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	base := filepath.Base(path)
	for _, r := range fs.rules {
		if r.Ops&op == 0 {
			continue
		}
		if r.Path != "" {
			if ok, _ := filepath.Match(r.Path, base); !ok {
				continue
			}
		}
		if r.seen.Add(1) <= r.After {
			continue
		}
		if r.Limit > 0 && r.fired.Load() >= r.Limit {
			continue
		}
		if r.Prob < 1 && fs.rng.Float64() >= r.Prob {
			continue
		}
		r.fired.Add(1)
		fs.Injected.Add(1)
		err := r.Err
		if err == nil {
			err = ErrIO
		}
		short := 0
		if r.Short && op == OpWrite && n > 0 {
			short = fs.rng.IntN(n)
		}
		return &os.PathError{Op: op.String(), Path: path, Err: err}, short
	}
	return nil, 0
}

func (fs *FS) Create(name string) (vfs.File, error) {
	if err, _ := fs.maybeFail(OpCreate, name, 0); err != nil {
		return nil, err
	}
	f, err := fs.inner.Create(name)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, name: name}, nil
}

func (fs *FS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	if err, _ := fs.maybeFail(OpOpen, name, 0); err != nil {
		return nil, err
	}
	f, err := fs.inner.Open(name, opts...)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, name: name}, nil
}

func (fs *FS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.inner.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, name: name}, nil
}

func (fs *FS) Remove(name string) error {
	if err, _ := fs.maybeFail(OpRemove, name, 0); err != nil {
		return err
	}
	return fs.inner.Remove(name)
}

func (fs *FS) Rename(oldname, newname string) error {
	if err, _ := fs.maybeFail(OpRename, newname, 0); err != nil {
		return err
	}
	return fs.inner.Rename(oldname, newname)
}

func (fs *FS) List(dir string) ([]string, error) {
	if err, _ := fs.maybeFail(OpList, dir, 0); err != nil {
		return nil, err
	}
	return fs.inner.List(dir)
}

func (fs *FS) MkdirAll(dir string, perm os.FileMode) error {
	if err, _ := fs.maybeFail(OpMkdir, dir, 0); err != nil {
		return err
	}
	return fs.inner.MkdirAll(dir, perm)
}

func (fs *FS) Stat(name string) (os.FileInfo, error) {
	if err, _ := fs.maybeFail(OpStat, name, 0); err != nil {
		return nil, err
	}
	return fs.inner.Stat(name)
}

func (fs *FS) Lock(name string) (io.Closer, error) {
	if err, _ := fs.maybeFail(OpLock, name, 0); err != nil {
		return nil, err
	}
	return fs.inner.Lock(name)
}

// file injects faults into the operations of one open file.
type file struct {
	vfs.File
	fs   *FS
	name string
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if err, _ := f.fs.maybeFail(OpRead, f.name, len(p)); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *file) Write(p []byte) (int, error) {
	if err, short := f.fs.maybeFail(OpWrite, f.name, len(p)); err != nil {
		n := 0
		if short > 0 {
			n, _ = f.File.Write(p[:short])
		}
		return n, err
	}
	return f.File.Write(p)
}

func (f *file) Sync() error {
	if err, _ := f.fs.maybeFail(OpSync, f.name, 0); err != nil {
		return err
	}
	return f.File.Sync()
}

// IsInjected reports whether err is a fault this package injected.
func IsInjected(err error) bool {
	return errors.Is(err, ErrIO) || errors.Is(err, ErrNoSpc)
}
