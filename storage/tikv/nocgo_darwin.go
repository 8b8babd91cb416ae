//go:build darwin && !cgo

package tikv

import (
	"errors"
	"time"

	"github.com/strata-db/strata/storage"
)

// On macOS client-go needs cgo (a dependency reads the system's memory
// with it); a build without cgo has the backend's API and refuses to open.

var errNoCgo = errors.New("tikv: the TiKV backend on macOS needs a build with cgo")

// Engine is the storage contract over a TiKV cluster; without cgo on macOS
// none can be opened.
type Engine struct{}

var _ storage.Engine = (*Engine)(nil)

// Open fails: no TiKV backend in this build.
func Open(pdAddrs []string, keyspace string) (*Engine, error) { return nil, errNoCgo }

func (e *Engine) Begin() (storage.Txn, error) { return nil, errNoCgo }
func (e *Engine) Latest() storage.Reader      { return nil }
func (e *Engine) LastVersion() uint64         { return 0 }
func (e *Engine) Close() error                { return nil }

// Mock is client-go's in-process cluster; none in this build.
type Mock struct {
	Latency time.Duration
}

// NewMock fails: no TiKV backend in this build.
func NewMock(splitKeys ...[]byte) (*Mock, error) { return nil, errNoCgo }

func (m *Mock) Open() (*Engine, error) { return nil, errNoCgo }
func (m *Mock) Close() error           { return nil }

// SetLogLevel does nothing: there is no client-go log.
func SetLogLevel(level string) error { return nil }
