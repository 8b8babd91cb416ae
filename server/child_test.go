package server

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"

	"github.com/strata-db/strata/server/servertest"
)

// childEnv makes the test binary serve instead of testing: tests start it
// as a child process for what would end the test process, such as a stack
// overflow, which no recover catches.
const childEnv = "STRATA_SERVER_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(serveChild(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// serveChild serves --data with --password on a free loopback port until
// SIGINT or SIGTERM, logging to stderr as sqlshell serve does.
func serveChild(args []string) int {
	fs := flag.NewFlagSet("child", flag.ContinueOnError)
	data := fs.String("data", "", "")
	password := fs.String("password", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logger := log.New(os.Stderr, "", log.LstdFlags)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := Start(Config{Data: *data, Listen: "127.0.0.1:0", User: "root", Password: *password, Logger: logger})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	logger.Printf("serving %s on %s (user root)", *data, s.Addr())
	<-ctx.Done()
	if err := s.Shutdown(context.Background()); err != nil {
		logger.Printf("shutdown: %v", err)
		return 3
	}
	logger.Printf("stopped")
	return 0
}

// startChild starts a server as a child process with args (--data,
// --password) and waits for the line that says where it listens.
func startChild(t *testing.T, args ...string) *servertest.Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return servertest.StartChild(t, cmd)
}
