package server

import (
	"context"
	"fmt"
	"sync"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/variables"
	"github.com/stretchr/testify/require"
)

// TestProcessListMatchesEngine runs one sequence of calls on the server's
// process list and on GMS's and compares what each then lists, and which
// contexts each cancelled.
func TestProcessListMatchesEngine(t *testing.T) {
	initStatusVariables()
	run := func(pl gsql.ProcessList) []string {
		var out []string
		list := func(what string) {
			for _, p := range pl.Processes() {
				var tables []string
				for name, tp := range p.Progress {
					tables = append(tables, fmt.Sprintf("%s %d/%d %d partitions", name, tp.Done, tp.Total, len(tp.PartitionsProgress)))
				}
				out = append(out, fmt.Sprintf("%s: conn %d %s %q user %q host %q db %q pid %d kill %v progress %v",
					what, p.Connection, p.Command, p.Query, p.User, p.Host, p.Database, p.QueryPid, p.Kill != nil, tables))
			}
		}
		sess := gsql.NewBaseSessionWithClientServer("127.0.0.1:3306", gsql.Client{Address: "10.0.0.1:5000", User: "u"}, 7)
		sess.SetCurrentDatabase("main")
		pl.AddConnection(7, "10.0.0.1:5000")
		list("added")
		pl.ConnectionReady(sess)
		list("ready")
		ctx := gsql.NewContext(context.Background(), gsql.WithSession(sess), gsql.WithPid(41), gsql.WithProcessList(pl))
		qctx, err := pl.BeginQuery(ctx, "SELECT 1")
		require.NoError(t, err)
		list("query")
		pl.AddTableProgress(41, "t", 2)
		pl.AddPartitionProgress(41, "t", "p0", 5)
		pl.UpdatePartitionProgress(41, "t", "p0", 3)
		pl.UpdateTableProgress(41, "t", 1)
		pl.UpdateTableProgress(99, "t", 1) // no such statement
		list("progress")
		pl.RemovePartitionProgress(41, "t", "p0")
		list("partition removed")
		pl.Kill(7)
		out = append(out, fmt.Sprintf("killed: %v", qctx.Err()))
		pl.EndQuery(qctx)
		list("ended")
		octx, err := pl.BeginOperation(ctx)
		require.NoError(t, err)
		_, err = pl.BeginOperation(ctx)
		out = append(out, fmt.Sprintf("second operation: %v", err != nil))
		pl.EndOperation(octx)
		out = append(out, fmt.Sprintf("operation ended: %v", octx.Err()))
		qctx, err = pl.BeginQuery(ctx.WithQuery("SELECT 2"), "SELECT 2")
		require.NoError(t, err)
		pl.RemoveConnection(7)
		out = append(out, fmt.Sprintf("removed: %v", qctx.Err()))
		list("gone")
		_, err = pl.BeginQuery(ctx, "SELECT 3")
		out = append(out, fmt.Sprintf("unknown connection: %v", err))
		return out
	}
	want := run(sqle.NewProcessList())
	got := run(newProcessList())
	require.Equal(t, want, got)
}

// TestProcessListConcurrent runs statements on many connections at once,
// with listings and kills beside them (run with -race).
func TestProcessListConcurrent(t *testing.T) {
	initStatusVariables()
	pl := newProcessList()
	const conns, stmts = 8, 200
	var wg sync.WaitGroup
	for id := uint32(1); id <= conns; id++ {
		pl.AddConnection(id, "addr")
		sess := gsql.NewBaseSessionWithClientServer("", gsql.Client{User: "u"}, id)
		pl.ConnectionReady(sess)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range stmts {
				ctx := gsql.NewContext(context.Background(), gsql.WithSession(sess), gsql.WithPid(uint64(id)<<32|uint64(i+1)))
				qctx, err := pl.BeginQuery(ctx, "SELECT 1")
				if err != nil {
					t.Error(err)
					return
				}
				pl.AddTableProgress(ctx.Pid(), "t", 1)
				pl.EndQuery(qctx)
				if qctx.Err() == nil {
					t.Error("the statement's context outlived it")
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range stmts {
			for _, p := range pl.Processes() {
				pl.Kill(p.Connection)
			}
		}
	}()
	wg.Wait()
	for _, p := range pl.Processes() {
		require.Equal(t, gsql.ProcessCommandSleep, p.Command)
		pl.RemoveConnection(p.Connection)
	}
	require.Empty(t, pl.Processes())
}

// initStatusVariables makes the engine's status variables, which the
// process lists count connections in, when no engine has yet.
func initStatusVariables() {
	if gsql.StatusVariables == nil {
		variables.InitStatusVariables()
	}
}

// TestProcessListKeptContext checks the statements that run under the
// connection's kept context (connState.cancellable, beginKept): their end
// leaves it live for the next statement, a KILL during one cancels it and
// the next statement gets a new one, and a KILL between statements
// cancels nothing.
func TestProcessListKeptContext(t *testing.T) {
	initStatusVariables()
	pl := newProcessList()
	sess := gsql.NewBaseSessionWithClientServer("127.0.0.1:3306", gsql.Client{Address: "10.0.0.1:5000", User: "u"}, 7)
	pl.AddConnection(7, "10.0.0.1:5000")
	pl.ConnectionReady(sess)
	st := &connState{id: 7}
	parent := context.Background()
	pid := uint64(0)
	stmt := func(during func()) context.Context {
		t.Helper()
		cctx, kill := st.cancellable(parent)
		pid++
		ctx := gsql.NewContext(cctx, gsql.WithSession(sess), gsql.WithPid(pid), gsql.WithProcessList(pl))
		require.NoError(t, pl.beginKept(ctx, "SELECT 1", kill))
		require.Equal(t, gsql.ProcessCommandQuery, pl.Processes()[0].Command)
		if during != nil {
			during()
		}
		pl.EndQuery(ctx)
		pl.EndQuery(ctx) // as the statement's iterator and its caller both end it
		require.Equal(t, gsql.ProcessCommandSleep, pl.Processes()[0].Command)
		return cctx
	}

	first := stmt(nil)
	require.NoError(t, first.Err(), "ended, not cancelled")
	require.True(t, first == stmt(nil), "kept for the next statement")

	pl.Kill(7) // between statements: nothing runs
	require.NoError(t, first.Err())

	killed := stmt(func() { pl.Kill(7) })
	require.True(t, first == killed)
	require.ErrorIs(t, killed.Err(), context.Canceled)
	next := stmt(nil)
	require.True(t, killed != next, "a cancelled context is not used again")
	require.NoError(t, next.Err())

	// A statement begun by BeginQuery still has its context cancelled at
	// its end, as GMS's list does.
	ctx := gsql.NewContext(parent, gsql.WithSession(sess), gsql.WithPid(100), gsql.WithProcessList(pl))
	qctx, err := pl.BeginQuery(ctx, "SELECT 2")
	require.NoError(t, err)
	pl.EndQuery(qctx)
	require.ErrorIs(t, qctx.Err(), context.Canceled)
	require.NoError(t, next.Err())

	// A parent never cancelled (the protocol layer's per-command context
	// of a text statement) leaves the kept context in place; one that
	// can be cancelled gets a context of its own.
	parent = context.WithValue(context.Background(), struct{}{}, 1)
	require.True(t, next == stmt(nil), "a parent never cancelled: the kept context")
	parent, cancel := context.WithCancel(context.Background())
	own := stmt(nil)
	require.True(t, next != own, "a parent that can be cancelled, a context of its own")
	cancel()
	require.ErrorIs(t, own.Err(), context.Canceled)
}
