package sqlstore

import (
	"fmt"
	"strings"
	"sync"
)

// Remote backends (TiKV) are opened by address ("tikv://pd1:2379/?...")
// through a registry rather than by import, so that a program embedding
// Strata links a remote backend's client (for TiKV: client-go, grpc and
// protobuf, most of a binary's size) only when it asks for it, the way
// database/sql links only the drivers a program imports. A backend
// package registers itself in its init; the driver, the server and the
// shell open addresses through OpenRemote.

// Remote is what a backend registers for its address scheme.
type Remote struct {
	// Check validates an address without connecting.
	Check func(addr string) error
	// Open connects to the address and opens the store on it.
	Open func(addr string) (*Store, error)
}

var remotes struct {
	mu     sync.RWMutex
	byName map[string]Remote
}

// knownRemotes names the backends this module provides, so that an
// address of one whose package was not imported gets an error that says
// which import adds it.
var knownRemotes = map[string]string{
	"tikv": "github.com/strata-db/strata/sqlstore/tikvstore",
}

// RegisterRemote registers the backend for addresses "scheme://...". It
// panics when the scheme is registered twice or the Remote is incomplete:
// both are programming errors of a backend's init.
func RegisterRemote(scheme string, r Remote) {
	if r.Check == nil || r.Open == nil {
		panic("sqlstore: RegisterRemote " + scheme + ": Check and Open are required")
	}
	remotes.mu.Lock()
	defer remotes.mu.Unlock()
	if _, dup := remotes.byName[scheme]; dup {
		panic("sqlstore: RegisterRemote called twice for " + scheme)
	}
	if remotes.byName == nil {
		remotes.byName = make(map[string]Remote)
	}
	remotes.byName[scheme] = r
}

// RemoteScheme reports the scheme of addr when it names a remote backend
// ("tikv" for "tikv://..."). Folders ("/data", "file:/data",
// "file:///data") are not remote.
func RemoteScheme(addr string) (string, bool) {
	scheme, _, ok := strings.Cut(addr, "://")
	if !ok || scheme == "" || scheme == "file" || strings.ContainsAny(scheme, "/\\.:?") {
		return "", false
	}
	return scheme, true
}

// IsRemote reports whether addr names a remote backend rather than a
// folder, whether or not that backend is linked in.
func IsRemote(addr string) bool {
	_, ok := RemoteScheme(addr)
	return ok
}

func lookupRemote(addr string) (Remote, error) {
	scheme, ok := RemoteScheme(addr)
	if !ok {
		return Remote{}, fmt.Errorf("%q is not the address of a remote backend", addr)
	}
	remotes.mu.RLock()
	r, ok := remotes.byName[scheme]
	remotes.mu.RUnlock()
	if ok {
		return r, nil
	}
	if pkg, known := knownRemotes[scheme]; known {
		return Remote{}, fmt.Errorf("%s:// addresses need the %s backend linked in: import _ %q", scheme, scheme, pkg)
	}
	return Remote{}, fmt.Errorf("no backend for %s:// addresses", scheme)
}

// CheckRemote validates a remote address without connecting: its scheme
// is registered and the backend accepts its form.
func CheckRemote(addr string) error {
	r, err := lookupRemote(addr)
	if err != nil {
		return err
	}
	return r.Check(addr)
}

// OpenRemote opens the store at a remote address with the registered
// backend.
func OpenRemote(addr string) (*Store, error) {
	r, err := lookupRemote(addr)
	if err != nil {
		return nil, err
	}
	return r.Open(addr)
}
