package reliability

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// failRecorder is a testing.TB whose failures are recorded instead of
// ending the test, so that a test can check that a checker fails.
type failRecorder struct {
	testing.TB
	failed bool
	msg    string
}

type recordedFailure struct{}

func (r *failRecorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msg += fmt.Sprintf(format, args...)
}
func (r *failRecorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }
func (r *failRecorder) FailNow()                          { r.failed = true; panic(recordedFailure{}) }
func (r *failRecorder) Fail()                             { r.failed = true }

// fails runs check against a recorder and reports whether it failed.
func fails(t *testing.T, check func(testing.TB)) (failed bool, msg string) {
	r := &failRecorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(recordedFailure); !ok {
					panic(p)
				}
			}
		}()
		check(r)
	}()
	return r.failed, r.msg
}

// TestCheckBankCatches damages a healthy bank in the ways the fault and
// crash tests look for, and checks that checkBank notices each: the
// checker every one of those tests relies on can fail.
func TestCheckBankCatches(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, st *store, l *ledger)
		want   string // in the failure message
	}{
		{"an acknowledged transfer lost whole", func(t *testing.T, st *store, l *ledger) {
			tr := l.tried[3]
			ctx := st.session("bank")
			mustQuery(t, st, ctx, "DELETE FROM log WHERE id = 3")
			mustQuery(t, st, ctx, fmt.Sprintf("UPDATE acct SET balance = balance + %d WHERE id = %d", tr.amount, tr.src))
			mustQuery(t, st, ctx, fmt.Sprintf("UPDATE acct SET balance = balance - %d WHERE id = %d", tr.amount, tr.dst))
		}, "acknowledged transfers are missing"},
		{"half a transfer", func(t *testing.T, st *store, l *ledger) {
			mustQuery(t, st, st.session("bank"), "UPDATE acct SET balance = balance + 5 WHERE id = 1")
		}, "its balance disagrees with the logged transfers"},
		{"a transfer never attempted", func(t *testing.T, st *store, l *ledger) {
			ctx := st.session("bank")
			mustQuery(t, st, ctx, "INSERT INTO log VALUES (999, 0, 1, 0, '')")
		}, "was never attempted"},
		{"a transfer that failed with a conflict applied", func(t *testing.T, st *store, l *ledger) {
			l.denied[5] = true
		}, "failed with a write conflict but is logged"},
		{"a logged transfer with other values", func(t *testing.T, st *store, l *ledger) {
			mustQuery(t, st, st.session("bank"), "UPDATE log SET note = 'changed' WHERE id = 7")
		}, "holds other values than the transfer attempted"},
		{"an account missing", func(t *testing.T, st *store, l *ledger) {
			mustQuery(t, st, st.session("bank"), "DELETE FROM acct WHERE id = 2")
		}, "all or none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := openStore("/db", &kvstore.Options{NoSync: true, KV: &kv.Options{FS: vfs.NewMem()}})
			require.NoError(t, err)
			defer st.s.Close()
			require.NoError(t, bankSetup(st))
			l := newLedger()
			rng := rand.New(rand.NewPCG(1, 2))
			ctx := st.session("bank")
			for id := int64(1); id <= 20; id++ {
				tr := randomTransfer(rng, id, 50)
				l.tried[id] = tr
				require.NoError(t, runTransfer(st.e, ctx, tr))
				l.acked[id] = true
			}
			checkBank(t, st, l) // healthy
			tc.damage(t, st, l)
			failed, msg := fails(t, func(tb testing.TB) { checkBank(tb, st, l) })
			require.True(t, failed, "checkBank did not notice")
			require.Contains(t, msg, tc.want)
		})
	}
}
