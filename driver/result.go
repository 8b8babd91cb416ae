package driver

import "database/sql/driver"

var _ driver.Result = (*Result)(nil)

// Result is the outcome of an Exec.
type Result struct {
	// InsertID is the first AUTO_INCREMENT value the statement generated
	// (MySQL's LAST_INSERT_ID()), 0 when it generated none.
	InsertID int64
	// RowCount is the number of rows affected: inserted, updated with a
	// change, or deleted (MySQL counts ON DUPLICATE KEY UPDATE rows twice).
	RowCount int64
}

// LastInsertId implements driver.Result.
func (r *Result) LastInsertId() (int64, error) { return r.InsertID, nil }

// RowsAffected implements driver.Result.
func (r *Result) RowsAffected() (int64, error) { return r.RowCount, nil }
