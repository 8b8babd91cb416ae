package sqlstore

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Rows is the result of a query, read from the engine as Next is called.
// Closing it ends the statement (and commits it when it autocommits); a
// statement that fails while its rows are read is rolled back first when
// it autocommits (Session.AbortStatement).
//
// Close gives the Rows back to its connection, whose next query reuses it
// and its buffers: a Rows must not be used after Close, but for Result,
// which stays valid until the connection runs its next statement.
type Rows struct {
	conn   *Conn
	ctx    *sql.Context
	schema sql.Schema // nil for a statement that returns an OK result
	iter   sql.RowIter
	conv   []converter
	isInt  []bool   // the column's converter is convInt
	vals   []any    // Next's row, reused
	text   [][]byte // NextText's row, reused
	cols   []Column // made by the first call of Columns
	ok     bool     // the statement returns an OK result, not rows
	res    Result   // what the OK rows said
	closed bool
	// peeked holds the first row (or error) read by peekStale, before
	// Query returned (rerun.go), which advance returns first.
	peeked    sql.Row
	peekedErr error
	hasPeeked bool
}

// Column describes a result column in MySQL's terms.
type Column struct {
	Name string
	// TypeName is MySQL's name of the type, upper case and without
	// length: "INT", "VARCHAR", "DECIMAL", "JSON".
	TypeName string
	Nullable bool
	// Length is the most characters (text types) or bytes (binary types)
	// a value holds; 0 for other types.
	Length int64
	// Precision and Scale are a DECIMAL's digits and digits after the
	// point; 0 for other types.
	Precision, Scale int64
	// ScanType is the Go type of the values Next returns: int64, uint64
	// (BIGINT UNSIGNED and BIT), float64, time.Time, []byte, string, or
	// the empty interface for a NULL column.
	ScanType reflect.Type
	// Numeric reports a number, which clients align right.
	Numeric bool
	// Binary reports bytes that are not text (BINARY, VARBINARY, BLOB,
	// BIT, spatial types), which clients show in hex when not printable.
	Binary bool
}

// newRows returns the Rows of a started statement, reusing the
// connection's spare.
func (c *Conn) newRows(sctx *sql.Context, schema sql.Schema, iter sql.RowIter) *Rows {
	r := c.spare
	c.spare = nil
	if r == nil {
		r = &Rows{}
	}
	ok := types.IsOkResultSchema(schema)
	if ok {
		schema = nil
	}
	*r = Rows{conn: c, ctx: sctx, schema: schema, iter: iter, ok: ok,
		conv: r.conv[:0], isInt: r.isInt[:0], vals: r.vals[:0], text: r.text[:0], cols: r.cols[:0]}
	for _, col := range schema {
		r.conv = append(r.conv, converterFor(col.Type))
		r.isInt = append(r.isInt, isIntColumn(col.Type))
	}
	return r
}

// NumColumns returns the number of result columns: 0 for a statement that
// returns no rows.
func (r *Rows) NumColumns() int { return len(r.schema) }

// ColumnName returns the name of column i.
func (r *Rows) ColumnName(i int) string { return r.schema[i].Name }

// Columns describes the result columns, in a slice valid until Close.
func (r *Rows) Columns() []Column {
	if len(r.cols) == len(r.schema) {
		return r.cols
	}
	r.cols = r.cols[:0]
	for _, c := range r.schema {
		r.cols = append(r.cols, describe(c))
	}
	return r.cols
}

// Result returns what a statement that returns no rows reported: valid
// once Next has returned io.EOF.
func (r *Rows) Result() Result {
	res := r.res
	res.Warnings = r.conn.sess.WarningCount()
	return res
}

// Next returns the next row, io.EOF after the last. Its values are Go
// values, one per column, in a slice the next call overwrites:
//
//	TINYINT ... BIGINT, YEAR          int64 (uint64 above math.MaxInt64)
//	BIT                               int64 (uint64 above math.MaxInt64)
//	FLOAT, DOUBLE                     float64
//	DECIMAL                           string with the column's scale ("12.50")
//	DATE, DATETIME, TIMESTAMP         time.Time in UTC (the zero time for zero dates)
//	TIME                              string ("-01:02:03.500000")
//	CHAR, VARCHAR, TEXT, ENUM, SET    string (ENUM and SET by their labels)
//	BINARY, VARBINARY, BLOB, geometry []byte (the caller's to keep)
//	JSON                              []byte holding the JSON text
//	NULL                              nil
func (r *Rows) Next() ([]any, error) {
	row, err := r.advance()
	if err != nil {
		return nil, err
	}
	n := len(r.schema)
	if cap(r.vals) < n {
		r.vals = make([]any, n)
	}
	vals := r.vals[:n]
	for i := range vals {
		v := row[i]
		if v == nil {
			vals[i] = nil
			continue
		}
		if w, ok := v.(sql.AnyWrapper); ok {
			if v, err = w.UnwrapAny(r.ctx); err != nil {
				r.conn.sess.AbortStatement(r.ctx)
				return nil, r.failed(clientError(err))
			}
		}
		if r.isInt[i] {
			if x, ok := narrowInt(v); ok {
				vals[i] = r.conn.ints.Box(x) // an INT's int32 widened without a copy each
				continue
			}
		}
		if vals[i], err = r.conv[i](r.ctx, r.schema[i].Type, v); err != nil {
			r.conn.sess.AbortStatement(r.ctx)
			return nil, r.failed(err)
		}
	}
	return vals, nil
}

// NextText returns the next row, io.EOF after the last, as the MySQL
// text protocol sends it: each value's text, nil for NULL, in slices the
// next call may overwrite.
func (r *Rows) NextText() ([][]byte, error) {
	row, err := r.advance()
	if err != nil {
		return nil, err
	}
	n := len(row)
	if cap(r.text) < n {
		r.text = make([][]byte, n)
	}
	text := r.text[:n]
	for i, v := range row {
		if v == nil {
			text[i] = nil
			continue
		}
		t := r.schema[i].Type
		sv, err := t.SQL(r.ctx, nil, v)
		if err != nil {
			r.conn.sess.AbortStatement(r.ctx)
			return nil, r.failed(fmt.Errorf("formatting a %s value: %w", t, err))
		}
		if sv.IsNull() {
			text[i] = nil
			continue
		}
		b := sv.Raw()
		if b == nil {
			b = []byte{}
		}
		text[i] = b
	}
	return text, nil
}

// advance returns the next row of the result, counting OK rows into the
// Result.
func (r *Rows) advance() (sql.Row, error) {
	if r.closed {
		return nil, io.EOF
	}
	if r.hasPeeked {
		r.hasPeeked = false
		row, err := r.peeked, r.peekedErr
		r.peeked, r.peekedErr = nil, nil
		return row, err
	}
	for {
		row, err := r.iter.Next(r.ctx)
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		if err != nil {
			r.conn.sess.AbortStatement(r.ctx)
			return nil, r.failed(clientError(err))
		}
		if r.ok {
			if len(row) == 1 {
				if ok, isOK := row[0].(types.OkResult); isOK {
					r.res.add(ok)
				}
			}
			continue
		}
		return row, nil
	}
}

// Close ends the statement.
func (r *Rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.iter.Close(r.ctx)
	r.iter = nil
	clear(r.vals[:cap(r.vals)])
	clear(r.text[:cap(r.text)])
	r.conn.endContext(r.ctx) // the statement ended
	r.ctx = nil
	if !r.conn.closed {
		r.conn.spare = r
	}
	if err != nil {
		err = r.failed(clientError(err))
	}
	return err
}

// failed records err, the error that ended the statement, in the
// session's diagnostics area, and returns it.
func (r *Rows) failed(err error) error {
	r.conn.failed(err)
	return err
}

// describe returns the description of a schema column.
func describe(c *sql.Column) Column {
	t := c.Type
	name := strings.ToUpper(t.String())
	if j := strings.IndexAny(name, "( "); j >= 0 {
		name = name[:j]
	}
	col := Column{Name: c.Name, TypeName: name, Nullable: c.Nullable, ScanType: scanType(t), Numeric: types.IsNumber(t)}
	switch t.Type() {
	case querypb.Type_BINARY, querypb.Type_VARBINARY, querypb.Type_BLOB, querypb.Type_BIT, querypb.Type_GEOMETRY:
		col.Binary = true
	}
	switch st := t.(type) {
	case sql.StringType:
		col.Length = st.MaxCharacterLength()
		if types.IsBinaryType(t) {
			col.Length = st.MaxByteLength()
		}
	case sql.DecimalType:
		col.Precision, col.Scale = int64(st.Precision()), int64(st.Scale())
	}
	return col
}

// scanType is the Go type of a column's values as Next returns them.
func scanType(t sql.Type) reflect.Type {
	var v any
	switch t.Type() {
	case querypb.Type_INT8, querypb.Type_INT16, querypb.Type_INT24, querypb.Type_INT32, querypb.Type_INT64,
		querypb.Type_UINT8, querypb.Type_UINT16, querypb.Type_UINT24, querypb.Type_UINT32, querypb.Type_YEAR:
		v = int64(0)
	case querypb.Type_UINT64, querypb.Type_BIT:
		v = uint64(0)
	case querypb.Type_FLOAT32, querypb.Type_FLOAT64:
		v = float64(0)
	case querypb.Type_DATE, querypb.Type_DATETIME, querypb.Type_TIMESTAMP:
		v = time.Time{}
	case querypb.Type_BINARY, querypb.Type_VARBINARY, querypb.Type_BLOB, querypb.Type_GEOMETRY, querypb.Type_JSON:
		v = []byte(nil)
	case querypb.Type_NULL_TYPE:
		return reflect.TypeOf((*any)(nil)).Elem()
	default:
		v = ""
	}
	return reflect.TypeOf(v)
}
