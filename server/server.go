package server

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
	gmsserver "github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	vtlog "github.com/dolthub/vitess/go/vt/log"
	"github.com/sirupsen/logrus"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/sqlstore"
)

// Config configures a server. The zero value of a number or a duration
// takes the default named with it, the one sqlshell serve takes. Start's
// errors name a setting by its sqlshell serve flag (--listen for Listen).
type Config struct {
	// Data is the database folder, created when missing. Accounts and
	// the files folder (Data/files/sql) are kept in it.
	Data string
	// Store, when set, is the tikv:// address of a TiKV cluster that holds
	// the databases and accounts instead of Data (package
	// sqlstore/tikvstore); Data then keeps only the files folder. Several
	// servers may serve one cluster.
	Store string
	// Listen is the TCP address, host:port (port 0 picks a free one).
	// An address that is not a loopback one needs the account to have
	// a password.
	Listen string
	// User is the administrator account, with every privilege: created
	// at the first start, its password set whenever Password is given.
	// It must not be empty.
	User string
	// Password is User's password; empty keeps the saved one.
	Password string
	// MaxConnections bounds simultaneous connections (default 151); one
	// more is let in for an account with SUPER or CONNECTION_ADMIN, the
	// rest get error 1040.
	MaxConnections int
	// IdleTimeout closes a connection whose client sends nothing this
	// long between statements (default 8h).
	IdleTimeout time.Duration
	// ConnectTimeout closes a connection that has not logged in after
	// this long (default 10s).
	ConnectTimeout time.Duration
	// WriteTimeout closes a connection whose client takes no result data
	// this long (default 60s).
	WriteTimeout time.Duration
	// MaxAllowedPacket is max_allowed_packet, the largest statement or
	// packet in bytes (default 64 MiB, at least 1024): a larger one
	// closes the connection with error 1153 before it is buffered.
	MaxAllowedPacket int
	// TLSCert and TLSKey are PEM files, both or neither; with them
	// clients may use TLS.
	TLSCert, TLSKey string
	// RequireSecureTransport refuses clients that do not use TLS; it
	// needs TLSCert and TLSKey.
	RequireSecureTransport bool
	// NoSync lets commits return before the log is synced: faster, and
	// the last commits may be lost in a crash of the process or machine.
	NoSync bool
	// Logger receives connection errors, one line each, and the store's
	// errors and recovery notices; nil discards them. The protocol
	// layer's log is process-wide: it goes to the latest server's Logger.
	Logger *log.Logger
}

// The defaults of Config's zero values.
const (
	defaultMaxConnections   = 151
	defaultIdleTimeout      = 8 * time.Hour
	defaultConnectTimeout   = 10 * time.Second
	defaultWriteTimeout     = 60 * time.Second
	defaultMaxAllowedPacket = 64 << 20
)

// ErrConfig matches (errors.Is) every error Start returns for a Config it
// refuses before it opens anything: a value out of range, a missing or
// malformed setting. Programs tell a mistake in their settings from a
// failure to open the store or listen by it.
var ErrConfig = errors.New("server: invalid configuration")

// configError is an error of ErrConfig's kind.
type configError struct {
	msg string
	err error // the cause, if any
}

func (e *configError) Error() string {
	if e.err != nil {
		return e.msg + ": " + e.err.Error()
	}
	return e.msg
}

func (e *configError) Unwrap() error        { return e.err }
func (e *configError) Is(target error) bool { return target == ErrConfig }

// withDefaults is cfg with its zero values replaced by the defaults, or
// an error for a value out of range.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = defaultMaxConnections
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = defaultIdleTimeout
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = defaultWriteTimeout
	}
	if cfg.MaxAllowedPacket == 0 {
		cfg.MaxAllowedPacket = defaultMaxAllowedPacket
	}
	switch {
	case cfg.MaxConnections < 1:
		return cfg, &configError{msg: "Config.MaxConnections must be at least 1"}
	case cfg.MaxAllowedPacket < 1024:
		return cfg, &configError{msg: "Config.MaxAllowedPacket must be at least 1024"}
	case cfg.IdleTimeout < 0:
		return cfg, &configError{msg: "Config.IdleTimeout must not be negative"}
	case cfg.ConnectTimeout < 0:
		return cfg, &configError{msg: "Config.ConnectTimeout must not be negative"}
	case cfg.WriteTimeout < 0:
		return cfg, &configError{msg: "Config.WriteTimeout must not be negative"}
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(io.Discard, "", 0)
	}
	return cfg, nil
}

// defaultDB is the database connections start in; Start creates it when
// missing.
const defaultDB = "main"

// filesDir is where LOAD DATA INFILE, LOAD_FILE and SELECT ... INTO
// OUTFILE may read and write, relative to the data folder
// (serverfiles.go checks every path against it).
var filesDir = filepath.Join("files", "sql")

// Server is a running server. Shutdown stops it and releases everything.
type Server struct {
	cfg   Config
	store *sqlstore.Store
	db    *kv.DB // the engine under store, for its metrics
	// abandonAfter: see the constant.
	abandonAfter time.Duration
	engine       *sqle.Engine
	gms          *gmsserver.Server
	ln           *limitListener
	h            *handler
	started      chan struct{} // closed when the accept loop returned
	once         sync.Once
	err          error
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

// Start opens (creating) the store in cfg.Data, turns accounts on, creates
// database main, listens on cfg.Listen and serves in a goroutine until
// Shutdown. The engine's system variables are process-wide: Start resets
// the globals the server owns, so servers of one process run one after
// the other, not side by side.
func Start(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	loop, err := isLoopback(cfg.Listen)
	if err != nil {
		return nil, &configError{msg: fmt.Sprintf("Config.Listen %q", cfg.Listen), err: err}
	}
	if cfg.User == "" {
		return nil, &configError{msg: "Config.User must not be empty"}
	}
	var tlsCfg *tls.Config
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, &configError{msg: "Config.TLSCert and Config.TLSKey go together"}
	}
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("loading the TLS key pair: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if cfg.RequireSecureTransport && tlsCfg == nil {
		return nil, &configError{msg: "Config.RequireSecureTransport needs Config.TLSCert and Config.TLSKey"}
	}
	routeLogs(cfg.Logger)

	st, db, err := openStore(cfg.Data, cfg.Store, cfg.NoSync, cfg.Logger)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, store: st, db: db, engine: st.NewEngine(), started: make(chan struct{}), abandonAfter: abandonAfter}
	// Before the protocol server is made: its session manager keeps the
	// engine's list.
	s.engine.ProcessList = newProcessList()
	fail := func(err error) (*Server, error) {
		_ = st.CloseEngine(s.engine)
		return nil, err
	}
	if err := s.setupUsers(loop); err != nil {
		return fail(err)
	}
	if err := s.setupVariables(); err != nil {
		return fail(err)
	}
	// mysql.general_log and mysql.slow_log for dump tools (logtables.go).
	s.engine.Parser = logTablesParser{Parser: s.engine.Parser, db: s.engine.Analyzer.Catalog.MySQLDb}
	if err := s.createDatabase(defaultDB); err != nil {
		return fail(fmt.Errorf("creating database %s: %w", defaultDB, err))
	}

	nl, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fail(err)
	}
	s.ln = newLimitListener(nl, cfg.MaxConnections, cfg.MaxAllowedPacket, cfg.Logger)
	s.ln.connectTimeout = cfg.ConnectTimeout
	gcfg := gmsserver.Config{
		Protocol: "tcp",
		Address:  nl.Addr().String(),
		Listener: s.ln,
		Version:  sqlstore.ServerVersion,
		// No ConnReadTimeout for the engine: its protocol handler also
		// takes it as the longest wait for a statement's next row, and
		// fails slower statements. The idle timeout is the protocol
		// layer's alone (lc.ConnReadTimeout below).
		ConnWriteTimeout:       cfg.WriteTimeout,
		TLSConfig:              tlsCfg,
		RequireSecureTransport: cfg.RequireSecureTransport,
		ProtocolListenerFactory: func(_ gmsserver.Config, lc mysql.ListenerConfig, _ gmsserver.ServerEventListener) (gmsserver.ProtocolListener, error) {
			lc.MaxConns = 0 // the limitListener refuses with an error instead
			// Every read from the client must come within the idle
			// timeout. Between commands that is the wait for the next
			// one; while a statement runs nothing is read (a hang-up is
			// watched for without reading, see watchPeer), so however
			// long it takes, it is not idle time.
			lc.ConnReadTimeout = cfg.IdleTimeout
			lc.AuthServer = authServer{AuthServer: lc.AuthServer, requireTLS: cfg.RequireSecureTransport, db: s.engine.Analyzer.Catalog.MySQLDb, log: cfg.Logger}
			l, err := mysql.NewListenerWithConfig(lc)
			if err != nil {
				return nil, err
			}
			l.ServerVersion = sqlstore.ServerVersion
			l.TLSConfig = tlsCfg
			l.RequireSecureTransport = cfg.RequireSecureTransport
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
		s.h.track(c, sess)
		// The engine names a connection's account in its process list
		// only when the client chose a database at login; KILL's owner
		// check and SHOW PROCESSLIST need it for every connection.
		listProcess(s.engine, c, sess)
		return sess, nil
	}
	wrap := func(h mysql.Handler) (mysql.Handler, error) {
		gh, ok := h.(*gmsserver.Handler)
		if !ok {
			return nil, fmt.Errorf("unexpected protocol handler %T", h)
		}
		s.h = newHandler(gh, st, s.engine.Parser, cfg.MaxAllowedPacket)
		s.h.engine = s.engine
		s.h.prepared = newPreparedLimit(s.engine)
		s.h.users = s.engine.Analyzer.Catalog.MySQLDb
		s.h.watch = newPeerWatcher(func(id uint32) { s.engine.ProcessList.Kill(id) }, peerPollInterval)
		return s.h, nil
	}
	s.gms, err = gmsserver.NewServerWithHandler(gcfg, s.engine, sqlstore.NewContext, builder, nil, wrap)
	if err != nil {
		_ = nl.Close()
		if s.h != nil {
			s.h.watch.close()
		}
		return fail(err)
	}
	s.h.direct, s.h.sm = st.WrapEngine(s.engine), s.gms.SessionManager()
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
func (s *Server) setupUsers(loopback bool) error {
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
	u, ok := ed.GetUser(mysql_db.UserPrimaryKey{Host: "%", User: s.cfg.User})
	switch {
	case !ok:
		db.AddSuperUser(ed, s.cfg.User, "%", s.cfg.Password)
		u, _ = ed.GetUser(mysql_db.UserPrimaryKey{Host: "%", User: s.cfg.User})
	case s.cfg.Password != "" && u.AuthString != nativeHash(s.cfg.Password):
		c := *u
		c.AuthString = nativeHash(s.cfg.Password)
		c.Plugin = string(mysql.MysqlNativePassword)
		c.PasswordLastChanged = time.Now().UTC()
		ed.RemoveUser(mysql_db.UserPrimaryKey{Host: c.Host, User: c.User}) // PutUser adds, it does not replace
		ed.PutUser(&c)
		u = &c
	}
	if u == nil {
		return fmt.Errorf("creating the account %s", s.cfg.User)
	}
	if !loopback && u.AuthString == "" {
		return &configError{msg: fmt.Sprintf("refusing to listen on %s: account %s has no password (set Config.Password)", s.cfg.Listen, s.cfg.User)}
	}
	if err := db.Persist(ctx, ed); err != nil {
		return fmt.Errorf("saving the accounts: %w", err)
	}
	return nil
}

// setupVariables confines server-side file access to the files folder
// (serverfiles.go), gives the globals the server's values (globals.go)
// and installs the privilege checks the engine lacks (privileges.go).
func (s *Server) setupVariables() error {
	dir, err := filepath.Abs(filepath.Join(s.cfg.Data, filesDir))
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
	// Redefined rather than assigned: assigning stores a uint64 where the
	// engine reads the int64 of the variable's default.
	v, _, ok := gsql.SystemVariables.GetGlobal("max_allowed_packet")
	mv, isMySQL := v.(*gsql.MysqlSystemVariable)
	if !ok || !isMySQL {
		return errors.New("the engine has no max_allowed_packet variable")
	}
	c := *mv
	c.Default = int64(s.cfg.MaxAllowedPacket)
	gsql.SystemVariables.AddSystemVariables([]gsql.SystemVariable{&c})
	if err := s.resetGlobals(); err != nil {
		return err
	}
	s.setupPolicy(dir)
	s.processListStates()
	return nil
}

// Addr is the address the server listens on, with the port it was given
// when Listen asked for port 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// abandonAfter is how long Shutdown waits, once ctx is done and the
// running statements are cancelled and their connections closed, for the
// statements to return (Server.abandonAfter, which tests shorten).
const abandonAfter = 5 * time.Second

// ErrStatementsRunning is Shutdown's error when statements went on after
// they were cancelled and their connections closed (a function that never
// looks at its context): the store is left open, since closing it under a
// running statement is not safe. Its log brings back every acknowledged
// commit at the next open, as after a crash of the process.
var ErrStatementsRunning = errors.New("server: statements still running after shutdown cancelled them; the store was not closed")

// Shutdown stops accepting connections, lets running statements finish
// until ctx is done (then cancels them), closes every connection (which
// rolls back open transactions) and closes the engine and the store. A
// statement that does not stop within abandonAfter of its cancellation
// makes it return ErrStatementsRunning instead of waiting for ever.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() {
		_ = s.gms.Close()
		<-s.started
		defer s.h.watch.close()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		cancelled := false
	wait:
		for !s.h.idle() {
			select {
			case <-ctx.Done():
				for _, p := range s.engine.ProcessList.Processes() {
					s.engine.ProcessList.Kill(p.Connection)
				}
				cancelled = true
				break wait
			case <-tick.C:
			}
		}
		s.ln.closeAll()
		if !cancelled {
			s.h.waitConnsClosed()
		} else if !s.h.waitConnsClosedFor(s.abandonAfter) {
			s.err = ErrStatementsRunning
			return
		}
		s.err = s.store.CloseEngine(s.engine)
	})
	return s.err
}
