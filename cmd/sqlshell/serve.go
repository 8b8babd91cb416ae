package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/strata-db/strata/server"
)

const serveUsage = `Usage: sqlshell serve [flags]

A MySQL-protocol server over the database folder. Accounts are MySQL's
(CREATE USER, GRANT) and are kept in the folder; the --user account is
created at the first start, and its password set whenever one is given.
SIGINT or SIGTERM stops it: running statements may finish for
--shutdown-timeout, open transactions are rolled back.

Flags:
  --data DIR                   the database folder (default $STRATA_DATA, else ./strata-data)
  --store tikv://PD:2379,.../?keyspace=NAME
                               keep the databases and accounts in a TiKV cluster
                               instead (--data keeps the files folder); several
                               servers may serve one cluster (docs/scale-out.md)
  --listen HOST:PORT           address to listen on (default 127.0.0.1:3306); a
                               non-loopback address needs a password
  --user NAME                  the administrator account (default root)
  --password PASSWORD          its password (default $STRATA_PASSWORD)
  --max-connections N          simultaneous connections (default 151)
  --idle-timeout DURATION      close connections idle this long (default 8h)
  --connect-timeout DURATION   close connections that have not logged in after
                               this long (default 10s)
  --write-timeout DURATION     close connections that take no result data for
                               this long (default 60s)
  --max-allowed-packet BYTES   largest statement or packet (default 64MiB)
  --tls-cert FILE, --tls-key FILE
                               PEM certificate and key: enables TLS
  --require-secure-transport   refuse clients that do not use TLS
  --shutdown-timeout DURATION  how long running statements may finish (default 10s)
  --sync=false                 do not sync the log at commit (faster, may lose
                               the last commits in a crash of the process
                               or the machine)
  --procs N                    run Go code on at most N threads at once
                               (GOMAXPROCS; default: the CPUs the process may
                               use). On a machine shared with other busy
                               programs, more than the CPUs (such as 8) gets
                               the server a share of them like that of a
                               server with a thread per connection
  --cpuprofile FILE            write a CPU profile of the server's run, from
                               start to stop, to FILE (go tool pprof FILE)

LOAD DATA INFILE, LOAD_FILE() and SELECT ... INTO OUTFILE need the FILE
privilege and only reach the folder DIR/files/sql (relative paths are taken
from it; symlinks out of it are refused).
`

// runServe is the serve subcommand.
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sqlshell serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, serveUsage) }
	cfg := server.Config{}
	fs.StringVar(&cfg.Data, "data", dataDefault(), "")
	fs.StringVar(&cfg.Store, "store", "", "")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:3306", "")
	fs.StringVar(&cfg.User, "user", "root", "")
	fs.StringVar(&cfg.Password, "password", os.Getenv("STRATA_PASSWORD"), "")
	fs.IntVar(&cfg.MaxConnections, "max-connections", 151, "")
	fs.DurationVar(&cfg.IdleTimeout, "idle-timeout", 8*time.Hour, "")
	fs.DurationVar(&cfg.ConnectTimeout, "connect-timeout", 10*time.Second, "")
	fs.DurationVar(&cfg.WriteTimeout, "write-timeout", 60*time.Second, "")
	fs.IntVar(&cfg.MaxAllowedPacket, "max-allowed-packet", 64<<20, "")
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "")
	fs.BoolVar(&cfg.RequireSecureTransport, "require-secure-transport", false, "")
	shutdownTimeout := fs.Duration("shutdown-timeout", 10*time.Second, "")
	sync := fs.Bool("sync", true, "")
	cpuProfile := fs.String("cpuprofile", "", "")
	procs := fs.Int("procs", 0, "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sqlshell serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	// Zero would mean the default in server.Config; here it is refused.
	if cfg.MaxConnections < 1 || cfg.MaxAllowedPacket < 1024 || cfg.IdleTimeout <= 0 || cfg.ConnectTimeout <= 0 || cfg.WriteTimeout <= 0 || *procs < 0 {
		fmt.Fprintln(stderr, "sqlshell serve: --max-connections must be at least 1, --max-allowed-packet at least 1024, the timeouts positive, --procs not negative")
		return exitUsage
	}
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	cfg.NoSync = !*sync
	logger := log.New(stderr, "", log.LstdFlags)
	cfg.Logger = logger

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "sqlshell serve: --cpuprofile: %v\n", err)
			return exitOpen
		}
		defer func() {
			if err := stopProfile(); err != nil {
				logger.Printf("--cpuprofile: %v", err)
			}
		}()
	}
	s, err := server.Start(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sqlshell serve: %s\n", serveFlagNames.Replace(err.Error()))
		if errors.Is(err, server.ErrConfig) {
			return exitUsage
		}
		return exitOpen
	}
	where := cfg.Data
	if cfg.Store != "" {
		where = cfg.Store
	}
	logger.Printf("serving %s on %s (user %s)", where, s.Addr(), cfg.User)
	<-ctx.Done()
	stop()
	logger.Printf("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), *shutdownTimeout)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		logger.Printf("shutdown: %v", err)
		return exitOpen
	}
	logger.Printf("stopped")
	return exitOK
}

// startCPUProfile starts writing the process's CPU profile to a new file
// at path, and returns the function that stops it and closes the file.
// The profile covers the server's whole run: under a load that lasts,
// it shows where the server's CPU goes per statement.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// serveFlagNames rewrites the server.Config fields Start's errors name as
// the flags that set them.
var serveFlagNames = strings.NewReplacer(
	"Config.Data", "--data",
	"Config.Listen", "--listen",
	"Config.User", "--user",
	"Config.Password", "--password or STRATA_PASSWORD",
	"Config.MaxConnections", "--max-connections",
	"Config.IdleTimeout", "--idle-timeout",
	"Config.ConnectTimeout", "--connect-timeout",
	"Config.WriteTimeout", "--write-timeout",
	"Config.MaxAllowedPacket", "--max-allowed-packet",
	"Config.TLSCert", "--tls-cert",
	"Config.TLSKey", "--tls-key",
	"Config.RequireSecureTransport", "--require-secure-transport",
)
