package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

func init() {
	register("hostile", "a running MySQL-protocol server's peak memory while hostile statements and clients run", runHostile)
}

// hostileConfig is the hostile subcommand's command line.
type hostileConfig struct {
	addr, user, password string
	pid                  int
	rows                 int
	timeout              time.Duration
	only                 map[string]bool
	init                 []string // statements run first, as the -user account
}

// hostileCase is one hostile statement or client. run uses conn, a
// connection of its own whose id is connID, and h.admin for anything
// beside it (KILL QUERY); it returns what the server answered.
type hostileCase struct {
	name string
	what string
	run  func(ctx context.Context, h *hostile, conn *sql.Conn, connID int64) string
}

// hostile measures one server: the peak resident memory of its process
// while each case runs, what the case got back, and whether the server
// still answers afterwards. It works against any MySQL-protocol server
// on this machine (Strata's, MariaDB's) given its process id.
type hostile struct {
	cfg   hostileConfig
	db    *sql.DB
	admin *sql.Conn
}

func runHostile(args []string) error {
	fs := flag.NewFlagSet("hostile", flag.ContinueOnError)
	var cfg hostileConfig
	var only string
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:3306", "the server's address")
	fs.StringVar(&cfg.user, "user", "root", "an account with every privilege")
	fs.StringVar(&cfg.password, "password", os.Getenv("STRATA_PASSWORD"), "its password (default $STRATA_PASSWORD)")
	fs.IntVar(&cfg.pid, "pid", 0, "the server's process id, whose memory is measured (required)")
	fs.IntVar(&cfg.rows, "rows", 20000, "rows of the table the joins cross (rows^2 joined rows)")
	fs.DurationVar(&cfg.timeout, "timeout", 15*time.Second, "how long a statement may run before KILL QUERY")
	fs.StringVar(&only, "only", "", "comma-separated case names to run (default all)")
	var init string
	fs.StringVar(&init, "init", "", "statements to run first, separated by ';' (e.g. SET GLOBAL strata_mem_quota_query = 536870912)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: sqlbench hostile -pid PID [flags]\n\nCases:\n")
		for _, c := range hostileCases {
			fmt.Fprintf(fs.Output(), "  %-16s %s\n", c.name, c.what)
		}
		fmt.Fprintf(fs.Output(), "\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if cfg.pid <= 0 {
		return usageError{errors.New("-pid is required: the server's process id")}
	}
	if only != "" {
		cfg.only = make(map[string]bool)
		for _, n := range strings.Split(only, ",") {
			cfg.only[strings.TrimSpace(n)] = true
		}
	}
	for _, q := range strings.Split(init, ";") {
		if q = strings.TrimSpace(q); q != "" {
			cfg.init = append(cfg.init, q)
		}
	}
	if _, err := readRSS(cfg.pid); err != nil {
		return err
	}
	return hostileMain(context.Background(), cfg, os.Stdout)
}

func hostileMain(ctx context.Context, cfg hostileConfig, out io.Writer) error {
	mc := mysql.NewConfig()
	mc.Net, mc.Addr, mc.User, mc.Passwd = "tcp", cfg.addr, cfg.user, cfg.password
	mc.MaxAllowedPacket = 0 // the server's
	connector, err := mysql.NewConnector(mc)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	admin, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", cfg.addr, err)
	}
	defer admin.Close()
	h := &hostile{cfg: cfg, db: db, admin: admin}
	if err := h.setup(ctx); err != nil {
		return err
	}
	base, _ := readRSS(cfg.pid)
	fmt.Fprintf(out, "server pid %d at %s, %d rows crossed, RSS at start %s\n\n", cfg.pid, cfg.addr, cfg.rows, mib(base.rss))
	fmt.Fprintf(out, "%-16s %10s %10s %6s  %s\n", "case", "peak RSS", "RSS after", "alive", "answer")
	for _, c := range hostileCases {
		if cfg.only != nil && !cfg.only[c.name] {
			continue
		}
		peak, after, alive, answer := h.measure(ctx, c)
		fmt.Fprintf(out, "%-16s %10s %10s %6v  %s\n", c.name, mib(peak), mib(after), alive, answer)
		if !alive {
			return fmt.Errorf("the server stopped answering after %s", c.name)
		}
	}
	return nil
}

// setup creates the table the joins cross: rows rows of (id, v).
func (h *hostile) setup(ctx context.Context) error {
	stmts := append(h.cfg.init,
		"CREATE DATABASE IF NOT EXISTS hostile",
		"DROP TABLE IF EXISTS hostile.h",
		"CREATE TABLE hostile.h (id INT PRIMARY KEY, v INT)",
		"DROP TABLE IF EXISTS hostile.big",
		"CREATE TABLE hostile.big (id INT PRIMARY KEY, b LONGTEXT)",
	)
	for _, s := range stmts {
		if _, err := h.admin.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	var b strings.Builder
	for i := 0; i < h.cfg.rows; i += 1000 {
		b.Reset()
		b.WriteString("INSERT INTO hostile.h VALUES ")
		for j := i; j < min(i+1000, h.cfg.rows); j++ {
			if j > i {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d,%d)", j, (j*7919)%h.cfg.rows)
		}
		if _, err := h.admin.ExecContext(ctx, b.String()); err != nil {
			return fmt.Errorf("loading hostile.h: %w", err)
		}
	}
	return nil
}

// measure runs c on a fresh connection while sampling the server's
// resident memory, then waits for the server to settle and checks that
// it answers.
func (h *hostile) measure(ctx context.Context, c hostileCase) (peak, after int64, alive bool, answer string) {
	useHWM := resetPeak(h.cfg.pid)
	start, _ := readRSS(h.cfg.pid)
	peak = start.rss
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if m, err := readRSS(h.cfg.pid); err == nil {
					peak = max(peak, m.rss)
				}
			}
		}
	}()
	conn, err := h.db.Conn(ctx)
	if err != nil {
		answer = "connect: " + short(err)
	} else {
		var id int64
		if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			answer = "CONNECTION_ID(): " + short(err)
		} else {
			answer = c.run(ctx, h, conn, id)
		}
		conn.Close()
	}
	time.Sleep(2 * time.Second) // let a killed statement's memory go
	close(stop)
	wg.Wait()
	if m, err := readRSS(h.cfg.pid); err == nil {
		after = m.rss
		if useHWM {
			peak = max(peak, m.hwm)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var one int
	alive = h.db.QueryRowContext(pctx, "SELECT 1").Scan(&one) == nil && one == 1
	return peak, after, alive, answer
}

// query runs q on conn, stopping it with KILL QUERY after the timeout,
// and describes the outcome: the first column of the first row, or the
// error, with the warnings the server left.
func (h *hostile) query(ctx context.Context, conn *sql.Conn, connID int64, q string) string {
	done := make(chan struct{})
	var killed atomic.Bool
	go func() {
		select {
		case <-done:
		case <-time.After(h.cfg.timeout):
			killed.Store(true)
			_, _ = h.admin.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", connID))
		}
	}()
	// A statement that ignores KILL QUERY is abandoned a while later:
	// the driver closes the connection.
	qctx, cancel := context.WithTimeout(ctx, h.cfg.timeout+30*time.Second)
	defer cancel()
	var v sql.NullString
	err := conn.QueryRowContext(qctx, q).Scan(&v)
	close(done)
	var s string
	switch {
	case err != nil:
		s = short(err)
	case !v.Valid:
		s = "NULL"
	default:
		s = "value of " + strconv.Itoa(len(v.String)) + " bytes"
	}
	if killed.Load() {
		s = "killed after " + h.cfg.timeout.String() + ": " + s
	}
	if err == nil {
		var level, msg string
		var code int
		if conn.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg) == nil {
			s += fmt.Sprintf(" (warning %d)", code)
		}
	}
	return s
}

func statement(q string) func(ctx context.Context, h *hostile, conn *sql.Conn, connID int64) string {
	return func(ctx context.Context, h *hostile, conn *sql.Conn, connID int64) string {
		return h.query(ctx, conn, connID, q)
	}
}

var hostileCases = []hostileCase{
	{"repeat_3g", "SELECT REPEAT('x', 3 GiB)", statement("SELECT REPEAT('x', 3221225472)")},
	{"lpad_3g", "SELECT LPAD('x', 3 GiB, 'y')", statement("SELECT LPAD('x', 3221225472, 'y')")},
	{"space_3g", "SELECT SPACE(3 GiB)", statement("SELECT SPACE(3221225472)")},
	{"concat_480m", "CONCAT of eight 60 MB values", statement("SELECT CONCAT(" + strings.TrimSuffix(strings.Repeat("REPEAT('x', 60000000),", 8), ",") + ")")},
	{"group_concat", "GROUP_CONCAT over 4M joined rows", statement("SELECT GROUP_CONCAT(REPEAT('x', 100)) FROM hostile.h a JOIN hostile.h b ON a.id < 200")},
	{"sort_limit", "ORDER BY ... LIMIT 5 over the cross join", statement("SELECT a.id FROM hostile.h a, hostile.h b ORDER BY a.v + b.v, a.id, b.id LIMIT 5")},
	{"sort", "ORDER BY over the cross join", statement("SELECT COUNT(*) FROM (SELECT a.id AS x, b.id AS y FROM hostile.h a, hostile.h b ORDER BY a.v * b.v) s")},
	{"group_by", "GROUP BY with a group per joined row", statement("SELECT COUNT(*) FROM (SELECT a.id * 100000 + b.id AS g, COUNT(*) FROM hostile.h a, hostile.h b GROUP BY g) s")},
	{"window", "a window over the whole cross join", statement("SELECT SUM(a.id) OVER (ORDER BY a.v, b.v) FROM hostile.h a, hostile.h b LIMIT 1")},
	{"statement_60m", "one 60 MB INSERT statement", bigStatement},
	{"handshakes", "40 unauthenticated clients, each sending a 16 MB handshake packet", handshakeFlood},
	{"prepared", "50,000 prepared statements on one connection", preparedFlood},
}

func bigStatement(ctx context.Context, h *hostile, conn *sql.Conn, connID int64) string {
	q := "INSERT INTO hostile.big VALUES (1, '" + strings.Repeat("x", 60<<20) + "')"
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return short(err)
	}
	_, _ = conn.ExecContext(ctx, "DELETE FROM hostile.big")
	return "ok"
}

// handshakeFlood opens 40 connections that never log in; each answers
// the greeting with a packet header announcing 16 MB and sends that much.
func handshakeFlood(ctx context.Context, h *hostile, _ *sql.Conn, _ int64) string {
	const clients, size = 40, 1<<24 - 2 // below 2^24-1, which announces a continuation
	payload := bytes.Repeat([]byte{'a'}, size)
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused, sent := 0, 0
	conns := make([]net.Conn, 0, clients)
	for range clients {
		c, err := net.DialTimeout("tcp", h.cfg.addr, 5*time.Second)
		if err != nil {
			refused++
			continue
		}
		conns = append(conns, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			r := bufio.NewReader(c)
			if _, err := readWirePacket(r); err != nil { // the greeting
				return
			}
			hdr := make([]byte, 4)
			binary.LittleEndian.PutUint32(hdr, size)
			hdr[3] = 1
			if _, err := c.Write(hdr); err != nil {
				return
			}
			if _, err := c.Write(payload); err == nil {
				mu.Lock()
				sent++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond) // the server holds what it read
	for _, c := range conns {
		c.Close()
	}
	return fmt.Sprintf("%d of %d sent 16 MB in full (%d refused at connect)", sent, clients, refused)
}

func readWirePacket(r *bufio.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(append(hdr[:3:3], 0)))
	p := make([]byte, n)
	_, err := io.ReadFull(r, p)
	return p, err
}

// preparedFlood prepares statements on one connection until the server
// refuses or 50,000 are held.
func preparedFlood(ctx context.Context, h *hostile, conn *sql.Conn, _ int64) string {
	const n = 50000
	stmts := make([]*sql.Stmt, 0, n)
	defer func() {
		for _, s := range stmts {
			s.Close()
		}
	}()
	for i := range n {
		s, err := conn.PrepareContext(ctx, fmt.Sprintf("SELECT id FROM hostile.h WHERE id = ? + %d", i))
		if err != nil {
			return fmt.Sprintf("%d prepared, then %s", i, short(err))
		}
		stmts = append(stmts, s)
	}
	return fmt.Sprintf("all %d prepared", n)
}

type rssReading struct{ rss, hwm int64 }

// readRSS reads a process's resident set (VmRSS) and its peak (VmHWM).
func readRSS(pid int) (rssReading, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return rssReading{}, fmt.Errorf("reading the server's memory: %w", err)
	}
	var m rssReading
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.rss = kb << 10
		case "VmHWM:":
			m.hwm = kb << 10
		}
	}
	return m, nil
}

// resetPeak resets the process's VmHWM to its current resident set
// (Linux's clear_refs value 5), where this process may; otherwise the
// sampled VmRSS is the measure. It reports whether the peak was reset.
func resetPeak(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// short is an error's first line, at most 100 bytes.
func short(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return s
}
