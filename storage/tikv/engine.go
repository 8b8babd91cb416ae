//go:build !darwin || cgo

package tikv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/pingcap/kvproto/pkg/kvrpcpb"
	"github.com/pingcap/log"
	"github.com/strata-db/strata/storage"
	tikverr "github.com/tikv/client-go/v2/error"
	"github.com/tikv/client-go/v2/oracle"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/txnkv"
	"go.uber.org/zap/zapcore"
)

// Engine is the storage contract over a TiKV cluster (client-go's
// transactional API): many processes may open one cluster at once, and
// what one commits the others read.
type Engine struct {
	store *tikv.KVStore
	// release closes what the engine owns (the client, or its share of a
	// mock cluster).
	release func() error
	// sizes estimates ranges from PD's region sizes (sizes.go).
	sizes *regionSizes
}

var (
	_ storage.Engine = (*Engine)(nil)
	_ storage.Txn    = (*txn)(nil)
	_ storage.Locker = (*txn)(nil)

	_ storage.SizeEstimator = (*Engine)(nil)
)

// Open connects to the cluster whose PD servers are pdAddrs ("host:port"),
// in keyspace (empty: the default keyspace, API v1).
func Open(pdAddrs []string, keyspace string) (*Engine, error) {
	// client-go's PD client retries an unreachable PD for a long while;
	// a PD nobody answers at is an error at once.
	var reachable bool
	var dialErr error
	for _, a := range pdAddrs {
		c, err := net.DialTimeout("tcp", a, 5*time.Second)
		if err == nil {
			_ = c.Close()
			reachable = true
			break
		}
		dialErr = errors.Join(dialErr, err)
	}
	if !reachable {
		return nil, fmt.Errorf("tikv: no PD server answers at %v: %w", pdAddrs, dialErr)
	}
	var opts []txnkv.ClientOpt
	if keyspace != "" {
		// A keyspace is API v2's.
		opts = append(opts, txnkv.WithAPIVersion(kvrpcpb.APIVersion_V2), txnkv.WithKeyspace(keyspace))
	}
	c, err := txnkv.NewClient(pdAddrs, opts...)
	if err != nil {
		return nil, fmt.Errorf("tikv: connect to PD %v: %w", pdAddrs, err)
	}
	// PD serves its HTTP API on its client address.
	bases := make([]string, len(pdAddrs))
	for i, a := range pdAddrs {
		bases[i] = "http://" + a
	}
	return &Engine{store: c.KVStore, release: c.Close, sizes: newRegionSizes(bases, storeCodec(c.KVStore))}, nil
}

// storeCodec returns the codec by which the store's keys become the keys
// PD bounds regions by: the one its PD client encodes with, or API v1's.
func storeCodec(s *tikv.KVStore) tikv.Codec {
	if c, ok := s.GetPDClient().(interface{ GetCodec() tikv.Codec }); ok {
		return c.GetCodec()
	}
	return tikv.NewCodecV1(tikv.ModeTxn)
}

// ApproximateSize implements storage.SizeEstimator from the approximate
// sizes PD has of the regions [start, end) overlaps, prorated where the
// range covers a region in part. Estimates are kept for a while (so that a
// plan does not pay a request to PD); where PD gives none (the mock
// cluster, PD unreachable, a range inside one region) the error satisfies
// errors.Is(err, storage.ErrNoEstimate).
func (e *Engine) ApproximateSize(start, end []byte) (int64, error) {
	_, b, err := e.sizes.estimate(start, end)
	return b, err
}

// EstimateRange implements storage.SizeEstimator as ApproximateSize does,
// with PD's approximate key counts. PD counts every version TiKV keeps of
// a key, not live keys alone.
func (e *Engine) EstimateRange(start, end []byte) (keys, bytes int64, err error) {
	return e.sizes.estimate(start, end)
}

// Store returns the client-go store the engine reads and writes through.
func (e *Engine) Store() *tikv.KVStore { return e.store }

// now returns a fresh timestamp from PD: reads at it see every commit
// that returned before the call.
func (e *Engine) now() uint64 {
	ts, err := e.store.CurrentTimestamp(oracle.GlobalTxnScope)
	if err != nil {
		// PD unreachable: the reader's next request fails with the cause;
		// the oracle's last timestamp is the best that is known.
		ts, _ = e.store.GetOracle().GetLowResolutionTimestamp(context.Background(), &oracle.Option{TxnScope: oracle.GlobalTxnScope})
	}
	return ts
}

// Begin implements storage.Engine.
func (e *Engine) Begin() (storage.Txn, error) {
	ts, err := e.store.CurrentTimestamp(oracle.GlobalTxnScope)
	if err != nil {
		return nil, fmt.Errorf("tikv: begin: %w", err)
	}
	t := &txn{e: e, startTS: ts, head: newOverlay()}
	t.snap = reader{e: e, ts: ts}
	t.self = reader{e: e, ts: ts, ov: &t.head}
	return t, nil
}

// Latest implements storage.Engine.
func (e *Engine) Latest() storage.Reader { return &reader{e: e} }

// LastVersion implements storage.Engine: PD's current timestamp, above the
// commit timestamp of every commit that has returned.
func (e *Engine) LastVersion() uint64 { return e.now() }

// Close implements storage.Engine.
func (e *Engine) Close() error {
	if e.release == nil {
		return nil
	}
	e.sizes.close()
	err := e.release()
	e.release = nil
	return err
}

// isNotFound reports whether err is client-go's "no value".
func isNotFound(err error) bool { return tikverr.IsErrNotFound(err) }

// mapError maps client-go's errors onto the contract's: write conflicts,
// lock waits, deadlocks. Others pass through.
func mapError(err error) error {
	var wc *tikverr.ErrWriteConflict
	var dl *tikverr.ErrDeadlock
	var latch *tikverr.ErrWriteConflictInLatch
	switch {
	case err == nil:
		return nil
	case errors.As(err, &wc):
		var key []byte
		if wc.WriteConflict != nil {
			key = wc.Key
		}
		return &storage.ConflictError{Key: key, Err: fmt.Errorf("%w: %w", storage.ErrConflict, err)}
	case errors.As(err, &latch):
		return fmt.Errorf("%w: %w", storage.ErrConflict, err)
	case errors.As(err, &dl):
		return fmt.Errorf("%w: %w", storage.ErrDeadlock, err)
	case errors.Is(err, tikverr.ErrLockWaitTimeout):
		return fmt.Errorf("%w: %w", storage.ErrLockWaitTimeout, err)
	case errors.Is(err, tikverr.ErrLockAcquireFailAndNoWaitSet):
		return fmt.Errorf("%w: %w", storage.ErrLockNotAvailable, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return err
}

// DefaultLockWait bounds a lock wait when storage.LockOptions.Wait is zero:
// InnoDB's default innodb_lock_wait_timeout.
const DefaultLockWait = 50 * time.Second

// SetLogLevel sets the level of client-go's log (process-wide: client-go
// has one logger), "error" unless the program says otherwise: client-go
// logs every lock it meets and every region it learns at info level, which
// a SQL shell's user need not read.
func SetLogLevel(level string) error {
	var l zapcore.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("tikv: log level %q: %w", level, err)
	}
	log.SetLevel(l)
	return nil
}
