package driver

import (
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

var (
	_ driver.Rows                           = (*Rows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*Rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*Rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*Rows)(nil)
)

// Rows is the result of a query, read from the engine as Next is called.
// Closing it ends the statement (and commits it in autocommit mode).
type Rows struct {
	conn   *Conn
	ctx    *gsql.Context
	schema gsql.Schema
	iter   gsql.RowIter
	conv   []converter
	ok     bool // the statement returns an OK result, not rows
	closed bool
}

func newRows(c *Conn, sctx *gsql.Context, schema gsql.Schema, iter gsql.RowIter) *Rows {
	r := &Rows{conn: c, ctx: sctx, schema: schema, iter: iter, ok: types.IsOkResultSchema(schema)}
	if r.ok {
		r.schema = nil
	}
	r.conv = make([]converter, len(r.schema))
	for i, col := range r.schema {
		r.conv[i] = converterFor(col.Type)
	}
	return r
}

// Columns implements driver.Rows.
func (r *Rows) Columns() []string {
	names := make([]string, len(r.schema))
	for i, col := range r.schema {
		names[i] = col.Name
	}
	return names
}

// Next implements driver.Rows.
func (r *Rows) Next(dest []driver.Value) error {
	if r.closed {
		return io.EOF
	}
	for {
		row, err := r.iter.Next(r.ctx)
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		if err != nil {
			r.conn.abortStatement(r.ctx)
			return mysqlErr(err)
		}
		if r.ok {
			continue
		}
		for i := range dest {
			v := row[i]
			if v == nil {
				dest[i] = nil
				continue
			}
			if w, ok := v.(gsql.AnyWrapper); ok {
				if v, err = w.UnwrapAny(r.ctx); err != nil {
					return mysqlErr(err)
				}
			}
			if dest[i], err = r.conv[i](r.ctx, r.schema[i].Type, v); err != nil {
				return err
			}
		}
		return nil
	}
}

// Close implements driver.Rows.
func (r *Rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	return mysqlErr(r.iter.Close(r.ctx))
}

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName:
// the MySQL type name without length ("VARCHAR", "DECIMAL", "JSON", ...).
func (r *Rows) ColumnTypeDatabaseTypeName(i int) string {
	s := strings.ToUpper(r.schema[i].Type.String())
	if j := strings.IndexAny(s, "( "); j >= 0 {
		s = s[:j]
	}
	return s
}

// ColumnTypeScanType implements driver.RowsColumnTypeScanType.
func (r *Rows) ColumnTypeScanType(i int) reflect.Type {
	return scanType(r.schema[i].Type, r.schema[i].Nullable)
}

// ColumnTypeNullable implements driver.RowsColumnTypeNullable.
func (r *Rows) ColumnTypeNullable(i int) (nullable, ok bool) {
	return r.schema[i].Nullable, true
}
