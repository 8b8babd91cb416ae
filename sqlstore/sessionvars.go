package sqlstore

import (
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
)

// sessionVars holds what a statement's start reads from the session's
// system variables, derived once per change of them (Session.varsGen)
// instead of looked up by name at every statement: a primary-key point
// select asked GMS's variable map seven times, about 5% of its time.
type sessionVars struct {
	gen uint64 // the varsGen the values were read at

	pessimistic bool          // strata_txn_mode (sessionPessimistic)
	lockWait    time.Duration // innodb_lock_wait_timeout (sessionLockWait)
	mdlWait     time.Duration // lock_wait_timeout: metadata lock waits (mdl.go)
	planReuse   bool          // strata_plan_reuse (planReuse)
	autocommit  bool          // autocommit (Session.autocommit)

	// The raw values of the variables a kept plan depends on
	// (planTemplate.fits, Store.accessOptions); the errors are kept so
	// that a variable that cannot be read is treated as before.
	sqlMode, selLimit any
	fkChecks          any // foreign_key_checks (writeTemplate.fits)
	access            any
	accessErr         error
	planner           any
	plannerErr        error
}

// currentVars returns the cached variables when none changed since they
// were read, or nil: then vars, which needs a context, reads them again.
func (s *Session) currentVars() *sessionVars {
	if v := s.cachedVars.Load(); v != nil && v.gen == s.varsGen.Load() {
		return v
	}
	return nil
}

// vars returns the session's variables as sessionVars, read again when
// any of them changed since the last call. The generation is read before
// the values, so that a change made while they are read leaves the cache
// stale rather than wrong.
func (s *Session) vars(ctx *sql.Context) *sessionVars {
	gen := s.varsGen.Load()
	if v := s.cachedVars.Load(); v != nil && v.gen == gen {
		return v
	}
	v := &sessionVars{gen: gen, pessimistic: true, lockWait: 50 * time.Second, mdlWait: mdlDefaultWait, planReuse: true, autocommit: true}
	if x, err := s.GetSessionVariable(ctx, txnModeVar); err == nil {
		text, _ := x.(string)
		v.pessimistic = !strings.EqualFold(text, txnOptimistic)
	}
	if x, err := s.GetSessionVariable(ctx, lockWaitVar); err == nil {
		if n, ok := x.(int64); ok && n > 0 {
			v.lockWait = time.Duration(n) * time.Second
		}
	}
	if x, err := s.GetSessionVariable(ctx, "lock_wait_timeout"); err == nil {
		if n, ok := x.(int64); ok && n > 0 {
			v.mdlWait = time.Duration(n) * time.Second
		}
	}
	if x, err := s.GetSessionVariable(ctx, planReuseVar); err == nil {
		on, err := sql.ConvertToBool(ctx, x)
		v.planReuse = err != nil || on
	}
	if x, err := s.GetSessionVariable(ctx, sql.AutoCommitSessionVar); err == nil {
		b, err := sql.ConvertToBool(ctx, x)
		v.autocommit = err != nil || b
	}
	v.sqlMode, _ = s.GetSessionVariable(ctx, "sql_mode")
	v.selLimit, _ = s.GetSessionVariable(ctx, "sql_select_limit")
	v.fkChecks, _ = s.GetSessionVariable(ctx, "foreign_key_checks")
	v.access, v.accessErr = s.GetSessionVariable(ctx, accessVar)
	v.planner, v.plannerErr = s.GetSessionVariable(ctx, plannerVar)
	s.cachedVars.Store(v)
	return v
}
