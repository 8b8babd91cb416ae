package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHistoryFile: the file is created 0600, statements that may hold a
// password stay out of it (and out of the line editor's memory), and it
// keeps the last historyKeep entries.
func TestHistoryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	var mem []string
	h, err := openHistory(path, func(s string) { mem = append(mem, s) })
	require.NoError(t, err)
	h.add("SELECT 1;")
	h.add("CREATE USER bob IDENTIFIED BY 'hunter2';")
	h.add("SET PASSWORD FOR bob = 'x';")
	h.add("ALTER USER bob\nidentified by 'y';")
	h.add("SELECT\n2;")
	h.close()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "SELECT 1;\nSELECT 2;\n", string(b))
	require.Equal(t, []string{"SELECT 1;", "SELECT 2;"}, mem)

	// Reopened, it loads its entries; past historyKeep it drops the oldest.
	many := strings.Repeat("SELECT 3;\n", historyKeep+10)
	require.NoError(t, os.WriteFile(path, []byte("SELECT 0;\n"+many), 0o600))
	mem = nil
	h, err = openHistory(path, func(s string) { mem = append(mem, s) })
	require.NoError(t, err)
	h.close()
	require.Len(t, mem, historyKeep)
	require.Equal(t, "SELECT 3;", mem[0])
	fi, err = os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}
