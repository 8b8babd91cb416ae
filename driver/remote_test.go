package driver_test

import (
	"os/exec"
	"strings"
	"testing"

	// The TiKV DSNs of these tests need the backend linked in, as a
	// program using them would.
	_ "github.com/strata-db/strata/sqlstore/tikvstore"
)

// TestDriverLinksNoRemoteBackend: a program importing only the driver does
// not link TiKV's client (client-go, its grpc stack); it opts in by
// importing sqlstore/tikvstore.
func TestDriverLinksNoRemoteBackend(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the driver's dependencies")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/strata-db/strata/driver").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/tikv/") || strings.HasSuffix(pkg, "/sqlstore/tikvstore") {
			t.Errorf("the driver links %s", pkg)
		}
	}
}
