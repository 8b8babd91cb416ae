package vfs

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// MemFS is an in-memory filesystem that remembers, for every file, which
// bytes were synced and, for every directory, which entries were synced, so
// that [MemFS.CrashClone] can produce what a disk would hold after a power
// failure. Paths are slash-separated; relative paths are taken from the root.
type MemFS struct {
	mu    sync.Mutex
	root  *memNode
	locks map[string]bool
}

// NewMem returns an empty in-memory filesystem.
func NewMem() *MemFS {
	return &MemFS{root: newMemDir(), locks: map[string]bool{}}
}

// memNode is a file or a directory. A file's data is guarded by its own
// mutex so that reads of different files do not contend; the tree shape is
// guarded by MemFS.mu.
type memNode struct {
	isDir bool

	// Directories. REQUIRES: MemFS.mu held.
	children map[string]*memNode
	synced   map[string]*memNode // the entries as of the last directory Sync

	// Files.
	mu      sync.RWMutex
	data    []byte
	synced0 int // bytes of data that were synced: a prefix, since files are append-only
	modTime time.Time
}

func newMemDir() *memNode {
	return &memNode{isDir: true, children: map[string]*memNode{}, synced: map[string]*memNode{}}
}

func splitPath(name string) []string {
	name = path.Clean("/" + name)
	if name == "/" {
		return nil
	}
	return strings.Split(name[1:], "/")
}

// walkLocked returns the directory holding the last element of name, and
// that element. REQUIRES: fs.mu held.
func (fs *MemFS) walkLocked(name string) (*memNode, string, error) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, "", &os.PathError{Op: "open", Path: name, Err: errors.New("is the root")}
	}
	dir := fs.root
	for _, p := range parts[:len(parts)-1] {
		n, ok := dir.children[p]
		if !ok || !n.isDir {
			return nil, "", &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
		}
		dir = n
	}
	return dir, parts[len(parts)-1], nil
}

// Create implements FS.
func (fs *MemFS) Create(name string) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.walkLocked(name)
	if err != nil {
		return nil, err
	}
	if n, ok := dir.children[base]; ok && n.isDir {
		return nil, &os.PathError{Op: "create", Path: name, Err: errors.New("is a directory")}
	}
	// A new node, as a new inode: a crash before the directory is synced
	// keeps whatever the old entry pointed to.
	n := &memNode{modTime: time.Now()}
	dir.children[base] = n
	return &memFile{name: name, n: n, write: true}, nil
}

// Open implements FS. Options are accepted and have no effect.
func (fs *MemFS) Open(name string, opts ...OpenOption) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.walkLocked(name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.children[base]
	if !ok {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	if n.isDir {
		return nil, &os.PathError{Op: "open", Path: name, Err: errors.New("is a directory")}
	}
	return &memFile{name: name, n: n}, nil
}

// OpenDir implements FS.
func (fs *MemFS) OpenDir(name string) (File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.root
	if parts := splitPath(name); len(parts) > 0 {
		dir, base, err := fs.walkLocked(name)
		if err != nil {
			return nil, err
		}
		var ok bool
		if n, ok = dir.children[base]; !ok || !n.isDir {
			return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
		}
	}
	return &memDir{fs: fs, n: n}, nil
}

// Remove implements FS.
func (fs *MemFS) Remove(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir, base, err := fs.walkLocked(name)
	if err != nil {
		return err
	}
	n, ok := dir.children[base]
	if !ok {
		return &os.PathError{Op: "remove", Path: name, Err: os.ErrNotExist}
	}
	if n.isDir && len(n.children) > 0 {
		return &os.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
	}
	delete(dir.children, base)
	return nil
}

// Rename implements FS.
func (fs *MemFS) Rename(oldname, newname string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	odir, obase, err := fs.walkLocked(oldname)
	if err != nil {
		return err
	}
	n, ok := odir.children[obase]
	if !ok {
		return &os.PathError{Op: "rename", Path: oldname, Err: os.ErrNotExist}
	}
	ndir, nbase, err := fs.walkLocked(newname)
	if err != nil {
		return err
	}
	delete(odir.children, obase)
	ndir.children[nbase] = n
	return nil
}

// List implements FS.
func (fs *MemFS) List(dirname string) ([]string, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.root
	if parts := splitPath(dirname); len(parts) > 0 {
		dir, base, err := fs.walkLocked(dirname)
		if err != nil {
			return nil, err
		}
		var ok bool
		if n, ok = dir.children[base]; !ok || !n.isDir {
			return nil, &os.PathError{Op: "readdir", Path: dirname, Err: os.ErrNotExist}
		}
	}
	names := make([]string, 0, len(n.children))
	for k := range n.children {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, nil
}

// MkdirAll implements FS. New directories are durable at once: the engine
// creates its directory before anything else and tests do not crash there.
func (fs *MemFS) MkdirAll(dirname string, perm os.FileMode) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir := fs.root
	for _, p := range splitPath(dirname) {
		n, ok := dir.children[p]
		if !ok {
			n = newMemDir()
			dir.children[p] = n
			dir.synced[p] = n
		} else if !n.isDir {
			return &os.PathError{Op: "mkdir", Path: dirname, Err: errors.New("not a directory")}
		}
		dir = n
	}
	return nil
}

// Stat implements FS.
func (fs *MemFS) Stat(name string) (os.FileInfo, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(splitPath(name)) == 0 {
		return &memInfo{name: "/", dir: true}, nil
	}
	dir, base, err := fs.walkLocked(name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.children[base]
	if !ok {
		return nil, &os.PathError{Op: "stat", Path: name, Err: os.ErrNotExist}
	}
	if n.isDir {
		return &memInfo{name: base, dir: true}, nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return &memInfo{name: base, size: int64(len(n.data)), mod: n.modTime}, nil
}

// Lock implements FS.
func (fs *MemFS) Lock(name string) (io.Closer, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	key := path.Clean("/" + name)
	if fs.locks[key] {
		return nil, fmt.Errorf("%w: %s", ErrLocked, name)
	}
	dir, base, err := fs.walkLocked(name)
	if err != nil {
		return nil, err
	}
	if _, ok := dir.children[base]; !ok {
		dir.children[base] = &memNode{modTime: time.Now()}
	}
	fs.locks[key] = true
	return &memLock{fs: fs, key: key}, nil
}

type memLock struct {
	fs   *MemFS
	key  string
	once sync.Once
}

func (l *memLock) Close() error {
	l.once.Do(func() {
		l.fs.mu.Lock()
		delete(l.fs.locks, l.key)
		l.fs.mu.Unlock()
	})
	return nil
}

// CrashOptions says what survives a simulated crash.
type CrashOptions struct {
	// KeepUnsynced is the probability that a file keeps some of its unsynced
	// tail (a random prefix of it, as a torn write would). 0 loses every
	// unsynced byte.
	KeepUnsynced float64
	// Rand drives the choices; nil uses a fixed seed.
	Rand *rand.Rand
}

// CrashClone returns a new filesystem holding what a disk would hold if the
// machine lost power now: the directory entries as of each directory's last
// Sync, each file with its synced bytes (plus, by opts, part of its unsynced
// tail). Locks are not carried over. The receiver is left unchanged and may
// be used further.
func (fs *MemFS) CrashClone(opts CrashOptions) *MemFS {
	rng := opts.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 1))
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	clone := &MemFS{locks: map[string]bool{}}
	var copyDir func(d *memNode) *memNode
	copyDir = func(d *memNode) *memNode {
		nd := newMemDir()
		names := make([]string, 0, len(d.synced))
		for name := range d.synced {
			names = append(names, name)
		}
		sort.Strings(names) // deterministic use of rng
		for _, name := range names {
			n := d.synced[name]
			var c *memNode
			if n.isDir {
				c = copyDir(n)
			} else {
				n.mu.RLock()
				keep := n.synced0
				if opts.KeepUnsynced > 0 && len(n.data) > keep && rng.Float64() < opts.KeepUnsynced {
					keep += rng.IntN(len(n.data) - keep + 1)
				}
				c = &memNode{data: append([]byte(nil), n.data[:keep]...), synced0: keep, modTime: n.modTime}
				n.mu.RUnlock()
			}
			nd.children[name] = c
			nd.synced[name] = c
		}
		return nd
	}
	clone.root = copyDir(fs.root)
	return clone
}

// memFile is an open file of a MemFS.
type memFile struct {
	name   string
	n      *memNode
	write  bool
	closed bool
}

func (f *memFile) Close() error {
	if f.closed {
		return &os.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
	}
	f.closed = true
	return nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.n.mu.RLock()
	defer f.n.mu.RUnlock()
	if off < 0 {
		return 0, &os.PathError{Op: "read", Path: f.name, Err: errors.New("negative offset")}
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	if !f.write {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: errors.New("file not open for writing")}
	}
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.data = append(f.n.data, p...)
	f.n.modTime = time.Now()
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.synced0 = len(f.n.data)
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.n.mu.RLock()
	defer f.n.mu.RUnlock()
	return int64(len(f.n.data)), nil
}

func (f *memFile) Prefetch(off, n int64) error { return nil }
func (f *memFile) Evict() error                { return nil }
func (f *memFile) Alignment() int              { return 1 }

// memDir is a directory opened for Sync.
type memDir struct {
	fs *MemFS
	n  *memNode
}

func (d *memDir) Sync() error {
	d.fs.mu.Lock()
	defer d.fs.mu.Unlock()
	d.n.synced = make(map[string]*memNode, len(d.n.children))
	for k, v := range d.n.children {
		d.n.synced[k] = v
	}
	return nil
}

func (d *memDir) Close() error              { return nil }
func (d *memDir) Write([]byte) (int, error) { return 0, errors.New("vfs: write to a directory") }
func (d *memDir) ReadAt([]byte, int64) (int, error) {
	return 0, errors.New("vfs: read from a directory")
}
func (d *memDir) Size() (int64, error)        { return 0, nil }
func (d *memDir) Prefetch(off, n int64) error { return nil }
func (d *memDir) Evict() error                { return nil }
func (d *memDir) Alignment() int              { return 1 }

type memInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
}

func (i *memInfo) Name() string { return i.name }
func (i *memInfo) Size() int64  { return i.size }
func (i *memInfo) Mode() os.FileMode {
	if i.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}
func (i *memInfo) ModTime() time.Time { return i.mod }
func (i *memInfo) IsDir() bool        { return i.dir }
func (i *memInfo) Sys() any           { return nil }
