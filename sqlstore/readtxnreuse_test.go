package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// readAll reads rows to the end and closes them, returning the values of
// their columns as strings.
func readAll(t testing.TB, rows *Rows) [][]string {
	t.Helper()
	var out [][]string
	for {
		vals, err := rows.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = fmt.Sprint(v)
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Close())
	return out
}

// TestReadTxnReuse: an autocommit read that ran on a kept plan leaves its
// finished transaction to the session, and the next transaction begins in
// it; a transaction something may still hold is never kept: one a
// statement found open (another result still being read), one a
// statement ends with an error, an explicit transaction.
func TestReadTxnReuse(t *testing.T) {
	ctx := context.Background()
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))")
	d.exec("INSERT INTO t VALUES (1, 5, 'a'), (2, 5, 'b'), (3, 6, 'c')")
	e := d.s.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	st, err := c.Prepare(ctx, "SELECT id, c FROM t WHERE k = ?")
	require.NoError(t, err)
	defer st.Close()
	query := func(k int64) *Rows {
		rows, err := st.Query(ctx, Arg{Ordinal: 1, Value: k})
		require.NoError(t, err)
		return rows
	}
	for range 3 { // until the plan is kept
		readAll(t, query(5))
	}
	kept := c.sess.spare.Load()
	require.NotNil(t, kept, "an autocommit read on a kept plan keeps its transaction")
	rows := query(5)
	require.Nil(t, c.sess.spare.Load(), "the next statement takes the kept transaction")
	require.Same(t, kept, txnOf(rows.ctx), "and begins in it")
	require.Equal(t, [][]string{{"1", "a"}, {"2", "b"}}, readAll(t, rows))
	require.Same(t, kept, c.sess.spare.Load())

	// A write between reads: the reused transaction sees it.
	_, err = c.Exec(ctx, "UPDATE t SET c = 'z' WHERE id = 1")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"1", "z"}, {"2", "b"}}, readAll(t, query(5)))

	// Another result is open when the read starts: the read runs in the
	// open transaction (the session's only one), which it did not begin,
	// and which the late result still reads after the read ends.
	c.sess.spare.Store(nil)
	open := query(6)
	first, err := open.Next()
	require.NoError(t, err)
	require.Equal(t, int64(3), first[0])
	inner := query(5)
	innerTx := txnOf(inner.ctx)
	require.Equal(t, [][]string{{"1", "z"}, {"2", "b"}}, readAll(t, inner))
	require.NotSame(t, innerTx, c.sess.spare.Load(), "a transaction another result reads is not kept")
	_, err = open.Next()
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, open.Close())

	// A result GMS runs, made in the read's transaction but not read
	// when the read ends (GMS opens a table's rows at the first Next),
	// then read after another read began in the kept transaction: it
	// reads the session's transaction of the moment, as it would have.
	first5 := query(5)
	planned, err := c.Query(ctx, "SELECT c FROM t ORDER BY c DESC")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"1", "z"}, {"2", "b"}}, readAll(t, first5))
	again := query(6)
	require.Equal(t, [][]string{{"z"}, {"c"}, {"b"}}, readAll(t, planned))
	require.Equal(t, [][]string{{"3", "c"}}, readAll(t, again))

	// A cancelled read (what KILL QUERY does) does not commit, nor keep
	// its transaction; the next statement rolls it back and goes on.
	c.sess.spare.Store(nil)
	cctx, cancel := context.WithCancel(ctx)
	rows, err = st.Query(cctx, Arg{Ordinal: 1, Value: int64(5)})
	require.NoError(t, err)
	cancel()
	_, err = rows.Next()
	require.Error(t, err)
	_ = rows.Close()
	require.Nil(t, c.sess.spare.Load())
	require.Equal(t, [][]string{{"1", "z"}, {"2", "b"}}, readAll(t, query(5)))

	// An explicit transaction may begin in the kept one, and keeps its
	// snapshot across statements; its reads keep nothing.
	kept = c.sess.spare.Load()
	require.NotNil(t, kept)
	_, err = c.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"1", "z"}, {"2", "b"}}, readAll(t, query(5)))
	other := e.NewConn()
	defer other.Close()
	require.NoError(t, other.UseDatabase(ctx, "mydb"))
	_, err = other.Exec(ctx, "UPDATE t SET c = 'y' WHERE id = 2")
	require.NoError(t, err)
	require.Equal(t, [][]string{{"1", "z"}, {"2", "b"}}, readAll(t, query(5)))
	require.Nil(t, c.sess.spare.Load(), "a read inside a transaction keeps nothing")
	_, err = c.Exec(ctx, "COMMIT")
	require.NoError(t, err)
	require.Nil(t, c.sess.spare.Load(), "a committed explicit transaction is not kept")
	require.Equal(t, [][]string{{"1", "z"}, {"2", "y"}}, readAll(t, query(5)))

	// Once kept, an autocommit read allocates no transaction: the
	// statement costs two allocations (the transaction and the engine's)
	// less than when it finds none kept.
	var qerr error
	run := func(drop bool) float64 {
		readAll(t, query(5))
		return testing.AllocsPerRun(100, func() {
			if drop {
				c.sess.spare.Store(nil)
			}
			rows, err := st.Query(ctx, Arg{Ordinal: 1, Value: int64(6)})
			if err != nil {
				qerr = err
				return
			}
			for {
				if _, err := rows.Next(); err != nil {
					if err != io.EOF {
						qerr = err
					}
					break
				}
			}
			if err := rows.Close(); err != nil {
				qerr = err
			}
		})
	}
	if raceEnabled {
		return // sync.Pool drops some of what it holds: counts vary
	}
	reused, fresh := run(false), run(true)
	require.NoError(t, qerr)
	t.Logf("%.0f allocations per read, %.0f without a kept transaction", reused, fresh)
	require.Equal(t, fresh-2, reused)
}

// TestReadTxnReuseConcurrent runs sessions doing autocommit reads on kept
// plans while a writer commits: results read to the end, results closed
// late after another statement of the session, results cancelled mid-way
// (KILL QUERY cancels the statement's context), explicit transactions.
// Every result must see one snapshot (all rows of one generation of the
// writer's), whichever transaction object it ran in. Run it with -race:
// a transaction kept while something still used it would show as a race
// or as rows of mixed generations.
func TestReadTxnReuseConcurrent(t *testing.T) {
	ctx := context.Background()
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))")
	// A hundred rows per k: a result is read in several batches, so that
	// one read at another snapshot part-way shows.
	const rowsN, groups = 300, 3
	var values []string
	for id := 1; id <= rowsN; id++ {
		values = append(values, fmt.Sprintf("(%d, %d, 'g0')", id, id%groups))
	}
	d.exec("INSERT INTO t VALUES " + strings.Join(values, ", "))
	e := d.s.OpenEngine()
	defer e.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	wg.Add(1)
	go func() { // the writer: every row to the next generation at once
		defer wg.Done()
		w := e.NewConn()
		defer w.Close()
		if err := w.UseDatabase(ctx, "mydb"); err != nil {
			fail(err)
			return
		}
		for g := 1; ; g++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Exec(ctx, fmt.Sprintf("UPDATE t SET c = 'g%d'", g)); err != nil {
				fail(err)
				return
			}
		}
	}()

	// consistent checks that rows come from one generation.
	consistent := func(rows [][]string, from string) error {
		for _, r := range rows {
			if r[len(r)-1] != rows[0][len(r)-1] {
				return fmt.Errorf("%s: rows of two generations: %v", from, rows)
			}
		}
		return nil
	}
	var done [3]atomic.Int64 // statements each reader ran
	reader := func(seed int) error {
		c := e.NewConn()
		defer c.Close()
		if err := c.UseDatabase(ctx, "mydb"); err != nil {
			return err
		}
		byK, err := c.Prepare(ctx, "SELECT id, c FROM t WHERE k = ?")
		if err != nil {
			return err
		}
		defer byK.Close()
		byID, err := c.Prepare(ctx, "SELECT c FROM t WHERE id = ?")
		if err != nil {
			return err
		}
		defer byID.Close()
		drain := func(rows *Rows) ([][]string, error) {
			var out [][]string
			for {
				vals, err := rows.Next()
				if err == io.EOF {
					return out, rows.Close()
				}
				if err != nil {
					_ = rows.Close()
					return out, err
				}
				out = append(out, []string{fmt.Sprint(vals[0]), fmt.Sprint(vals[len(vals)-1])})
			}
		}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return nil
			default:
			}
			done[seed].Add(1)
			k := int64((seed + i) % groups)
			switch i % 5 {
			case 0, 1: // read to the end
				rows, err := byK.Query(ctx, Arg{Ordinal: 1, Value: k})
				if err != nil {
					return err
				}
				got, err := drain(rows)
				if err != nil {
					return err
				}
				if len(got) != rowsN/groups {
					return fmt.Errorf("k = %d: %d rows", k, len(got))
				}
				if err := consistent(got, "read"); err != nil {
					return err
				}
			case 2: // closed late, after another statement
				rows, err := byK.Query(ctx, Arg{Ordinal: 1, Value: k})
				if err != nil {
					return err
				}
				first, err := rows.Next()
				if err != nil {
					return err
				}
				head := []string{fmt.Sprint(first[0]), fmt.Sprint(first[1])}
				for j := range 2 { // the first commits the open transaction
					point, err := byID.Query(ctx, Arg{Ordinal: 1, Value: int64((i+j)%rowsN + 1)})
					if err != nil {
						return err
					}
					if _, err := drain(point); err != nil {
						return err
					}
				}
				rest, err := drain(rows)
				if err != nil {
					return err
				}
				if err := consistent(append([][]string{head}, rest...), "late"); err != nil {
					return err
				}
			case 3: // cancelled mid-way
				cctx, cancel := context.WithCancel(ctx)
				rows, err := byK.Query(cctx, Arg{Ordinal: 1, Value: k})
				if err != nil {
					cancel()
					return err
				}
				if _, err := rows.Next(); err != nil {
					cancel()
					return err
				}
				cancel()
				_, _ = drain(rows) // an error or the end, either will do
			case 4: // an explicit transaction: one snapshot for both reads
				if _, err := c.Exec(ctx, "BEGIN"); err != nil {
					return err
				}
				var both [][]string
				for _, kk := range []int64{k, (k + 1) % groups} {
					rows, err := byK.Query(ctx, Arg{Ordinal: 1, Value: kk})
					if err != nil {
						return err
					}
					got, err := drain(rows)
					if err != nil {
						return err
					}
					both = append(both, got...)
				}
				if _, err := c.Exec(ctx, "COMMIT"); err != nil {
					return err
				}
				if err := consistent(both, "transaction"); err != nil {
					return err
				}
			}
		}
	}
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := reader(r); err != nil && !errors.Is(err, context.Canceled) {
				fail(fmt.Errorf("reader %d: %w", r, err))
			}
		}()
	}
	// Until every reader ran some hundreds of statements (or one failed):
	// the test asserts results, not speed.
	reads := e.NewConn()
	defer reads.Close()
	require.NoError(t, reads.UseDatabase(ctx, "mydb"))
	for len(errs) == 0 && min(done[0].Load(), done[1].Load(), done[2].Load()) < 500 {
		rows, err := reads.Query(ctx, "SELECT COUNT(*) FROM t")
		require.NoError(t, err)
		require.Equal(t, [][]string{{fmt.Sprint(rowsN)}}, readAll(t, rows))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
