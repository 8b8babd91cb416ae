// Package enginetest runs go-mysql-server's engine test suites against
// sqlstore: every NewEngine opens a fresh store in a temporary directory
// (WAL sync off), runs the suite's setup scripts through our provider and
// sessions, and hands the engine to the suite. skips_test.go names every
// test skipped here, with the reason.
package enginetest

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/dolthub/go-mysql-server/enginetest"
	"github.com/dolthub/go-mysql-server/enginetest/scriptgen/setup"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
	"github.com/strata-db/strata/sqlstore/tikvstore"
)

// harness implements enginetest.Harness and the optional harness
// interfaces sqlstore supports.
type harness struct {
	name      string
	setupData []setup.SetupScript
	skips     map[string]string

	mu      sync.Mutex
	store   *sqlstore.Store
	session *sqlstore.Session
}

var (
	_ enginetest.Harness             = (*harness)(nil)
	_ enginetest.IndexHarness        = (*harness)(nil)
	_ enginetest.KeylessTableHarness = (*harness)(nil)
	_ enginetest.TransactionHarness  = (*harness)(nil)
	_ enginetest.ClientHarness       = (*harness)(nil)
	_ enginetest.SkippingHarness     = (*harness)(nil)
)

func newHarness(name string) *harness {
	return &harness{name: name, skips: skipsFor(name)}
}

// Setup implements enginetest.Harness.
func (h *harness) Setup(scripts ...[]setup.SetupScript) {
	h.setupData = nil
	for _, s := range scripts {
		h.setupData = append(h.setupData, s...)
	}
}

// NewEngine implements enginetest.Harness: a new store per engine.
func (h *harness) NewEngine(t *testing.T) (enginetest.QueryEngine, error) {
	s, err := openTestStore(t)
	require.NoError(t, err)
	// The Go-written test procedures GMS's suites call (memory_inout_add
	// and others) are registered like an embedder would register its own.
	s.Provider().RegisterProcedures(memory.ExternalStoredProcedures...)
	h.mu.Lock()
	h.store, h.session = s, nil
	h.mu.Unlock()
	// The engine a user gets: GMS's test engine with sqlstore's
	// corrections installed as Store.NewEngine installs them, before the
	// setup scripts run (enginetest.NewEngine, with Configure between).
	e := enginetest.NewEngineWithProvider(t, h, s.Provider())
	s.Configure(e)
	data := h.setupData
	if len(data) == 0 {
		data = setup.MydbData
	}
	e, err = enginetest.RunSetupScripts(enginetest.NewContext(h), e, data, h.SupportsNativeIndexCreation())
	if err != nil {
		return nil, err
	}
	// A fresh session for the test itself, as GMS's own harness does.
	h.mu.Lock()
	h.session = nil
	h.mu.Unlock()
	return e, nil
}

// openTestStore opens a fresh store for t over the embedded engine, or,
// when STRATA_TEST_STORE names a tikv:// address (tikv://mock?regions=4),
// over that backend: the same suites on the remote backend.
func openTestStore(t *testing.T) (*sqlstore.Store, error) {
	if addr := os.Getenv("STRATA_TEST_STORE"); tikvstore.IsAddress(addr) {
		s, err := tikvstore.Open(addr, nil)
		if err == nil {
			t.Cleanup(func() { _ = s.Close() })
		}
		return s, err
	}
	dir, err := os.MkdirTemp(tempBase(), "sqlstore-enginetest-")
	if err != nil {
		return nil, err
	}
	s, _, err := kvstore.Open(dir, &kvstore.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		_ = s.Close()
		_ = os.RemoveAll(dir)
	})
	return s, nil
}

// tempBase prefers a memory-backed directory: the suites open thousands of
// stores.
func tempBase() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return ""
}

func (h *harness) currentStore() *sqlstore.Store {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.store == nil {
		panic("sqlstore enginetest: context requested before NewEngine")
	}
	return h.store
}

// NewContext implements enginetest.Harness: one session until NewSession.
func (h *harness) NewContext() *sql.Context {
	s := h.currentStore()
	h.mu.Lock()
	if h.session == nil {
		h.session = s.NewSession(enginetest.NewBaseSession())
	}
	sess := h.session
	h.mu.Unlock()
	return sql.NewContext(context.Background(), sql.WithSession(sess))
}

// NewSession implements enginetest.TransactionHarness.
func (h *harness) NewSession() *sql.Context {
	s := h.currentStore()
	h.mu.Lock()
	h.session = s.NewSession(enginetest.NewBaseSession())
	h.mu.Unlock()
	return h.NewContext()
}

// NewContextWithClient implements enginetest.ClientHarness.
func (h *harness) NewContextWithClient(client sql.Client) *sql.Context {
	s := h.currentStore()
	base := sql.NewBaseSessionWithClientServer("address", client, 1)
	return sql.NewContext(context.Background(), sql.WithSession(s.NewSession(base)))
}

// SupportsNativeIndexCreation implements enginetest.IndexHarness.
func (h *harness) SupportsNativeIndexCreation() bool { return true }

// SupportsKeylessTables implements enginetest.KeylessTableHarness.
func (h *harness) SupportsKeylessTables() bool { return true }

// SkipQueryTest implements enginetest.SkippingHarness.
func (h *harness) SkipQueryTest(query string) bool {
	_, ok := h.skips[strings.ToLower(strings.TrimSpace(query))]
	return ok
}
