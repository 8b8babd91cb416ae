package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
)

// processList is the engine's process list (SHOW PROCESSLIST, KILL) with a
// lock per connection. GMS's list takes one lock, shared by every
// connection, twice per statement, and holds it while it makes the
// statement's cancellable context, allocates its progress map and reads
// the clock: with eight clients on two CPUs that lock was where most of
// the server's waiting was, and a holder descheduled by the operating
// system stalled every connection behind it. Here the list's own lock
// guards only which connections exist (taken to read, except when a
// connection comes or goes); each connection's entry has a lock that its
// statements take, and that only SHOW PROCESSLIST, KILL and the progress
// updates share with them. What it records, and when, is what GMS's
// records (server installs it in place of GMS's, Start).
type processList struct {
	mu    sync.RWMutex
	procs map[uint32]*procEntry
}

// procEntry is one connection's process.
type procEntry struct {
	mu sync.Mutex
	p  gsql.Process
	// pid mirrors p.QueryPid, written under mu, so that byPid finds the
	// entry without locking every connection's.
	pid atomic.Uint64
	// kept is set while p.Kill cancels a context the connection keeps
	// for its next statements (beginKept): the statement's end leaves
	// it uncancelled.
	kept bool
}

var _ gsql.ProcessList = (*processList)(nil)

func newProcessList() *processList {
	return &processList{procs: map[uint32]*procEntry{}}
}

// entry returns connection id's entry, or nil.
func (pl *processList) entry(id uint32) *procEntry {
	pl.mu.RLock()
	e := pl.procs[id]
	pl.mu.RUnlock()
	return e
}

// byPid returns the entry whose statement has query pid, locked, or nil.
// Progress updates name a statement by its pid alone: a walk over the
// connections reads each entry's pid mirror and locks only the match,
// which costs less than a second index every statement would keep.
func (pl *processList) byPid(pid uint64) *procEntry {
	if pid == 0 {
		return nil
	}
	pl.mu.RLock()
	defer pl.mu.RUnlock()
	for _, e := range pl.procs {
		if e.pid.Load() != pid {
			continue
		}
		e.mu.Lock()
		if e.p.QueryPid == pid {
			return e
		}
		e.mu.Unlock()
	}
	return nil
}

// Processes implements sql.ProcessList.
func (pl *processList) Processes() []gsql.Process {
	pl.mu.RLock()
	defer pl.mu.RUnlock()
	out := make([]gsql.Process, 0, len(pl.procs))
	for _, e := range pl.procs {
		e.mu.Lock()
		p := e.p
		// A deep copy of the progress, which the statement goes on
		// changing.
		if e.p.Progress != nil {
			p.Progress = make(map[string]gsql.TableProgress, len(e.p.Progress))
			for name, tp := range e.p.Progress {
				c := gsql.TableProgress{Progress: tp.Progress, PartitionsProgress: make(map[string]gsql.PartitionProgress, len(tp.PartitionsProgress))}
				for part, pp := range tp.PartitionsProgress {
					c.PartitionsProgress[part] = pp
				}
				p.Progress[name] = c
			}
		}
		e.mu.Unlock()
		out = append(out, p)
	}
	return out
}

// AddConnection implements sql.ProcessList.
func (pl *processList) AddConnection(id uint32, addr string) {
	gsql.StatusVariables.IncrementGlobal("Threads_connected", 1)
	e := &procEntry{p: gsql.Process{
		Connection: id,
		Command:    gsql.ProcessCommandConnect,
		Host:       addr,
		User:       "unauthenticated user",
		StartedAt:  time.Now(),
	}}
	pl.mu.Lock()
	pl.procs[id] = e
	pl.mu.Unlock()
}

// ConnectionReady implements sql.ProcessList.
func (pl *processList) ConnectionReady(sess gsql.Session) {
	p := gsql.Process{
		Connection: sess.ID(),
		Command:    gsql.ProcessCommandSleep,
		Host:       sess.Client().Address,
		User:       sess.Client().User,
		StartedAt:  time.Now(),
		Database:   sess.GetCurrentDatabase(),
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if e := pl.procs[p.Connection]; e != nil {
		e.mu.Lock()
		e.p = p
		e.pid.Store(0)
		e.mu.Unlock()
		return
	}
	pl.procs[p.Connection] = &procEntry{p: p}
}

// RemoveConnection implements sql.ProcessList.
func (pl *processList) RemoveConnection(id uint32) {
	pl.mu.Lock()
	e := pl.procs[id]
	delete(pl.procs, id)
	pl.mu.Unlock()
	if e == nil {
		return
	}
	gsql.StatusVariables.IncrementGlobal("Threads_connected", -1)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p.Kill != nil {
		e.p.Kill()
	}
}

// BeginQuery implements sql.ProcessList.
func (pl *processList) BeginQuery(ctx *gsql.Context, query string) (*gsql.Context, error) {
	if ctx.IsInterpreted() {
		return ctx, nil
	}
	newCtx, cancel := context.WithCancel(ctx)
	if err := pl.begin(ctx, query, cancel, false); err != nil {
		cancel()
		return nil, err
	}
	return ctx.WithContext(newCtx), nil
}

// beginKept records the start of a statement whose context ctx the
// caller made cancellable with kill, which it keeps for the connection's
// next statements while nothing calls it: the statements run on cached
// plans (server_direct.go) that way save the cancellable context, its
// cancel function and the copy of ctx that BeginQuery makes at each
// statement. Its end (EndQuery, called by the statement's iterators as by
// the caller) does not call kill; a KILL QUERY calls it under the entry's
// lock, so once the statement ended the context is cancelled only if the
// statement was.
func (pl *processList) beginKept(ctx *gsql.Context, query string, kill context.CancelFunc) error {
	return pl.begin(ctx, query, kill, true)
}

// begin records the start of ctx's statement, query, which kill cancels;
// kept says the statement's end leaves kill uncalled.
func (pl *processList) begin(ctx *gsql.Context, query string, kill context.CancelFunc, kept bool) error {
	e := pl.entry(ctx.Session.ID())
	if e == nil {
		return errors.New("internal error: connection not registered with process list")
	}
	pid := ctx.Pid()
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p.QueryPid == pid && pid != 0 {
		return gsql.ErrPidAlreadyUsed.New(pid)
	}
	gsql.StatusVariables.IncrementGlobal("Threads_running", 1)
	e.p.Command = gsql.ProcessCommandQuery
	e.p.Query = query
	e.p.QueryPid = pid
	e.pid.Store(pid)
	e.p.StartedAt = now
	e.p.Kill = kill
	e.kept = kept
	e.p.Progress = nil // made by the first AddTableProgress
	return nil
}

// EndQuery implements sql.ProcessList.
func (pl *processList) EndQuery(ctx *gsql.Context) {
	if ctx.IsInterpreted() {
		return
	}
	e := pl.entry(ctx.Session.ID())
	if e == nil {
		return
	}
	pid := ctx.Pid()
	if e.pid.Load() != pid {
		// Ended already: a statement's iterator ends it when it is
		// closed, and its caller again after it.
		return
	}
	now := time.Now()
	e.mu.Lock()
	if e.p.QueryPid != pid {
		e.mu.Unlock()
		return
	}
	took := now.Sub(e.p.StartedAt)
	kill := e.p.Kill
	if e.kept {
		kill = nil
		e.kept = false
	}
	e.p.Command = gsql.ProcessCommandSleep
	e.p.Query = ""
	e.p.StartedAt = now
	e.p.Kill = nil
	e.p.QueryPid = 0
	e.pid.Store(0)
	e.p.Progress = nil
	e.mu.Unlock()
	gsql.StatusVariables.IncrementGlobal("Threads_running", -1)
	if kill != nil {
		kill()
	}
	if lq := longQueryTime(); lq > 0 && took.Seconds() > lq {
		gsql.IncrementStatusVariable(ctx, "Slow_queries", 1)
	}
}

// longQueryTime is the global long_query_time in seconds, 0 when unset.
func longQueryTime() float64 {
	_, v, ok := gsql.SystemVariables.GetGlobal("long_query_time")
	if !ok {
		return 0
	}
	f, _ := v.(float64)
	return f
}

// BeginOperation implements sql.ProcessList.
func (pl *processList) BeginOperation(ctx *gsql.Context) (*gsql.Context, error) {
	if ctx.IsInterpreted() {
		return ctx, nil
	}
	e := pl.entry(ctx.Session.ID())
	if e == nil {
		return nil, errors.New("internal error: connection not registered with process list")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p.Kill != nil {
		return nil, errors.New("internal error: attempt to begin operation on connection which was already running one")
	}
	newCtx, cancel := ctx.NewSubContext()
	e.p.Kill = cancel
	return newCtx, nil
}

// EndOperation implements sql.ProcessList.
func (pl *processList) EndOperation(ctx *gsql.Context) {
	if ctx.IsInterpreted() {
		return
	}
	e := pl.entry(ctx.Session.ID())
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p.Kill != nil {
		e.p.Kill()
		e.p.Kill = nil
	}
}

// Kill implements sql.ProcessList: it cancels the connection's running
// statement or operation.
func (pl *processList) Kill(id uint32) {
	e := pl.entry(id)
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p.Kill != nil {
		e.p.Kill()
	}
}

// progressOf runs f on the progress of the statement pid, under its
// entry's lock; nothing when no connection runs pid.
func (pl *processList) progressOf(pid uint64, f func(p *gsql.Process)) {
	e := pl.byPid(pid)
	if e == nil {
		return
	}
	defer e.mu.Unlock()
	f(&e.p)
}

// AddTableProgress implements sql.ProcessList.
func (pl *processList) AddTableProgress(pid uint64, name string, total int64) {
	pl.progressOf(pid, func(p *gsql.Process) {
		if p.Progress == nil {
			p.Progress = map[string]gsql.TableProgress{}
		}
		if tp, ok := p.Progress[name]; ok {
			tp.Total = total
			p.Progress[name] = tp
		} else {
			p.Progress[name] = gsql.NewTableProgress(name, total)
		}
	})
}

// UpdateTableProgress implements sql.ProcessList.
func (pl *processList) UpdateTableProgress(pid uint64, name string, delta int64) {
	pl.progressOf(pid, func(p *gsql.Process) {
		if p.Progress == nil {
			p.Progress = map[string]gsql.TableProgress{}
		}
		tp, ok := p.Progress[name]
		if !ok {
			tp = gsql.NewTableProgress(name, -1)
		}
		tp.Done += delta
		p.Progress[name] = tp
	})
}

// RemoveTableProgress implements sql.ProcessList.
func (pl *processList) RemoveTableProgress(pid uint64, name string) {
	pl.progressOf(pid, func(p *gsql.Process) { delete(p.Progress, name) })
}

// AddPartitionProgress implements sql.ProcessList.
func (pl *processList) AddPartitionProgress(pid uint64, table, partition string, total int64) {
	pl.progressOf(pid, func(p *gsql.Process) {
		tp, ok := p.Progress[table]
		if !ok {
			return
		}
		if pp, ok := tp.PartitionsProgress[partition]; ok {
			pp.Total = total
			tp.PartitionsProgress[partition] = pp
		} else {
			tp.PartitionsProgress[partition] = gsql.PartitionProgress{Progress: gsql.Progress{Name: partition, Total: total}}
		}
	})
}

// UpdatePartitionProgress implements sql.ProcessList.
func (pl *processList) UpdatePartitionProgress(pid uint64, table, partition string, delta int64) {
	pl.progressOf(pid, func(p *gsql.Process) {
		tp, ok := p.Progress[table]
		if !ok {
			return
		}
		pp, ok := tp.PartitionsProgress[partition]
		if !ok {
			pp = gsql.PartitionProgress{Progress: gsql.Progress{Name: partition, Total: -1}}
		}
		pp.Done += delta
		tp.PartitionsProgress[partition] = pp
	})
}

// RemovePartitionProgress implements sql.ProcessList.
func (pl *processList) RemovePartitionProgress(pid uint64, table, partition string) {
	pl.progressOf(pid, func(p *gsql.Process) {
		if tp, ok := p.Progress[table]; ok {
			delete(tp.PartitionsProgress, partition)
		}
	})
}
