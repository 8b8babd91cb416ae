package sqlstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOutfileBinaryCharset: INTO OUTFILE with CHARACTER SET binary (as
// mysqldump --tab sends it, in a versioned comment) writes the rows, which
// GMS refused; the clause is hidden only after OUTFILE and outside
// literals, and another character set is still refused.
func TestOutfileBinaryCharset(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT * INTO OUTFILE 'f' /*!50138 CHARACTER SET binary */ FROM t", "SELECT * INTO OUTFILE 'f' /*!50138                      */ FROM t"},
		{"select a into outfile 'x' charset binary fields terminated by ','", "select a into outfile 'x'                fields terminated by ','"},
		{"SELECT 'INTO OUTFILE CHARACTER SET binary'", "SELECT 'INTO OUTFILE CHARACTER SET binary'"},
		{"SELECT CAST(x AS CHAR CHARACTER SET binary) FROM t", "SELECT CAST(x AS CHAR CHARACTER SET binary) FROM t"},
		{"SELECT a INTO OUTFILE 'f' CHARACTER SET utf8mb4 FROM t", "SELECT a INTO OUTFILE 'f' CHARACTER SET utf8mb4 FROM t"},
	} {
		require.Equal(t, tc.want, hideOutfileBinaryCharset(tc.in), tc.in)
	}
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10))")
	d.exec("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	path := filepath.Join(t.TempDir(), "t.txt")
	d.exec("SELECT /*!40001 SQL_NO_CACHE */ * INTO OUTFILE '" + path + "' /*!50138 CHARACTER SET binary */ FIELDS TERMINATED BY '\\t' FROM t")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "1\ta\n2\tb\n", string(got))
	d.execErr("SELECT * INTO OUTFILE '" + path + "x' CHARACTER SET utf8mb4 FROM t")
}
