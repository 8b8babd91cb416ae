package sqlstore_test

import (
	"context"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
)

// TestStartsReadWriteText: the statement, not any text in it, says READ
// WRITE: the words may be apart or split by a comment, a comment saying
// "read write" says nothing, and in a multi-statement text (GMS gives the
// context all of the rest) only the first statement counts.
func TestStartsReadWriteText(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"START TRANSACTION READ WRITE", true},
		{"start transaction read write", true},
		{"START TRANSACTION READ  WRITE", true},
		{"START TRANSACTION READ\nWRITE", true},
		{"START TRANSACTION READ/**/WRITE", true},
		{"/* c */ START TRANSACTION READ WRITE", true},
		{"-- c\nSTART TRANSACTION READ WRITE", true},
		{"# c\nSTART\tTRANSACTION READ WRITE;", true},
		{"START TRANSACTION /*!READ WRITE*/", true},
		{"START TRANSACTION READ WRITE; SELECT 1", true},
		{"BEGIN", false},
		{"BEGIN /* read write */", false},
		{"START TRANSACTION", false},
		{"START TRANSACTION /* read write */", false},
		{"START TRANSACTION -- read write\n", false},
		{"START TRANSACTION WITH CONSISTENT SNAPSHOT", false},
		{"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ WRITE", true},
		{"START TRANSACTION READ WRITE, WITH CONSISTENT SNAPSHOT", true},
		{"START TRANSACTION READ ONLY, READ WRITE", true},
		{"BEGIN; SELECT 'read write'", false},
		{"START TRANSACTION; START TRANSACTION READ WRITE", false},
	} {
		ctx := sql.NewContext(context.Background(), sql.WithQuery(tc.query))
		require.Equal(t, tc.want, sqlstore.StartsReadWrite(ctx, plan.NewStartTransaction(sql.ReadWrite)), "%q", tc.query)
		require.False(t, sqlstore.StartsReadWrite(ctx, plan.NewStartTransaction(sql.ReadOnly)), "%q", tc.query)
	}
	require.True(t, sqlstore.StartsReadWrite(nil, plan.NewStartTransaction(sql.ReadWrite)))
}

// TestConsistentSnapshotText: WITH CONSISTENT SNAPSHOT is read as the
// parser reads a START TRANSACTION's characteristics, in any order, after
// comments, and only in the first statement.
func TestConsistentSnapshotText(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"START TRANSACTION WITH CONSISTENT SNAPSHOT", true},
		{"start transaction with consistent snapshot", true},
		{"START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT", true},
		{"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ WRITE", true},
		{"/* c */ START TRANSACTION WITH  CONSISTENT\nSNAPSHOT", true},
		{"START TRANSACTION /* with consistent snapshot */", false},
		{"START TRANSACTION; SELECT 'with consistent snapshot'", false},
		{"BEGIN", false},
		{"SELECT 'start transaction with consistent snapshot'", false},
	} {
		require.Equal(t, tc.want, sqlstore.ConsistentSnapshotText(tc.query), "%q", tc.query)
	}
}
