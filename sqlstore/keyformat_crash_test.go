package sqlstore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/kv/vfs"
	"github.com/strata-db/strata/kv/vfs/errorfs"
)

// TestRepairCrash: a REPAIR TABLE that fails part-way (a write or sync of
// the engine's files fails, some of them short) and then loses power
// (the unsynced bytes lost or torn) leaves either the old table, still
// refused, which a REPAIR after the restart rebuilds, or the rebuilt
// one, and the rebuilt one whenever REPAIR answered OK; in both cases every row is found by its padded keys afterwards,
// and CHECK TABLE finds the indexes whole.
func TestRepairCrash(t *testing.T) {
	const rows = 1500
	kvOpts := func(fs vfs.FS) *testOptions {
		return &testOptions{KV: &kv.Options{FS: fs, MemtableSize: 256 << 10, CacheSize: 1 << 20}}
	}
	open := func(fs vfs.FS) *testDB {
		s, err := openStore("/db", kvOpts(fs))
		require.NoError(t, err)
		d := &testDB{t: t, dir: "/db", s: s, e: s.NewEngine()}
		d.ctx = d.newCtx()
		return d
	}
	base := vfs.NewMem()
	d := open(base)
	d.exec("CREATE DATABASE IF NOT EXISTS mydb")
	d.exec("CREATE TABLE g (s VARCHAR(40) COLLATE utf8mb4_general_ci PRIMARY KEY, n INT, u VARCHAR(40) COLLATE utf8mb4_general_ci, UNIQUE KEY uu (u), KEY kn (n))")
	for i := 0; i < rows; i += 500 {
		d.exec(insertValues("g", i, i+500, func(i int) string {
			return fmt.Sprintf("('Key %d  ', %d, 'U%d ')", i, i%7, i)
		}))
	}
	ageTable(t, d.s, "g")
	require.NoError(t, d.s.Close())

	// check verifies the rebuilt table: every row, found by its padded
	// keys through the primary and the unique index.
	check := func(d *testDB, what string) {
		require.Equal(t, fmt.Sprint([]any{int64(rows)}), fmt.Sprint(d.exec("SELECT COUNT(*) FROM g")[0]), what)
		for _, i := range []int{0, 1, rows / 2, rows - 1} {
			require.Equal(t, fmt.Sprintf("[[%d]]", i), fmt.Sprint(d.exec(fmt.Sprintf("SELECT n + %d - n FROM g WHERE s = 'key %d'", i, i))), what)
			require.Equal(t, fmt.Sprintf("[[Key %d  ]]", i), fmt.Sprint(d.exec(fmt.Sprintf("SELECT s FROM g WHERE u = 'u%d'", i))), what)
		}
		require.Equal(t, "[[mydb.g check status OK]]", fmt.Sprint(d.exec("CHECK TABLE g")), what)
	}

	outcomes := map[string]int{}
	for i, after := range []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64, 1 << 20} {
		what := fmt.Sprintf("fault after %d writes", after)
		img := base.CrashClone(vfs.CrashOptions{})
		efs := errorfs.Wrap(img, uint64(i+1))
		d := open(efs)
		efs.SetRules(&errorfs.Rule{Ops: errorfs.OpWrite | errorfs.OpSync, After: after, Prob: 1, Short: true})
		repaired, err := query(d.e, d.ctx, "REPAIR TABLE g")
		require.NoError(t, err, what)
		crashed := img.CrashClone(vfs.CrashOptions{KeepUnsynced: 0.5, Rand: rand.New(rand.NewPCG(uint64(i), 7))})
		efs.SetRules()
		_ = d.s.Close()

		d = open(crashed)
		f := recordKeyFormat(t, d.s, "g")
		t.Logf("%s: REPAIR said %v; the key format after the crash: %s", what, repaired, f)
		switch f {
		case "absent":
			// A REPAIR that answered OK committed durably: it must be there.
			require.NotEqual(t, "[[mydb.g repair status OK]]", fmt.Sprint(repaired), "%s: an acknowledged REPAIR was lost", what)
			outcomes["old"]++
			err := d.execErr("SELECT COUNT(*) FROM g")
			require.Equal(t, 1459, int(MySQLError(err).Num), "%s: %v", what, err)
			require.Equal(t, "[[mydb.g repair status OK]]", fmt.Sprint(d.exec("REPAIR TABLE g")), what)
		case "1":
			outcomes["new"]++
		default:
			t.Fatalf("%s: key format %s", what, f)
		}
		check(d, what)
		require.NoError(t, d.s.Close())
	}
	t.Logf("outcomes: %v", outcomes)
	require.Positive(t, outcomes["old"], "no crash left the old table")
	require.Positive(t, outcomes["new"], "no REPAIR survived")
}
