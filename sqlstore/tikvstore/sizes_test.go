package tikvstore

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/storage/tikv"
	tikvclient "github.com/tikv/client-go/v2/tikv"
)

// tablePD plays PD's HTTP API with a region per primary index of each of
// the first table IDs (the SQL layer's keys 0x02, the table ID, 0x01),
// each of rows keys and 1 MiB, and empty regions between them.
func tablePD(rows int64) http.Handler {
	codec := tikvclient.NewCodecV1(tikvclient.ModeTxn)
	type region struct {
		StartKey        string `json:"start_key"`
		EndKey          string `json:"end_key"`
		ApproximateSize int64  `json:"approximate_size"`
		ApproximateKeys int64  `json:"approximate_keys"`
	}
	var splits [][]byte
	for id := byte(1); id < 0xf0; id++ {
		splits = append(splits, []byte{0x02, id, 0x01}, []byte{0x02, id, 0x02})
	}
	enc := func(k []byte) string {
		if k == nil {
			return ""
		}
		return strings.ToUpper(hex.EncodeToString(codec.EncodeRegionKey(k)))
	}
	var all []region
	for i := 0; i <= len(splits); i++ {
		var lo, hi []byte
		if i > 0 {
			lo = splits[i-1]
		}
		if i < len(splits) {
			hi = splits[i]
		}
		r := region{StartKey: enc(lo), EndKey: enc(hi)}
		if i%2 == 1 { // [0x02 id 0x01, 0x02 id 0x02)
			r.ApproximateSize, r.ApproximateKeys = 1, rows
		}
		all = append(all, r)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		key, end := req.URL.Query().Get("key"), req.URL.Query().Get("end_key")
		var out struct {
			Count   int      `json:"count"`
			Regions []region `json:"regions"`
		}
		for _, r := range all {
			lo, _ := hex.DecodeString(r.StartKey)
			hi, _ := hex.DecodeString(r.EndKey)
			if (len(hi) > 0 && bytes.Compare(hi, []byte(key)) <= 0) || (end != "" && bytes.Compare(lo, []byte(end)) >= 0) {
				continue
			}
			out.Regions = append(out.Regions, r)
		}
		out.Count = len(out.Regions)
		_ = json.NewEncoder(w).Encode(&out)
	})
}

// TestPlannerSizesFromPD checks that a process that has not counted a
// table plans it with PD's region sizes, and without them (the mock's PD)
// as a table of unknown size: EXPLAIN's rows.
func TestPlannerSizesFromPD(t *testing.T) {
	srv := httptest.NewServer(tablePD(5000))
	defer srv.Close()
	m, err := tikv.NewMock(splitKeys(4)...)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	open := func(pdHTTP string) *sqlstore.Conn {
		m.PDHTTP = pdHTTP
		e, err := m.Open()
		if err != nil {
			t.Fatal(err)
		}
		st, err := OpenOn(e, nil)
		if err != nil {
			t.Fatal(err)
		}
		eng := st.OpenEngine()
		c := eng.NewConn()
		t.Cleanup(func() {
			c.Close()
			eng.Close()
		})
		return c
	}
	a := open("")
	exec(t, a, "CREATE DATABASE app")
	exec(t, a, "USE app")
	exec(t, a, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
	exec(t, a, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")

	rows := func(c *sqlstore.Conn) string {
		t.Helper()
		// id | select_type | table | partitions | type | possible_keys |
		// key | key_len | ref | rows | ...
		r, err := c.Query(context.Background(), "EXPLAIN SELECT * FROM app.t")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		vals, err := r.Next()
		if err != nil || len(vals) < 10 {
			t.Fatalf("EXPLAIN: %v %v", vals, err)
		}
		return fmt.Sprint(vals[9])
	}
	if got := rows(open(srv.URL)); got != "5000" {
		t.Errorf("rows with PD's sizes: %s; want 5000", got)
	}
	if got := rows(open("")); got != "1" {
		t.Errorf("rows without PD's sizes: %s; want 1 (unknown)", got)
	}
	// A counted table is planned with its count.
	c := open(srv.URL)
	if got := query(t, c, "SELECT COUNT(*) FROM app.t"); got != "[3]" {
		t.Fatalf("COUNT(*): %s", got)
	}
	if got := rows(c); got != "3" {
		t.Errorf("rows once counted: %s; want 3", got)
	}
}
