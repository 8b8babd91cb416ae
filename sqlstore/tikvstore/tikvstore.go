// Package tikvstore opens a sqlstore.Store over a TiKV cluster (package
// storage/tikv): what a front end does with a tikv:// address where it
// would open a folder with package kvstore.
//
// Addresses:
//
//	tikv://pd1:2379,pd2:2379/?keyspace=app   a cluster, by its PD servers
//	tikv://mock                              client-go's in-process mock cluster
//	tikv://mock?regions=8                    the mock split into 8 regions
//	tikv://mock?latency=500us                each request to the mock delayed:
//	                                         a network round trip
//
// The mock keeps nothing once the process ends; it is for tests and for
// trying the remote mode.
package tikvstore

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/storage/tikv"
)

// Scheme is the prefix of a TiKV address.
const Scheme = "tikv://"

// init registers the backend, so that programs importing this package
// (for its side effect, if nothing else) open tikv:// addresses through
// the driver, the server and the shell.
func init() {
	sqlstore.RegisterRemote("tikv", sqlstore.Remote{
		Check: func(addr string) error {
			_, err := ParseAddress(addr)
			return err
		},
		Open: func(addr string) (*sqlstore.Store, error) { return Open(addr, nil) },
	})
}

// IsAddress reports whether s names a TiKV cluster rather than a folder.
func IsAddress(s string) bool { return strings.HasPrefix(s, Scheme) }

// Address is a parsed tikv:// address.
type Address struct {
	// PD lists the PD servers; empty with Mock.
	PD []string
	// Keyspace is the keyspace to use (empty: the default, API v1).
	Keyspace string
	// Mock asks for an in-process mock cluster of Regions regions.
	Mock    bool
	Regions int
	// Latency delays each request to the mock.
	Latency time.Duration
}

// ParseAddress parses a tikv:// address.
func ParseAddress(s string) (Address, error) {
	if !IsAddress(s) {
		return Address{}, fmt.Errorf("tikvstore: %q is not a %s address", s, Scheme)
	}
	u, err := url.Parse(s)
	if err != nil {
		return Address{}, fmt.Errorf("tikvstore: %q: %w", s, err)
	}
	var a Address
	q := u.Query()
	for k := range q {
		if k != "keyspace" && k != "regions" && k != "latency" {
			return Address{}, fmt.Errorf("tikvstore: %q: unknown parameter %q (keyspace, regions, latency)", s, k)
		}
	}
	a.Keyspace = q.Get("keyspace")
	if u.Host == "mock" {
		a.Mock = true
		a.Regions = 1
		if r := q.Get("regions"); r != "" {
			if a.Regions, err = strconv.Atoi(r); err != nil || a.Regions < 1 || a.Regions > 256 {
				return Address{}, fmt.Errorf("tikvstore: %q: regions must be 1 to 256", s)
			}
		}
		if l := q.Get("latency"); l != "" {
			if a.Latency, err = time.ParseDuration(l); err != nil || a.Latency < 0 {
				return Address{}, fmt.Errorf("tikvstore: %q: latency must be a duration such as 500us", s)
			}
		}
		return a, nil
	}
	if q.Has("regions") || q.Has("latency") {
		return Address{}, fmt.Errorf("tikvstore: %q: regions and latency are for tikv://mock only", s)
	}
	for _, h := range strings.Split(u.Host, ",") {
		if h == "" {
			continue
		}
		if !strings.Contains(h, ":") {
			h += ":2379"
		}
		a.PD = append(a.PD, h)
	}
	if len(a.PD) == 0 {
		return Address{}, fmt.Errorf("tikvstore: %q names no PD server", s)
	}
	return a, nil
}

// OpenEngine returns the storage engine an address names. client-go's
// log (process-wide) is set to errors only, or to the level
// STRATA_TIKV_LOG names (debug, info, warn, error).
func OpenEngine(a Address) (*tikv.Engine, error) {
	level := os.Getenv("STRATA_TIKV_LOG")
	if level == "" {
		level = "error"
	}
	if err := tikv.SetLogLevel(level); err != nil {
		return nil, err
	}
	if !a.Mock {
		return tikv.Open(a.PD, a.Keyspace)
	}
	m, err := tikv.NewMock(splitKeys(a.Regions)...)
	if err != nil {
		return nil, err
	}
	defer m.Close() // the engine keeps the cluster until it closes
	m.Latency = a.Latency
	return m.Open()
}

// splitKeys returns the keys that cut the SQL layer's keyspace into n
// regions: the catalog (0x01) in one, the tables' keys (0x02 and a table
// ID) spread over the others.
func splitKeys(n int) [][]byte {
	if n <= 1 {
		return nil
	}
	keys := [][]byte{{0x02}}
	for i := 1; i < n-1; i++ {
		keys = append(keys, []byte{0x02, byte(0x80 + i*4)})
	}
	return keys
}

// RemoteBatch is the planner's MultiGet and fetch batch over TiKV.
const RemoteBatch = 256

// Open opens the store at a tikv:// address. The store owns the engine
// (Store.Close closes it).
func Open(addr string, opts *sqlstore.Options) (*sqlstore.Store, error) {
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	e, err := OpenEngine(a)
	if err != nil {
		return nil, err
	}
	return OpenOn(e, opts)
}

// OpenOn opens the store over an engine already open (a test opening two
// stores on one mock cluster, as two processes would). Other processes may
// share the cluster, so the store checks the schema version
// (sqlstore.Options.SharedCatalog) whatever opts say.
func OpenOn(e *tikv.Engine, opts *sqlstore.Options) (*sqlstore.Store, error) {
	var o sqlstore.Options
	if opts != nil {
		o = *opts
	}
	o.SharedCatalog = true
	// Each MultiGet is a BatchGet: one round trip to each region's store
	// whatever the number of keys, so a remote store fetches in larger
	// batches than the embedded engine's 32 (docs/scale-out.md has the
	// figures).
	if o.Access.MultiGetBatch == 0 {
		o.Access.MultiGetBatch = RemoteBatch
	}
	if o.Access.FetchBatch == 0 {
		o.Access.FetchBatch = RemoteBatch
	}
	s, err := sqlstore.New(e, &o)
	if err != nil {
		return nil, fmt.Errorf("tikvstore: %w", err)
	}
	return s, nil
}
