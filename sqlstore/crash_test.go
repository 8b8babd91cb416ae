package sqlstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

const envCrashDir = "SQLSTORE_CRASH_DIR"

// TestCrashChild is the process TestCrash kills: it commits transactions
// (durably: Sync on) in a loop and reports each one after its commit
// returned.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(envCrashDir)
	if dir == "" {
		t.Skip("child process of TestCrash")
	}
	s, err := openStore(dir, nil) // durable commits
	if err != nil {
		fmt.Println("error", err)
		return
	}
	e := s.NewEngine()
	ctx := s.NewContext(context.Background(), "")
	run := func(q string) error {
		_, err := query(e, ctx, q)
		return err
	}
	if err := run("CREATE DATABASE IF NOT EXISTS crash"); err != nil {
		fmt.Println("error", err)
		return
	}
	ctx.SetCurrentDatabase("crash")
	if err := run("CREATE TABLE IF NOT EXISTS c (id INT PRIMARY KEY, v VARCHAR(100), KEY kv (v))"); err != nil {
		fmt.Println("error", err)
		return
	}
	rows, err := query(e, ctx, "SELECT COUNT(*) FROM c")
	if err != nil {
		fmt.Println("error", err)
		return
	}
	start, _ := strconv.Atoi(fmt.Sprint(rows[0][0]))
	fmt.Println("ready")
	for i := start / 2; ; i++ {
		// Two rows per transaction: both or neither survive.
		for _, q := range []string{"START TRANSACTION",
			fmt.Sprintf("INSERT INTO c VALUES (%d, 'a%d')", 2*i, i),
			fmt.Sprintf("INSERT INTO c VALUES (%d, 'b%d')", 2*i+1, i),
			"COMMIT"} {
			if err := run(q); err != nil {
				fmt.Println("error", err)
				return
			}
		}
		fmt.Println("committed", i)
	}
}

// TestCrash kills a process that is committing transactions with SIGKILL
// and checks that every transaction it reported committed survived, whole,
// and that no transaction survived in part.
func TestCrash(t *testing.T) {
	if os.Getenv(envCrashDir) != "" {
		t.Skip("in the child")
	}
	dir := t.TempDir()
	for round := 0; round < 2; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v=false")
		cmd.Env = append(os.Environ(), envCrashDir+"="+dir)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(out)
		last := -1
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "error") {
				t.Fatal(line)
			}
			if n, ok := strings.CutPrefix(line, "committed "); ok {
				last, _ = strconv.Atoi(n)
				if last >= 30*(round+1) {
					break
				}
			}
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		require.GreaterOrEqual(t, last, 0, "the child committed nothing")

		d := openTestDB(t, dir)
		d.ctx.SetCurrentDatabase("crash")
		rows := d.exec("SELECT id FROM c ORDER BY id")
		n := len(rows)
		require.Equal(t, 0, n%2, "a transaction survived in part")
		require.GreaterOrEqual(t, n/2, last+1, "committed transactions were lost")
		for i, r := range rows {
			require.Equal(t, fmt.Sprint(i), fmt.Sprint(r[0]))
		}
		// The index agrees with the rows.
		require.Equal(t, fmt.Sprint([][]any{{int64(n)}}), fmt.Sprint(d.exec("SELECT COUNT(*) FROM c WHERE v >= 'a'")))
		require.NoError(t, d.s.Close())
	}
}
