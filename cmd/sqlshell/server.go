package main

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	vtlog "github.com/dolthub/vitess/go/vt/log"
	"github.com/sirupsen/logrus"

	"github.com/strata-db/strata/sqlstore"
)

// serverConfig configures the MySQL-protocol server.
type serverConfig struct {
	data            string        // the database folder
	listen          string        // host:port
	user, password  string        // the administrator account (created or updated at start)
	maxConns        int           // simultaneous connections; more are refused
	idleTimeout     time.Duration // a connection idle this long is closed
	connectTimeout  time.Duration // a connection not logged in after this long is closed
	writeTimeout    time.Duration // a connection that takes no data this long is closed
	maxPacket       int           // max_allowed_packet, bytes
	tlsCert, tlsKey string        // PEM files; both or neither
	requireTLS      bool          // refuse clients that do not use TLS
	shutdownTimeout time.Duration // how long running statements may finish at shutdown
	noSync          bool          // commits return before the log is synced
	log             *log.Logger
}

// filesDir is where LOAD DATA INFILE, LOAD_FILE and SELECT ... INTO
// OUTFILE may read and write, relative to the data folder
// (serverfiles.go checks every path against it).
var filesDir = filepath.Join("files", "sql")

// srv is a running server. Shutdown stops it and releases everything.
type srv struct {
	cfg     serverConfig
	store   *sqlstore.Store
	engine  *sqle.Engine
	gms     *server.Server
	ln      *limitListener
	h       *handler
	started chan struct{} // closed when the accept loop returned
	policy  *policy       // privilege and file checks, effective globals
	once    sync.Once
	err     error
}

// isLoopback reports whether host:port only listens on a loopback address.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// nativeHash is the mysql_native_password hash of a password.
func nativeHash(password string) string {
	if password == "" {
		return ""
	}
	s1 := sha1.Sum([]byte(password))
	s2 := sha1.Sum(s1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(s2[:]))
}

// storePersister saves the accounts in the store.
type storePersister struct{ st *sqlstore.Store }

func (p storePersister) Persist(_ *gsql.Context, data []byte) error { return p.st.SetUsers(data) }

// logSink is the logger of the latest server, where the protocol layer's
// process-wide log functions write.
var logSink atomic.Pointer[log.Logger]

var setupLogs sync.Once

// routeLogs sends the protocol layer's connection errors to logger and
// keeps the engine's per-query messages out of the log.
func routeLogs(logger *log.Logger) {
	logSink.Store(logger)
	setupLogs.Do(func() {
		logrus.SetLevel(logrus.ErrorLevel)
		logrus.SetOutput(sinkWriter{})
		logrus.SetFormatter(&boundedFormatter{})
		discard := func(...any) {}
		discardf := func(string, ...any) {}
		print := func(v ...any) { logLine(fmt.Sprint(v...)) }
		printf := func(f string, v ...any) { logLine(fmt.Sprintf(f, v...)) }
		vtlog.Info, vtlog.Infof = discard, discardf
		vtlog.Warning, vtlog.Warningf = print, printf
		vtlog.Error, vtlog.Errorf = print, printf
	})
}

type sinkWriter struct{}

func (sinkWriter) Write(p []byte) (int, error) { return logSink.Load().Writer().Write(p) }

// startServer opens the store and starts serving; the accept loop runs in
// a goroutine that Shutdown stops.
func startServer(cfg serverConfig) (*srv, error) {
	if cfg.log == nil {
		cfg.log = log.New(io.Discard, "", 0)
	}
	loop, err := isLoopback(cfg.listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", cfg.listen, err)
	}
	if cfg.user == "" {
		return nil, errors.New("--user must not be empty")
	}
	var tlsCfg *tls.Config
	if (cfg.tlsCert == "") != (cfg.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if cfg.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("loading the TLS key pair: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if cfg.requireTLS && tlsCfg == nil {
		return nil, errors.New("--require-secure-transport needs --tls-cert and --tls-key")
	}
	routeLogs(cfg.log)

	st, err := openStore(cfg.data, cfg.noSync, cfg.log)
	if err != nil {
		return nil, err
	}
	s := &srv{cfg: cfg, store: st, engine: st.NewEngine(), started: make(chan struct{})}
	fail := func(err error) (*srv, error) {
		_ = closeEngine(s.engine, st)
		return nil, err
	}
	if err := s.setupUsers(loop); err != nil {
		return fail(err)
	}
	if err := s.setupVariables(); err != nil {
		return fail(err)
	}
	sess := newSession(st, s.engine, "")
	_, err = sess.run(context.Background(), "CREATE DATABASE IF NOT EXISTS "+quoteIdent(defaultDB))
	sess.close()
	if err != nil {
		return fail(fmt.Errorf("creating database %s: %w", defaultDB, err))
	}

	nl, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fail(err)
	}
	s.ln = newLimitListener(nl, cfg.maxConns, cfg.maxPacket, cfg.log)
	s.ln.connectTimeout = cfg.connectTimeout
	gcfg := server.Config{
		Protocol: "tcp",
		Address:  nl.Addr().String(),
		Listener: s.ln,
		Version:  "8.0.33-strata",
		// No ConnReadTimeout for the engine: its protocol handler also
		// takes it as the longest wait for a statement's next row, and
		// fails slower statements. The idle timeout is the protocol
		// layer's alone (lc.ConnReadTimeout below).
		ConnWriteTimeout:       cfg.writeTimeout,
		TLSConfig:              tlsCfg,
		RequireSecureTransport: cfg.requireTLS,
		ProtocolListenerFactory: func(_ server.Config, lc mysql.ListenerConfig, _ server.ServerEventListener) (server.ProtocolListener, error) {
			lc.MaxConns = 0 // the limitListener refuses with an error instead
			// Every read from the client must come within the idle
			// timeout. Between commands that is the wait for the next
			// one; while a statement runs nothing is read (a hang-up is
			// watched for without reading, see watchPeer), so however
			// long it takes, it is not idle time.
			lc.ConnReadTimeout = cfg.idleTimeout
			lc.AuthServer = authServer{AuthServer: lc.AuthServer, requireTLS: cfg.requireTLS, db: s.engine.Analyzer.Catalog.MySQLDb, log: cfg.log}
			l, err := mysql.NewListenerWithConfig(lc)
			if err != nil {
				return nil, err
			}
			l.ServerVersion = "8.0.33-strata"
			l.TLSConfig = tlsCfg
			l.RequireSecureTransport = cfg.requireTLS
			return l, nil
		},
	}
	builder := func(_ context.Context, c *mysql.Conn, addr string) (gsql.Session, error) {
		var host, user string
		if u, ok := c.UserData.(gsql.MysqlConnectionUser); ok {
			host, user = u.Host, u.User
		}
		base := gsql.NewBaseSessionWithClientServer(addr, gsql.Client{Address: host, User: user, Capabilities: c.Capabilities}, c.ConnectionID)
		sess := st.NewSession(base)
		sess.SetCurrentDatabase(defaultDB)
		s.h.track(c.ConnectionID, sess)
		// The engine names a connection's account in its process list
		// only when the client chose a database at login; KILL's owner
		// check and SHOW PROCESSLIST need it for every connection.
		s.engine.ProcessList.ConnectionReady(sess)
		return sess, nil
	}
	wrap := func(h mysql.Handler) (mysql.Handler, error) {
		gh, ok := h.(*server.Handler)
		if !ok {
			return nil, fmt.Errorf("unexpected protocol handler %T", h)
		}
		s.h = newHandler(gh, st, s.engine.Parser, cfg.maxPacket)
		s.h.prepared = newPreparedLimit(s.engine)
		s.h.users = s.engine.Analyzer.Catalog.MySQLDb
		return s.h, nil
	}
	s.gms, err = server.NewServerWithHandler(gcfg, s.engine, gsql.NewContext, builder, nil, wrap)
	if err != nil {
		_ = nl.Close()
		return fail(err)
	}
	go func() {
		defer close(s.started)
		_ = s.gms.Start()
	}()
	return s, nil
}

// setupUsers turns accounts on: the saved ones are loaded, and the
// administrator account of the configuration is created, or its password
// updated when one is given. Without any password the server listens on a
// loopback address only.
func (s *srv) setupUsers(loopback bool) error {
	db := s.engine.Analyzer.Catalog.MySQLDb
	ctx := gsql.NewEmptyContext()
	data, err := s.store.Users()
	if err != nil {
		return err
	}
	if err := db.LoadData(ctx, data); err != nil {
		return fmt.Errorf("loading the accounts: %w", err)
	}
	db.SetPersister(storePersister{s.store})
	db.SetEnabled(true)
	ed := db.Editor()
	defer ed.Close()
	u, ok := ed.GetUser(mysql_db.UserPrimaryKey{Host: "%", User: s.cfg.user})
	switch {
	case !ok:
		db.AddSuperUser(ed, s.cfg.user, "%", s.cfg.password)
		u, _ = ed.GetUser(mysql_db.UserPrimaryKey{Host: "%", User: s.cfg.user})
	case s.cfg.password != "" && u.AuthString != nativeHash(s.cfg.password):
		c := *u
		c.AuthString = nativeHash(s.cfg.password)
		c.Plugin = string(mysql.MysqlNativePassword)
		c.PasswordLastChanged = time.Now().UTC()
		ed.RemoveUser(mysql_db.UserPrimaryKey{Host: c.Host, User: c.User}) // PutUser adds, it does not replace
		ed.PutUser(&c)
		u = &c
	}
	if u == nil {
		return fmt.Errorf("creating the account %s", s.cfg.user)
	}
	if !loopback && u.AuthString == "" {
		return fmt.Errorf("refusing to listen on %s: account %s has no password (set --password or STRATA_PASSWORD)", s.cfg.listen, s.cfg.user)
	}
	if err := db.Persist(ctx, ed); err != nil {
		return fmt.Errorf("saving the accounts: %w", err)
	}
	return nil
}

// setupVariables confines server-side file access to the files folder
// (serverfiles.go), gives the globals the server's values (globals.go)
// and installs the privilege checks the engine lacks (privileges.go).
func (s *srv) setupVariables() error {
	dir, err := filepath.Abs(filepath.Join(s.cfg.data, filesDir))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the files folder: %w", err)
	}
	// Resolved, so that paths compare with the resolved paths of files.
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return fmt.Errorf("resolving the files folder: %w", err)
	}
	if err := gsql.SystemVariables.AssignValues(map[string]any{"secure_file_priv": dir}); err != nil {
		return err
	}
	// Redefined rather than assigned: assigning stores a uint64, and the
	// engine's LOAD_FILE expects the int64 of the variable's default.
	v, _, ok := gsql.SystemVariables.GetGlobal("max_allowed_packet")
	mv, isMySQL := v.(*gsql.MysqlSystemVariable)
	if !ok || !isMySQL {
		return errors.New("the engine has no max_allowed_packet variable")
	}
	c := *mv
	c.Default = int64(s.cfg.maxPacket)
	gsql.SystemVariables.AddSystemVariables([]gsql.SystemVariable{&c})
	if err := s.resetGlobals(); err != nil {
		return err
	}
	s.setupPolicy(dir)
	return nil
}

// addr is the address the server listens on.
func (s *srv) addr() string { return s.ln.Addr().String() }

// shutdown stops accepting connections, lets running statements finish
// until ctx is done (then cancels them), closes every connection (which
// rolls back open transactions) and closes the engine and the store.
func (s *srv) shutdown(ctx context.Context) error {
	s.once.Do(func() {
		_ = s.gms.Close()
		<-s.started
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
	wait:
		for !s.h.idle() {
			select {
			case <-ctx.Done():
				for _, p := range s.engine.ProcessList.Processes() {
					s.engine.ProcessList.Kill(p.Connection)
				}
				break wait
			case <-tick.C:
			}
		}
		s.ln.closeAll()
		s.h.waitConnsClosed()
		s.err = closeEngine(s.engine, s.store)
	})
	return s.err
}
