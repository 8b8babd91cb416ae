package driver

import (
	"database/sql"
	"database/sql/driver"
	"io"
	"reflect"
	"time"

	"github.com/strata-db/strata/sqlstore"
)

var (
	_ driver.Rows                           = (*Rows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*Rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*Rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*Rows)(nil)
)

// Rows is the result of a query (sqlstore.Rows), read from the engine as
// Next is called; its values are those sqlstore.Rows.Next lists. Closing
// it ends the statement (and commits it in autocommit mode).
type Rows struct {
	conn   *Conn
	rows   *sqlstore.Rows
	closed bool
}

// newRows returns the Rows of rows, reusing the connection's spare: a
// Rows is not used after database/sql closes it.
func (c *Conn) newRows(rows *sqlstore.Rows) *Rows {
	r := c.spare
	c.spare = nil
	if r == nil {
		r = &Rows{}
	}
	*r = Rows{conn: c, rows: rows}
	return r
}

// Columns implements driver.Rows.
// The slice is the one the last query of the connection returned when the
// names are the same; it is never written to once returned, and a caller
// that changed it made it differ, so it is built afresh.
func (r *Rows) Columns() []string {
	n := r.rows.NumColumns()
	if names := r.conn.names; len(names) == n {
		same := true
		for i := range names {
			if names[i] != r.rows.ColumnName(i) {
				same = false
				break
			}
		}
		if same {
			return names
		}
	}
	names := make([]string, n)
	for i := range names {
		names[i] = r.rows.ColumnName(i)
	}
	r.conn.names = names
	return names
}

// Next implements driver.Rows.
func (r *Rows) Next(dest []driver.Value) error {
	if r.closed {
		return io.EOF
	}
	vals, err := r.rows.Next()
	if err != nil {
		return err
	}
	for i := range dest {
		dest[i] = vals[i]
	}
	return nil
}

// Close implements driver.Rows.
func (r *Rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.rows.Close()
	r.rows = nil
	if !r.conn.closed {
		r.conn.spare = r
	}
	return err
}

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName:
// the MySQL type name without length ("VARCHAR", "DECIMAL", "JSON", ...).
func (r *Rows) ColumnTypeDatabaseTypeName(i int) string {
	return r.rows.Columns()[i].TypeName
}

// ColumnTypeScanType implements driver.RowsColumnTypeScanType: the type of
// the values, or its sql.Null form for a nullable column.
func (r *Rows) ColumnTypeScanType(i int) reflect.Type {
	c := r.rows.Columns()[i]
	if !c.Nullable {
		return c.ScanType
	}
	var n any
	switch c.ScanType {
	case reflect.TypeFor[int64]():
		n = sql.NullInt64{}
	case reflect.TypeFor[uint64]():
		n = sql.Null[uint64]{}
	case reflect.TypeFor[float64]():
		n = sql.NullFloat64{}
	case reflect.TypeFor[time.Time]():
		n = sql.NullTime{}
	case reflect.TypeFor[string]():
		n = sql.NullString{}
	default: // []byte holds NULL as nil; any holds anything
		return c.ScanType
	}
	return reflect.TypeOf(n)
}

// ColumnTypeNullable implements driver.RowsColumnTypeNullable.
func (r *Rows) ColumnTypeNullable(i int) (nullable, ok bool) {
	return r.rows.Columns()[i].Nullable, true
}
