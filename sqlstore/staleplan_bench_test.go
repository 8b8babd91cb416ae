package sqlstore

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkStaleCheckStart is what the stale-plan checks add to a
// statement's start: a point select through a Conn autocommitting, and a
// transaction of two point selects (its first read is where a stale plan
// can be run again: the statement start compares the snapshot with the
// catalog version, the first row is read before Query returns).
//
//	go test ./sqlstore -run '^$' -bench StaleCheckStart -benchmem
func BenchmarkStaleCheckStart(b *testing.B) {
	ctx := context.Background()
	d := benchDB(b, 1000)
	e := d.s.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()
	if err := c.UseDatabase(ctx, "mydb"); err != nil {
		b.Fatal(err)
	}
	n := 0
	sel := func() error {
		n++
		rows, err := c.Query(ctx, "SELECT v FROM b WHERE id = "+strconv.Itoa(n*7919%1000))
		if err != nil {
			return err
		}
		for {
			if _, err := rows.Next(); err != nil {
				break
			}
		}
		return rows.Close()
	}
	exec := func(q string) error {
		_, err := c.Exec(ctx, q)
		return err
	}
	for _, bc := range []struct {
		name string
		op   func() error
	}{
		{"point_select", sel},
		{"txn_two_selects", func() error {
			for _, f := range []func() error{func() error { return exec("BEGIN") }, sel, sel, func() error { return exec("COMMIT") }} {
				if err := f(); err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRenewStale is the statement start's check of a transaction's
// snapshot against the catalog (renewStale) when no DDL committed since:
// the snapshot's version against the catalog's, one atomic load.
func BenchmarkRenewStale(b *testing.B) {
	d := benchDB(b, 10)
	ctx := d.newCtx()
	if _, err := lq(d, ctx, "START TRANSACTION"); err != nil {
		b.Fatal(err)
	}
	tx, err := d.s.writer(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := tx.renewStale(); err != nil {
			b.Fatal(err)
		}
	}
}
