package sqlstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedColumnsExtra: SHOW COLUMNS and information_schema.COLUMNS
// mark generated columns VIRTUAL GENERATED or STORED GENERATED, as MySQL's
// do (tools tell generated columns by it), also after a restart; other
// columns keep their Extra.
func TestGeneratedColumnsExtra(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE g (id INT PRIMARY KEY AUTO_INCREMENT, a INT, s INT AS (a + 1) STORED, v INT AS (a * 2) VIRTUAL)")
	want := "[[id auto_increment] [a ] [s STORED GENERATED] [v VIRTUAL GENERATED]]"
	check := func() {
		var cols [][]any
		for _, r := range d.exec("SHOW COLUMNS FROM g") {
			cols = append(cols, []any{r[0], r[5]})
		}
		require.Equal(t, want, fmt.Sprint(cols))
		require.Equal(t, want, fmt.Sprint(d.exec("SELECT column_name, extra FROM information_schema.columns WHERE table_schema = 'mydb' AND table_name = 'g' ORDER BY ordinal_position")))
	}
	check()
	d.reopen()
	check()
}
