package sqlstore

import (
	"strings"
	"testing"
)

func TestRemoteScheme(t *testing.T) {
	for addr, want := range map[string]string{
		"tikv://pd1:2379/?keyspace=a": "tikv",
		"tikv://mock":                 "tikv",
		"foo://x":                     "foo",
		"/data/x":                     "",
		"file:///data/x":              "",
		"file:/data/x":                "",
		"./a://b":                     "",
		"data/x?db=a://b":             "",
	} {
		got, ok := RemoteScheme(addr)
		if got != want || ok != (want != "") {
			t.Errorf("RemoteScheme(%q) = %q, %t; want %q", addr, got, ok, want)
		}
	}
}

// TestRemoteNotLinked: an address of a backend this package does not link
// (sqlstore's tests import no backend) is refused, naming the import that
// adds it; an unknown scheme is refused as such.
func TestRemoteNotLinked(t *testing.T) {
	_, err := OpenRemote("tikv://mock")
	if err == nil || !strings.Contains(err.Error(), `import _ "github.com/strata-db/strata/sqlstore/tikvstore"`) {
		t.Fatalf("OpenRemote(tikv://mock) = %v", err)
	}
	if err := CheckRemote("nosuch://x"); err == nil || !strings.Contains(err.Error(), "no backend for nosuch://") {
		t.Fatalf("CheckRemote(nosuch://x) = %v", err)
	}
}
