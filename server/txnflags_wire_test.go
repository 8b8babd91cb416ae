package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// TestTxnStatusFlagsWire runs transaction statements as text over the
// wire on a session that keeps their plans (run on the connection's
// goroutine, sqlstore's txnstmt.go) and on one under strata_plan_reuse =
// OFF (GMS's handler): the status flags of every OK packet (in
// transaction, autocommit) are the same, and are MySQL's after BEGIN and
// COMMIT.
func TestTxnStatusFlagsWire(t *testing.T) {
	ctx := context.Background()
	s, err := Start(Config{Data: t.TempDir(), Listen: "127.0.0.1:0", User: "root", Password: "pw", NoSync: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Shutdown(ctx)) }()
	kept, planned := newRawClient(t, s.Addr()), newRawClient(t, s.Addr())
	defer kept.close()
	defer planned.close()
	_, err = kept.query([]byte("CREATE TABLE tf (id INT PRIMARY KEY)"))
	require.NoError(t, err)
	_, err = planned.query([]byte("SET strata_plan_reuse = OFF"))
	require.NoError(t, err)

	// flags runs q and returns the status flags of its OK packet.
	flags := func(c *rawClient, q string) uint16 {
		t.Helper()
		_, err := c.query([]byte(q))
		require.NoError(t, err, q)
		p := c.in
		require.Equal(t, byte(0), p[0], "%s: not an OK packet", q)
		// Affected rows and insert ID below 251: one byte each.
		return uint16(p[3]) | uint16(p[4])<<8
	}
	const inTxn, auto = uint16(mysql.ServerInTransaction), uint16(mysql.ServerStatusAutocommit)
	script := []string{
		"BEGIN", "INSERT INTO tf VALUES (%d)", "COMMIT", "COMMIT",
		"START TRANSACTION", "ROLLBACK", "START TRANSACTION READ ONLY", "BEGIN", "COMMIT",
		"SET autocommit = 0", "INSERT INTO tf VALUES (%d)", "COMMIT", "BEGIN", "ROLLBACK", "SET autocommit = 1",
	}
	for round := range 3 {
		for i, q := range script {
			kq, pq := q, q
			if i == 1 || i == 10 {
				kq, pq = fmt.Sprintf(q, round*100+i), fmt.Sprintf(q, 1000+round*100+i)
			}
			k, p := flags(kept, kq), flags(planned, pq)
			require.Equal(t, p, k, "round %d: %s", round, q)
			switch q {
			case "BEGIN", "START TRANSACTION":
				require.Equal(t, inTxn, k&inTxn, q)
			case "COMMIT", "ROLLBACK":
				require.Zero(t, k&inTxn, q)
			}
			if i < 9 {
				require.Equal(t, auto, k&auto, q)
			}
		}
	}
}
