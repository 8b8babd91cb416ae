package server

import (
	"context"
	"errors"
	"io"
	"slices"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/strata-db/strata/sqlstore"
)

// Statements on cached plans, on the connection's goroutine. GMS's
// protocol handler binds and analyzes every statement, and reads every
// result through an errgroup of goroutines (one reading the rows, one
// converting them, one polling the socket) and a timer: for a point select
// those goroutines, their stacks grown at each statement and the
// scheduler's hand-overs cost about as much as the read. A statement the
// session's plan cache runs (sqlstore.Conn.CachedPlan: SELECT 1, SET,
// BEGIN, COMMIT, selects of the shape sqlstore.PreparedSelect reuses and
// writes of the shapes sqlstore.PreparedWrite reuses, as text or as a
// prepared statement with integer (writes: also string and NULL)
// arguments) is run here
// instead: its context made by the protocol layer's session manager and
// entered in the process list (KILL QUERY and SHOW PROCESSLIST see it), its
// rows read and converted by the goroutine that writes them. A hung-up
// client still cancels it (watchPeer, in the callers). Every other
// statement goes to GMS's handler as before.

// rowsBatch is how many rows go to the protocol layer per call, as in
// GMS's handler.
const rowsBatch = 128

// directConn is the plan-cache connection of one client connection: an
// sqlstore.Conn attached to the connection's session.
type directConn struct {
	sess *sqlstore.Session
	conn *sqlstore.Conn
}

// directConnOf returns the attached connection of c's current session,
// or nil when the direct path is off or c has no session yet.
func (h *handler) directConnOf(c *mysql.Conn) *sqlstore.Conn {
	if h.direct == nil || h.sm == nil {
		return nil
	}
	st := h.stateOf(c)
	if st == nil || st.sess == nil {
		return nil
	}
	if st.direct == nil || st.direct.sess != st.sess {
		// A new session (the connection was reset): its own cache.
		st.direct = &directConn{sess: st.sess, conn: h.direct.AttachConn(st.sess)}
	}
	return st.direct.conn
}

// runDirect runs query (with args, for a prepared statement) on the
// connection's goroutine when the session's plan cache has it, giving the
// result to callback; handled is false, and nothing was run, otherwise.
//
// The protocol layer writes each result before callback returns (an
// execution whose rows a cursor keeps never comes here: ComStmtExecute
// sends it to GMS's handler), so the rows' slices are the connection's,
// used again by its next results.
func (h *handler) runDirect(ctx context.Context, c *mysql.Conn, query string, args []sqlstore.Arg, callback func(*sqltypes.Result, bool) error) (handled bool, err error) {
	conn := h.directConnOf(c)
	if conn == nil || !conn.CachedPlan(ctx, query, args) {
		return false, nil
	}
	// A write runs as the handler's do: an autocommit write that loses a
	// write conflict runs again, found in the cache again (a conflict
	// sends nothing to the client).
	again := false
	err = h.store.RunWrite(ctx, query, func() bool { return h.autocommitting(c) }, func() bool { return h.optimistic(c) }, func() error {
		if again && !conn.CachedPlan(ctx, query, args) {
			return err
		}
		again = true
		err = h.runCached(ctx, c, conn, query, callback)
		return err
	})
	return true, err
}

// runCached runs the statement conn.CachedPlan found for query.
func (h *handler) runCached(ctx context.Context, c *mysql.Conn, conn *sqlstore.Conn, query string, callback func(*sqltypes.Result, bool) error) error {
	sctx, kill, err := h.statementContext(ctx, c, query)
	if err != nil {
		return err
	}
	if kill != nil {
		// The context is the connection's kept one (statementContext).
		pl := sctx.ProcessList.(*processList)
		if err := pl.beginKept(sctx, query, kill); err != nil {
			return err
		}
		defer pl.EndQuery(sctx)
	} else {
		sctx, err = sctx.ProcessList.BeginQuery(sctx, query)
		if err != nil {
			return err
		}
		defer sctx.ProcessList.EndQuery(sctx)
	}
	if err := gsql.SessionCommandBegin(sctx.Session); err != nil {
		return err
	}
	defer gsql.SessionCommandEnd(sctx.Session)

	schema, iter, err := conn.RunCached(sctx, query)
	if err == nil {
		err = h.sendResult(sctx, c, schema, iter, callback)
	}
	if err != nil {
		// As GMS's handler returns them (a typed nil must not escape).
		return gsql.CastSQLError(err)
	}
	return nil
}

// directPidBit marks the statements run here: the bit set keeps their
// process IDs apart from those the session manager gives GMS's.
const directPidBit = 1 << 62

// statementContext returns the context of a statement of connection c
// with text query, as the session manager's NewContextWithQuery makes it
// (session, process list, memory manager, services, a fresh process ID),
// without the manager's lock, which every connection shares, two lookups
// under it, and a dozen allocations: the options that are the same for
// every statement of the session are made once. When the process list is
// the server's, the context is already cancellable (connState.cancellable)
// and its cancel function is returned: the statement is begun with the
// list's beginKept, not BeginQuery.
func (h *handler) statementContext(ctx context.Context, c *mysql.Conn, query string) (*gsql.Context, context.CancelFunc, error) {
	st := h.stateOf(c)
	if st == nil || st.sess == nil || h.engine == nil {
		sctx, err := h.sm.NewContextWithQuery(ctx, c, query)
		return sctx, nil, err
	}
	if st.ctxSess != st.sess {
		st.ctxSess = st.sess
		st.ctxOpts = append(st.ctxOpts[:0],
			gsql.WithSession(st.sess),
			gsql.WithMemoryManager(h.engine.MemoryManager),
			gsql.WithProcessList(h.engine.ProcessList),
			gsql.WithServices(gsql.Services{KillConnection: h.sm.KillConnection, LoadInfile: c.LoadInfile}),
			// The process ID and the query, set by st.pid and
			// st.query: one closure per session, not two per
			// statement.
			func(c *gsql.Context) {
				gsql.WithPid(st.pid)(c)
				gsql.WithQuery(st.query)(c)
			})
	}
	st.pid = h.pids.Add(1) | directPidBit
	st.query = query
	defer func() { st.query = "" }()
	if _, ok := h.engine.ProcessList.(*processList); !ok {
		return sqlstore.NewContext(ctx, st.ctxOpts...), nil, nil
	}
	cctx, kill := st.cancellable(ctx)
	return sqlstore.NewContext(cctx, st.ctxOpts...), kill, nil
}

// sendResult reads iter to the end and gives its rows to callback in
// batches, or its OK result, as GMS's handler does; iter is closed. The
// batches are made in the connection's result, row list and values
// (runDirect says why they may be).
func (h *handler) sendResult(ctx *gsql.Context, c *mysql.Conn, schema gsql.Schema, iter gsql.RowIter, callback func(*sqltypes.Result, bool) error) (err error) {
	closed := false
	defer func() {
		if !closed {
			if cerr := iter.Close(ctx); err == nil {
				err = cerr
			}
		}
	}()
	if types.IsOkResultSchema(schema) {
		row, err := iter.Next(ctx)
		if err != nil {
			return err
		}
		if _, err := iter.Next(ctx); err != io.EOF {
			if err == nil {
				err = errors.New("result schema iterator returned more than one row")
			}
			return err
		}
		closed = true
		if err := iter.Close(ctx); err != nil {
			return err
		}
		ok := row[0].(types.OkResult)
		var r *sqltypes.Result
		if st := h.stateOf(c); st != nil {
			r = &st.ok // written before the connection's next command
		} else {
			r = new(sqltypes.Result)
		}
		*r = sqltypes.Result{RowsAffected: ok.RowsAffected, InsertID: ok.InsertID}
		if ok.Info != nil {
			r.Info = ok.Info.String()
		}
		setStatusFlags(ctx, c)
		return callback(r, false)
	}

	buf := gsql.ByteBufPool.Get().(*gsql.ByteBuffer)
	defer func() {
		buf.Reset()
		gsql.ByteBufPool.Put(buf)
	}()
	st := h.stateOf(c)
	var fields []*querypb.Field
	if st != nil {
		fields = st.fields.of(ctx, schema)
	} else {
		fields = fieldsOf(ctx, schema)
	}
	var r *sqltypes.Result
	var vals *rowValues
	if st == nil {
		r = &sqltypes.Result{Fields: fields}
		vals = &rowValues{}
	} else {
		r = &st.res
		*r = sqltypes.Result{Fields: fields, Rows: st.rows[:0]}
		vals = &st.vals
		vals.rewind()
		defer func() {
			// Kept for the next result: the row list's room, no
			// values (they point into buf).
			clear(r.Rows)
			st.rows = r.Rows[:0]
			r.Rows = nil
		}()
	}
	sent := false
	for {
		row, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if types.IsOkResult(row) {
			ok := row[0].(types.OkResult)
			r = &sqltypes.Result{RowsAffected: ok.RowsAffected, InsertID: ok.InsertID}
			if ok.Info != nil {
				r.Info = ok.Info.String()
			}
			continue
		}
		out, err := vals.toSQL(ctx, schema, row, buf)
		if err != nil {
			return err
		}
		r.Rows = append(r.Rows, out)
		r.RowsAffected++
		if r.RowsAffected == rowsBatch {
			if err := callback(r, false); err != nil {
				return err
			}
			sent = true
			if st != nil && r == &st.res {
				// Written: the next batch takes its place.
				*r = sqltypes.Result{Fields: fields, Rows: r.Rows[:0]}
				vals.rewind()
			} else {
				r = &sqltypes.Result{Fields: fields}
			}
		}
	}
	closed = true
	if err := iter.Close(ctx); err != nil {
		return err
	}
	setStatusFlags(ctx, c)
	if sent && r.RowsAffected == 0 {
		return nil
	}
	return callback(r, false)
}

// rowValues converts result rows to protocol values as GMS's RowToSQL
// does (the same conversion, value by value, into the same buffer), but
// carves the rows' value slices out of chunks that double in size from
// one row up to a batch: a range of 100 rows costs 7 allocations instead
// of 100, a single row still one of its own size. Each row keeps a slice
// nothing writes again, as the protocol layer may hold a batch (a
// server-side cursor) while the next is made; when the protocol layer
// has written them and holds none (runDirect's results), rewind offers the
// latest chunk again.
type rowValues struct {
	chunk []sqltypes.Value
	rows  int              // rows the next chunk holds
	last  []sqltypes.Value // the latest chunk, whole
}

// rewind makes the latest chunk, and what it points to, free again.
func (v *rowValues) rewind() {
	clear(v.last[:len(v.last)-len(v.chunk)])
	v.chunk = v.last
}

func (v *rowValues) toSQL(ctx *gsql.Context, schema gsql.Schema, row gsql.Row, buf *gsql.ByteBuffer) ([]sqltypes.Value, error) {
	n := len(schema)
	if n == 0 {
		return []sqltypes.Value{}, nil
	}
	if len(v.chunk) < n {
		v.rows = min(max(2*v.rows, 1), rowsBatch)
		v.chunk = make([]sqltypes.Value, v.rows*n)
		v.last = v.chunk
	}
	out := v.chunk[:n:n]
	v.chunk = v.chunk[n:]
	for i, col := range schema {
		if row[i] == nil {
			out[i] = sqltypes.NULL
			continue
		}
		val, err := col.Type.SQL(ctx, buf.Get(), row[i])
		buf.Grow(val.Len())
		if err != nil {
			return nil, err
		}
		out[i] = val
	}
	return out, nil
}

// setStatusFlags sets the autocommit and in-transaction flags of the
// packets that end the result, as GMS's handler does.
func setStatusFlags(ctx *gsql.Context, c *mysql.Conn) {
	on := true
	if sess, ok := ctx.Session.(*sqlstore.Session); ok && !ctx.GetIgnoreAutoCommit() {
		// The session's cached copy of its variables: no lookup by name.
		on = sess.Autocommitting(ctx)
	} else if v, err := ctx.GetSessionVariable(ctx, gsql.AutoCommitSessionVar); err == nil {
		if b, err := gsql.ConvertToBool(ctx, v); err == nil {
			on = b
		}
	}
	if on {
		c.StatusFlags |= uint16(mysql.ServerStatusAutocommit)
	} else {
		c.StatusFlags &^= uint16(mysql.ServerStatusAutocommit)
	}
	if ctx.GetTransaction() != nil {
		c.StatusFlags |= uint16(mysql.ServerInTransaction)
	} else {
		c.StatusFlags &^= uint16(mysql.ServerInTransaction)
	}
}

// fieldsCache keeps the column descriptions of a connection's latest
// results on kept plans: the next statement of one of those plans
// describes the same columns, and describing them afresh cost two
// allocations (the list and one per column). A few results are kept, not
// one, because a client's transaction cycles through several (sysbench's
// read-only transaction: a range of c, a SUM, then c again). The protocol
// layer only reads the descriptions, and writes them before the
// statement returns.
type fieldsCache struct {
	entries [fieldsKept]fieldsEntry
	next    int // the entry the next miss replaces
}

// fieldsKept is how many results' descriptions a connection keeps.
const fieldsKept = 4

type fieldsEntry struct {
	schema  gsql.Schema // held: its columns' addresses cannot be reused while cached
	results gsql.CharacterSetID
	fields  []*querypb.Field
}

// of returns fieldsOf(ctx, s): the descriptions of a kept result when s
// has its very same columns and the character set of results is the
// same, or when each column is described as the kept one (a plan that
// makes its schema per execution, as a sort's or an aggregate's).
func (fc *fieldsCache) of(ctx *gsql.Context, s gsql.Schema) []*querypb.Field {
	results := ctx.GetCharacterSetResults()
	if len(s) > 0 {
		for i := range fc.entries {
			e := &fc.entries[i]
			if e.fields != nil && e.results == results && slices.Equal(s, e.schema) { // the very same columns
				return e.fields
			}
		}
		for i := range fc.entries {
			if e := &fc.entries[i]; e.results == results && e.describes(ctx, s) {
				e.schema = s
				return e.fields
			}
		}
	}
	e := &fc.entries[fc.next]
	fc.next = (fc.next + 1) % fieldsKept
	e.schema, e.results, e.fields = s, results, fieldsOf(ctx, s)
	return e.fields
}

// describes reports whether e's descriptions are those of s's columns.
func (e *fieldsEntry) describes(ctx *gsql.Context, s gsql.Schema) bool {
	if e.fields == nil || len(s) != len(e.fields) {
		return false
	}
	for i, col := range s {
		if !describeColumn(ctx, col, e.results).is(e.fields[i]) {
			return false
		}
	}
	return true
}

// columnDesc is what a column definition packet says of a column.
type columnDesc struct {
	name, table, db                  string
	typ                              querypb.Type
	charset, length, flags, decimals uint32
}

// is reports whether f describes the column as d does.
func (d columnDesc) is(f *querypb.Field) bool {
	return f.Name == d.name && f.OrgName == d.name && f.Table == d.table && f.OrgTable == d.table &&
		f.Database == d.db && f.Type == d.typ && f.Charset == d.charset &&
		f.ColumnLength == d.length && f.Flags == d.flags && f.Decimals == d.decimals
}

func (d columnDesc) field() *querypb.Field {
	return &querypb.Field{
		Name:         d.name,
		OrgName:      d.name,
		Table:        d.table,
		OrgTable:     d.table,
		Database:     d.db,
		Type:         d.typ,
		Charset:      d.charset,
		ColumnLength: d.length,
		Flags:        d.flags,
		Decimals:     d.decimals,
	}
}

// describeColumn describes col to the client as GMS's handler does: the
// character set of text columns is character_set_results (results) when
// set, binary for binary types.
func describeColumn(ctx *gsql.Context, col *gsql.Column, results gsql.CharacterSetID) columnDesc {
	charset := uint32(gsql.Collation_Default.CharacterSet())
	if ct, ok := col.Type.(gsql.TypeWithCollation); ok {
		charset = uint32(ct.Collation().CharacterSet())
	}
	if types.IsBinaryType(col.Type) {
		charset = uint32(gsql.Collation_binary)
	} else if results != gsql.CharacterSet_Unspecified {
		charset = uint32(results)
	}
	var flags querypb.MySqlFlag
	if !col.Nullable {
		flags |= querypb.MySqlFlag_NOT_NULL_FLAG
	}
	if col.AutoIncrement {
		flags |= querypb.MySqlFlag_AUTO_INCREMENT_FLAG
	}
	if col.PrimaryKey {
		flags |= querypb.MySqlFlag_PRI_KEY_FLAG
	}
	if types.IsUnsigned(col.Type) {
		flags |= querypb.MySqlFlag_UNSIGNED_FLAG
	}
	d := columnDesc{
		name:    col.Name,
		table:   col.Source,
		db:      col.DatabaseSource,
		typ:     col.Type.Type(),
		charset: charset,
		length:  col.Type.MaxTextResponseByteLength(ctx),
		flags:   uint32(flags),
	}
	if types.IsDecimal(col.Type) {
		d.decimals = uint32(col.Type.(gsql.DecimalType).Scale())
	} else if types.IsDatetimeType(col.Type) {
		d.decimals = uint32(col.Type.(gsql.DatetimeType).Precision())
	}
	return d
}

// fieldsOf describes a result's columns to the client as GMS's handler
// does (describeColumn).
func fieldsOf(ctx *gsql.Context, s gsql.Schema) []*querypb.Field {
	results := ctx.GetCharacterSetResults()
	fields := make([]*querypb.Field, len(s))
	for i, col := range s {
		fields[i] = describeColumn(ctx, col, results).field()
	}
	return fields
}

// bindArgs returns a prepared statement's arguments as the plan cache
// takes them, or nil when one is of another kind: integers as integers,
// NULL as nil, and every quoted value (strings, binary strings, dates and
// times) as a string, which is how GMS's handler binds them too (an
// integer literal, NULL, or a string literal of the value's bytes).
// Floating-point and decimal arguments go to the handler.
func bindArgs(bindVars map[string]*querypb.BindVariable, buf []sqlstore.Arg) []sqlstore.Arg {
	args := buf[:0]
	for name, bv := range bindVars {
		v, err := sqltypes.BindVariableToValue(bv)
		if err != nil {
			return nil
		}
		switch {
		case v.IsSigned():
			n, err := sqltypes.ToInt64(v)
			if err != nil {
				return nil
			}
			args = append(args, sqlstore.Arg{Name: name, Value: n})
		case v.IsUnsigned():
			n, err := sqltypes.ToUint64(v)
			if err != nil {
				return nil
			}
			args = append(args, sqlstore.Arg{Name: name, Value: n})
		case v.IsNull():
			args = append(args, sqlstore.Arg{Name: name, Value: nil})
		case v.IsQuoted():
			args = append(args, sqlstore.Arg{Name: name, Value: string(v.Raw())})
		default:
			return nil
		}
	}
	return args
}
