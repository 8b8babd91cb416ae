package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestForeignKeyWarningsLookedUpOnce: an INSERT IGNORE skipping many rows
// for a foreign key warns once per row, each worded as MySQL words the
// error from the constraint's definition, which is looked up once for the
// statement; the next statement looks again, and sees a constraint
// redefined in between.
func TestForeignKeyWarningsLookedUpOnce(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE p (id INT PRIMARY KEY)")
	d.exec("INSERT INTO p VALUES (1)")
	d.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id))")
	ctx := context.Background()
	e := d.s.OpenEngine()
	defer e.Close()
	conn := e.NewConn()
	defer conn.Close()
	require.NoError(t, conn.UseDatabase(ctx, "mydb"))
	const skipped = 20
	insert := func(from int) {
		t.Helper()
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT IGNORE INTO c VALUES (%d, 1)", from)
		for i := 1; i <= skipped; i++ {
			fmt.Fprintf(&b, ", (%d, %d)", from+i, 100+i)
		}
		_, err := conn.Exec(ctx, b.String())
		require.NoError(t, err)
	}
	warnings := func(want string) {
		t.Helper()
		r, err := conn.Query(ctx, "SHOW WARNINGS")
		require.NoError(t, err)
		rows := readAll(t, r)
		require.Len(t, rows, skipped)
		for _, row := range rows {
			require.Equal(t, []string{"Warning", "1452", want}, row)
		}
	}
	insert(0)
	warnings("Cannot add or update a child row: a foreign key constraint fails (`mydb`.`c`, CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))")
	require.Equal(t, 1, conn.sess.fkWords.lookups)

	d.exec("ALTER TABLE c DROP FOREIGN KEY fk")
	d.exec("ALTER TABLE c ADD CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE")
	insert(100)
	warnings("Cannot add or update a child row: a foreign key constraint fails (`mydb`.`c`, CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE)")
	require.Equal(t, 2, conn.sess.fkWords.lookups)
}
