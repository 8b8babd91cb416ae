package main

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/server"
	"github.com/strata-db/strata/server/servertest"
)

// testServer starts a server in the test process on a free loopback port
// over a fresh folder, with the root account's password, and stops it at
// the end of the test.
func testServer(t *testing.T, password string) *server.Server {
	t.Helper()
	s, err := server.Start(server.Config{Data: t.TempDir(), Listen: "127.0.0.1:0", User: "root", Password: password, NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// client opens a go-sql-driver/mysql pool to the server
// (servertest.Client).
func client(t *testing.T, addr, user, password, params string) *sql.DB {
	t.Helper()
	return servertest.Client(t, addr, user, password, params)
}
