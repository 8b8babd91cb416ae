package sqlstore

import (
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/strata-db/strata/mysqlcompat"
)

// alterConversion is the column type change of the ALTER TABLE running in
// a transaction. GMS copies the table by reading its rows and converting
// each value with the new column type's Convert, which reads a binary
// string as a number and knows no sql_mode (mysqlcompat.AlterValue). So
// the copy's reads of the old table give the changed column already as
// MySQL converts it, and GMS's Convert then keeps it as it is. It holds
// for one statement (pid), and one table.
type alterConversion struct {
	pid      uint64
	id       uint64
	table    string
	pos      int
	from, to sql.Type
	name     string
	rows     int64 // rows read so far, for the row numbers of warnings and errors
}

// convertColumn makes the rest of the statement of ctx read the column
// oldCol of def converted into newCol's type, when the type changes.
func (tx *txn) convertColumn(ctx *sql.Context, def *tableDef, oldCol, newCol *sql.Column) {
	var c *alterConversion
	if oldCol != nil && newCol != nil && !oldCol.Type.Equals(newCol.Type) {
		if pos := def.schema.IndexOfColName(oldCol.Name); pos >= 0 {
			c = &alterConversion{pid: ctx.Pid(), id: def.id, table: def.name, pos: pos, from: def.schema[pos].Type, to: newCol.Type, name: newCol.Name}
		}
	}
	tx.mu.Lock()
	tx.alterConv = c
	tx.mu.Unlock()
}

// alterConversionOf returns the conversion that applies to ctx's reads of
// the table def, or nil.
func alterConversionOf(ctx *sql.Context, def *tableDef) *alterConversion {
	tx := txnOf(ctx)
	if tx == nil {
		return nil
	}
	tx.mu.Lock()
	c := tx.alterConv
	tx.mu.Unlock()
	if c == nil || c.id != def.id || c.pid != ctx.Pid() {
		return nil
	}
	return c
}

// convertingIter converts the changed column of the rows it passes on.
type convertingIter struct {
	sql.RowIter
	c *alterConversion
}

// Next implements sql.RowIter.
func (it *convertingIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil {
		return nil, err
	}
	c := it.c
	if c.pos >= len(row) {
		return row, nil
	}
	c.rows++
	v, err := mysqlcompat.AlterValue(ctx, c.from, c.to, c.table, c.name, row[c.pos], c.rows)
	if err != nil {
		return nil, err
	}
	row[c.pos] = v
	return row, nil
}
