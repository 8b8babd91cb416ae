package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoadDataLocal: --local-infile lets the shell load a CSV file with
// LOAD DATA LOCAL INFILE; without it the statement fails with 3948.
func TestLoadDataLocal(t *testing.T) {
	data := t.TempDir()
	path := filepath.Join(t.TempDir(), "rows.csv")
	require.NoError(t, os.WriteFile(path, []byte("id,s\n1,\"a, b\"\n2,\"two\nlines\"\n"), 0o644))
	load := "LOAD DATA LOCAL INFILE '" + path + "' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"' IGNORE 1 LINES"
	out := runShell(t, "", "--data", data, "-e", "SET GLOBAL local_infile = 0; CREATE TABLE t (id INT PRIMARY KEY, s TEXT); "+load)
	require.Contains(t, out, "ERROR 3948 (42000)")
	out = runShell(t, "", "--data", data, "--local-infile", "-N", "-e", load+"; SELECT id, REPLACE(s, '\\n', '|') FROM t ORDER BY id; SET GLOBAL local_infile = 0")
	require.Equal(t, "1\ta, b\n2\ttwo|lines\n-- stderr --\n-- exit 0 --\n", out)
}
